package codex

import (
	"strings"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// internalServerError is how Codex words an HTTP 500 from the model
// (CodexErr::InternalServerError in codex-rs, raised for status 500 only;
// the same text in 0.169's binary). The status is not on the line, but the
// wording stands for it exactly, so it is reported as a server error with
// http_status 500 rather than by its words ("high demand" reads as
// overload).
const internalServerError = "currently experiencing high demand, which may cause temporary errors"

// AgentError is the error event of a message Codex reported, with its
// class and, where the message names one, the HTTP status: the one rule
// for its CLI and its ACP adapter (codex-acp 2 sends the message as text).
func AgentError(msg string) *event.Error { return agentError(msg) }

// agentError is the error event of a message Codex reported, with its
// class and, where the message names one, the HTTP status.
func agentError(msg string) *event.Error {
	e := &event.Error{Code: event.ErrAgentError, Message: msg}
	switch {
	case strings.Contains(msg, internalServerError):
		e.Status = 500
	default:
		e.Status = httpStatus(msg)
	}
	if e.Status != 0 {
		e.Class = adapters.ClassifyStatus(e.Status)
	}
	if e.Class == "" {
		e.Class = adapters.ClassifyError(msg)
	}
	return e
}

// httpStatus finds the status in Codex's own renderings of an HTTP
// failure, "unexpected status 502 Bad Gateway: …" (UnexpectedResponseError)
// and "exceeded retry limit, last status: 429 …" (RetryLimitReachedError),
// or 0.
func httpStatus(msg string) int {
	for _, marker := range [...]string{"unexpected status ", "last status: "} {
		i := strings.Index(msg, marker)
		if i < 0 {
			continue
		}
		rest := msg[i+len(marker):]
		if len(rest) >= 3 && isDigit(rest[0]) && isDigit(rest[1]) && isDigit(rest[2]) && (len(rest) == 3 || !isDigit(rest[3])) {
			code := int(rest[0]-'0')*100 + int(rest[1]-'0')*10 + int(rest[2]-'0')
			if code >= 100 {
				return code
			}
		}
	}
	return 0
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }
