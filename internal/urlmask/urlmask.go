// Package urlmask masks the credentials of a URL that harness shows (in
// an error, a warning or a table): the one rule for an OTLP endpoint, a
// models URL, whatever the user may have put a key in.
package urlmask

import "strings"

// Mask is u as harness may show it: a user and password in it are
// "***", and so is each query value, where some collectors and servers
// take a key (?api_key=…, ?token=…); a query entry without "=" is "***"
// whole (it may be a bare key). A fragment, which may hold a token too
// (#access_token=…), is "#***", with or without a query. Query keys, the
// scheme, host and path stay, so the message still says where. u need
// not parse as a URL: the user info runs to the last "@" anywhere, since
// a password need not be valid in a URL (a "/" in it ends the authority
// early), and when a "?" or "#" comes before that "@" it may be a
// password's or a query's or fragment's (whose "@" it then is), so all
// after the scheme is masked. Mask("") is "".
func Mask(u string) string {
	start := 0
	if i := strings.Index(u, "://"); i >= 0 {
		start = i + 3
	}
	if at := strings.LastIndexByte(u, '@'); at >= start {
		if strings.ContainsAny(u[start:at], "?#") {
			return u[:start] + "***"
		}
		u = u[:start] + "***@" + u[at+1:]
	}
	// The first "#" starts the fragment: a query cannot hold one.
	u, frag, hasFrag := strings.Cut(u, "#")
	u = maskQuery(u)
	switch {
	case frag != "":
		u += "#***"
	case hasFrag:
		u += "#"
	}
	return u
}

// maskQuery is u, which has no fragment, with each query value "***".
func maskQuery(u string) string {
	base, query, ok := strings.Cut(u, "?")
	if !ok {
		return u
	}
	parts := strings.Split(query, "&")
	for i, p := range parts {
		if k, _, ok := strings.Cut(p, "="); ok {
			parts[i] = k + "=***"
		} else if p != "" {
			parts[i] = "***"
		}
	}
	return base + "?" + strings.Join(parts, "&")
}
