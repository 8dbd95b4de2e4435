package adapters

import (
	"regexp"
	"strings"

	"github.com/agentharness/harness/event"
)

// classRules map what agents and APIs say to an error class. Order matters:
// the first match wins, so the most specific come first.
var classRules = []struct {
	class string
	re    *regexp.Regexp
}{
	{event.ClassContextOverflow, regexp.MustCompile(`(?i)context[ _-]?(window|length)|prompt is too long|too many tokens|maximum context|context_overflow|context_length_exceeded`)},
	{event.ClassAuth, regexp.MustCompile(`(?i)\b(401|403)\b|unauthori[sz]ed|authenticat|invalid[ _-]?api[ _-]?key|api key|auth method|not logged in|permission_error|forbidden|credit balance|billing`)},
	{event.ClassRateLimit, regexp.MustCompile(`(?i)\b429\b|rate[ _-]?limit|too many requests|quota|resource_exhausted`)},
	{event.ClassOverloaded, regexp.MustCompile(`(?i)\b(529|503)\b|overloaded|at capacity|high demand|unavailable`)},
	{event.ClassBadRequest, regexp.MustCompile(`(?i)\b(400|404|422)\b|bad request|invalid_request|invalid request|not found|unknown model|unsupported`)},
	{event.ClassNetwork, regexp.MustCompile(`(?i)econnrefused|econnreset|etimedout|enotfound|connection (refused|reset|closed)|network|socket|stream disconnected|timed out|timeout|broken pipe|dns`)},
	{event.ClassCrash, regexp.MustCompile(`(?i)\b500\b|internal server error|server_error|panic|segmentation fault|uncaught|stack trace|fatal error`)},
}

// ClassifyError returns the error class that text (an agent's error message)
// makes clear, or "" when none does.
func ClassifyError(text string) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	for _, r := range classRules {
		if r.re.MatchString(text) {
			return r.class
		}
	}
	return ""
}

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
	case code >= 500:
		return event.ClassCrash
	}
	return ""
}
