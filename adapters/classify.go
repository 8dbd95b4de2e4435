package adapters

import (
	"strings"

	"github.com/agentharness/harness/event"
)

// classRules map what agents and APIs say to an error class. The first
// rule with a match wins, so the most specific come first. Matching is on
// lowercased text with plain substring search (this runs on every error
// line); codes are matched as whole numbers.
var classRules = []struct {
	class string
	codes []string
	words []string
}{
	{event.ClassContextOverflow, []string{"413"}, []string{"context window", "context length", "context_length", "context-length",
		"prompt is too long", "too many tokens", "maximum context", "context_overflow"}},
	{event.ClassAuth, []string{"401", "403"}, []string{"unauthorized", "unauthorised", "authenticat", "invalid api key", "invalid_api_key",
		"invalid x-api-key", "api key", "auth method", "not logged in", "permission_error", "forbidden", "credit balance", "billing", "/login"}},
	{event.ClassRateLimit, []string{"429"}, []string{"rate limit", "rate_limit", "ratelimit", "rate-limit", "too many requests", "quota", "resource_exhausted"}},
	{event.ClassOverloaded, []string{"529", "503"}, []string{"overloaded", "at capacity", "high demand", "unavailable"}},
	{event.ClassBadRequest, []string{"400", "404", "422"}, []string{"bad request", "invalid_request", "invalid request", "not found",
		"unknown model", "unsupported"}},
	// Any other 5xx is the model's server failing, as ClassifyStatus says
	// (docs/events.md): one rule for every agent and both transports.
	{event.ClassServerError, []string{"500", "502", "504"}, []string{"internal server error", "internal_server_error", "server_error",
		"bad gateway", "gateway timeout"}},
	{event.ClassNetwork, nil, []string{"connection refused", "connection reset",
		"connection closed", "network", "socket", "stream disconnected", "timed out", "timeout", "broken pipe", "dns"}},
	{event.ClassCrash, nil, []string{"panic", "segmentation fault", "segmentation violation", "sigsegv", "uncaught", "stack trace",
		"fatal error", "traceback (most recent call last)"}},
}

// errnoNames are the network rule's errno names, matched as whole words:
// Python's FileNotFoundError holds "enotfound", and its crash was read as
// the network's.
var errnoNames = []string{"econnrefused", "econnreset", "etimedout", "enotfound"}

// ClassifyError returns the error class that text (an agent's error message)
// makes clear, or "" when none does: that of the first rule with a match.
func ClassifyError(text string) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	lower := strings.ToLower(text)
	// The first rule one of whose words occurs, found in one pass over
	// lower (wordIndex): a search of the whole text for each of the
	// rules' 70 words and names cost 1.2 µs a message, 2 % of a gemini
	// parse, whose stream reports errors as it goes.
	first := len(classRules)
	for i := 0; i+1 < len(lower) && first > 0; i++ {
		if !wordIndex.mayStart(lower[i], lower[i+1]) {
			continue
		}
		for _, w := range wordIndex.starting[lower[i]] {
			if w.rule < first && strings.HasPrefix(lower[i:], w.word) && (!w.whole || wordAt(lower, i, len(w.word))) {
				first = w.rule
			}
		}
	}
	// An earlier rule may still match by its codes, numbers a text
	// without digits (most) does not hold.
	if strings.ContainsAny(lower, "0123456789") {
		for _, r := range classRules[:first] {
			for _, c := range r.codes {
				if containsNumber(lower, c) {
					return r.class
				}
			}
		}
	}
	if first < len(classRules) {
		return classRules[first].class
	}
	return ""
}

// wordIndex finds the rules' words and errno names by their first two
// bytes.
var wordIndex = newWordStarts()

// wordStarts indexes words by their first two bytes (every one has two or
// more): a bit for each pair some word starts with, and the words by
// their first byte.
type wordStarts struct {
	pairs    [1 << 16 / 64]uint64
	starting [256][]ruleWord
}

// ruleWord is a word of classRules[rule]; whole: an errno name, which
// matches as a word of its own only.
type ruleWord struct {
	rule  int
	word  string
	whole bool
}

func newWordStarts() *wordStarts {
	x := &wordStarts{}
	add := func(w ruleWord) {
		p := pairOf(w.word[0], w.word[1])
		x.pairs[p/64] |= 1 << (p % 64)
		x.starting[w.word[0]] = append(x.starting[w.word[0]], w)
	}
	for ri, r := range classRules {
		for _, w := range r.words {
			add(ruleWord{rule: ri, word: w})
		}
		if r.class == event.ClassNetwork {
			for _, e := range errnoNames {
				add(ruleWord{rule: ri, word: e, whole: true})
			}
		}
	}
	return x
}

// mayStart reports whether a word starts with the bytes a, b.
func (x *wordStarts) mayStart(a, b byte) bool {
	p := pairOf(a, b)
	return x.pairs[p/64]&(1<<(p%64)) != 0
}

func pairOf(a, b byte) uint16 { return uint16(a)<<8 | uint16(b) }

// containsNumber reports whether n occurs in s as a whole number, not as
// part of a longer one or of a word ("500" in "HTTP 500", not in "15000"
// nor in the address "0x500"), nor as a line number ("cli.js:429:17",
// "main.go:429": a crash's stack trace made a rate limit of it).
func containsNumber(s, n string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], n)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(n)
		lineNumber := j >= 2 && s[j-1] == ':' && isWordByte(s[j-2])
		joinedBefore := j > 0 && (isWordByte(s[j-1]) || s[j-1] == '.')
		joinedAfter := end < len(s) && (isWordByte(s[end]) || s[end] == '.' && end+1 < len(s) && isDigit(s[end+1]))
		if !joinedBefore && !joinedAfter && !lineNumber {
			return true
		}
		i = j + 1
	}
}

// wordAt reports whether the n bytes of s at i are a word of their own,
// not joined to letters, digits or '_' on either side.
func wordAt(s string, i, n int) bool {
	return (i == 0 || !isWordByte(s[i-1])) && (i+n == len(s) || !isWordByte(s[i+n]))
}

// isWordByte tells the bytes a number in a word or a name is joined to:
// letters (lowercase: the text is), digits and '_'.
func isWordByte(b byte) bool { return isDigit(b) || b >= 'a' && b <= 'z' || b == '_' }

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// ClassifyStatus returns the error class of an HTTP status code, or "".
func ClassifyStatus(code int) string {
	switch {
	case code == 401 || code == 403:
		return event.ClassAuth
	case code == 429:
		return event.ClassRateLimit
	case code == 529 || code == 503:
		return event.ClassOverloaded
	case code == 413:
		return event.ClassContextOverflow
	case code >= 400 && code < 500:
		return event.ClassBadRequest
	case code >= 500 && code < 600:
		return event.ClassServerError // the model's server failed (docs/events.md)
	}
	return ""
}

// statusMarkers are the words agents put right before the HTTP status of
// a failed model call ("API Error: 500 …", "status 503", "\"code\":429").
var statusMarkers = [...]string{"api error: ", "status code ", "status: ", "status ", `"code":`, `"code": `, "http "}

// HTTPStatus returns the HTTP status (400–599) an error message states
// right after one of the usual markers, or 0 when it states none.
func HTTPStatus(text string) int {
	lower := strings.ToLower(text)
	for _, m := range statusMarkers {
		for i := 0; ; {
			j := strings.Index(lower[i:], m)
			if j < 0 {
				break
			}
			rest := lower[i+j+len(m):]
			i += j + len(m)
			if len(rest) < 3 || (len(rest) > 3 && isDigit(rest[3])) {
				continue
			}
			if !isDigit(rest[0]) || !isDigit(rest[1]) || !isDigit(rest[2]) {
				continue
			}
			code := int(rest[0]-'0')*100 + int(rest[1]-'0')*10 + int(rest[2]-'0')
			if code >= 400 && code < 600 {
				return code
			}
		}
	}
	return 0
}
