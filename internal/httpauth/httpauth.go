// Package httpauth reads the credentials of a request to harness's HTTP
// servers (harness serve, harness mcp --listen), so that both take them
// the same way.
package httpauth

import "strings"

// Bearer returns the token of an Authorization header of the Bearer
// scheme, whose name is matched in any case (RFC 7235: a client sending
// "bearer" was refused), spaces before the token allowed; false for any
// other header.
func Bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimLeft(token, " "), true
}
