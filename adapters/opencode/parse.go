package opencode

import (
	"bytes"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/event"
)

// parser holds one run's state.
//
// OpenCode has no init and no result event: the run's session is the
// sessionID of the first line, each step_start/step_finish pair is one model
// call, and the step that finishes with reason "stop" is the last one (newer
// builds also print done when the session goes idle).
//
// Parts of other sessions — sub-agents started by the task tool, which
// older builds printed too — are skipped whole: their text is not the run's
// answer, and their usage is not the run's own step accounting. The task
// call itself, with the sub-agent's answer as output, is in the run's
// session.
type parser struct {
	session  string          // the run's session id
	steps    int             // step_start lines seen
	stepText strings.Builder // text parts of the current step
	terminal bool            // a Result was emitted
}

func newParser() *parser { return &parser{} }

// line holds the members of a line the parser reads, collected in one pass
// over the line and one over its part with jsonscan (gjson's Get would scan
// again for each, and its ForEach parses every value it passes). As with
// ForEach, the last of duplicate keys wins.
type line struct {
	typ, sessionID string
	err            gjson.Result
	part           part
}

type part struct {
	sessionID, text, callID, id, tool, reason string
	cost                                      float64
	state                                     string // raw JSON
	tokens                                    gjson.Result
}

// readLine reads the line s, which must be a string the parser may keep
// pieces of (a copy of the line).
func readLine(s string) line {
	var l line
	jsonscan.Each(s, func(k, v string) bool {
		switch k {
		case "type":
			l.typ = jsonscan.Str(v)
		case "sessionID":
			l.sessionID = jsonscan.Str(v)
		case "error":
			l.err = gjson.Parse(v)
		case "part":
			l.part = readPart(v)
		}
		return true
	})
	return l
}

func readPart(v string) part {
	var p part
	if !jsonscan.IsObject(v) {
		// gjson's ForEach hands a non-object to its callback once, with
		// no key: nothing matches.
		return p
	}
	jsonscan.Each(v, func(k, v string) bool {
		switch k {
		case "sessionID":
			p.sessionID = jsonscan.Str(v)
		case "text":
			p.text = jsonscan.Str(v)
		case "callID":
			p.callID = jsonscan.Str(v)
		case "id":
			p.id = jsonscan.Str(v)
		case "tool":
			p.tool = jsonscan.Str(v)
		case "reason":
			p.reason = jsonscan.Str(v)
		case "cost":
			p.cost = gjson.Parse(v).Float()
		case "state":
			p.state = v
		case "tokens":
			p.tokens = gjson.Parse(v)
		}
		return true
	})
	return p
}

// Parse implements adapters.Parser.
func (p *parser) Parse(dst []event.Body, raw []byte) ([]event.Body, bool) {
	trimmed := bytes.TrimSpace(raw)
	// Not validated whole (that would cost a second pass): gjson reads
	// malformed input without failing, and a line cut short does not end
	// with its closing brace.
	if len(trimmed) < 2 || trimmed[0] != '{' || trimmed[len(trimmed)-1] != '}' {
		return dst, false
	}
	// One copy of the line, which the bodies may keep pieces of.
	l := readLine(string(trimmed))
	switch l.typ {
	case "step_start", "step_finish", "text", "reasoning", "tool_use", "error", "done":
	default:
		return dst, false
	}
	if p.session == "" && l.sessionID != "" {
		p.session = l.sessionID
		dst = append(dst, &event.SessionStart{SessionID: l.sessionID})
	}
	part := &l.part
	if part.sessionID != "" && p.session != "" && part.sessionID != p.session {
		return dst, true // a sub-agent's part
	}
	switch l.typ {
	case "step_start":
		p.steps++
		p.stepText.Reset()
	case "text":
		if part.text == "" {
			return dst, true
		}
		if p.stepText.Len() > 0 {
			p.stepText.WriteString("\n\n")
		}
		p.stepText.WriteString(part.text)
		dst = append(dst, &event.Message{Role: event.RoleAssistant, Text: part.text})
	case "reasoning":
		if part.text != "" {
			dst = append(dst, &event.Reasoning{Text: part.text})
		}
	case "tool_use":
		dst = toolUse(dst, part)
	case "step_finish":
		dst = p.stepFinish(dst, part)
	case "error":
		dst = p.agentError(dst, l.err)
	case "done":
		if !p.terminal {
			p.terminal = true
			dst = append(dst, &event.Result{Status: event.ResultSuccess, Text: p.stepText.String(),
				SessionID: p.session, NumTurns: p.steps})
		}
	}
	return dst, true
}

// Flush implements adapters.Parser; OpenCode's parts arrive whole, so
// nothing is held back.
func (p *parser) Flush(dst []event.Body) []event.Body { return dst }

func (p *parser) stepFinish(dst []event.Body, part *part) []event.Body {
	tok := part.tokens
	reasoning := tok.Get("reasoning").Int()
	u := &event.Usage{
		// OpenCode's input already excludes the cached part: its getUsage
		// subtracts cache reads and writes for providers that include them.
		InputTokens: tok.Get("input").Int(),
		// Its output is net of reasoning, which it prices separately.
		OutputTokens:     tok.Get("output").Int() + reasoning,
		ReasoningTokens:  reasoning,
		CacheReadTokens:  tok.Get("cache.read").Int(),
		CacheWriteTokens: tok.Get("cache.write").Int(),
		CostUSD:          part.cost,
	}
	if !u.IsZero() {
		dst = append(dst, u)
	}
	switch reason := part.reason; reason {
	case "stop":
		p.terminal = true
		dst = append(dst, &event.Result{Status: event.ResultSuccess, Text: p.stepText.String(),
			SessionID: p.session, NumTurns: p.steps})
	case "length", "content-filter", "error":
		// The model call ended abnormally and OpenCode's loop stops.
		p.terminal = true
		msg := "the model stopped: " + reason
		if reason == "length" {
			msg += " (output token limit)"
		}
		dst = append(dst, &event.Error{Code: event.ErrAgentError, Message: msg},
			&event.Result{Status: event.ResultError, Text: p.stepText.String(), SessionID: p.session, NumTurns: p.steps})
	}
	return dst
}

// errorClasses maps OpenCode's error names to classes where the name alone
// is clear.
var errorClasses = map[string]string{
	"ProviderAuthError":    event.ClassAuth,
	"ContextOverflowError": event.ClassContextOverflow,
}

func (p *parser) agentError(dst []event.Body, e gjson.Result) []event.Body {
	name := e.Get("name").String()
	msg := e.Get("data.message").String()
	if msg == "" {
		msg = e.Get("message").String()
	}
	if msg == "" {
		msg = name
	}
	if msg == "" {
		msg = "opencode reported an error"
	}
	status := int(e.Get("data.statusCode").Int())
	class := errorClasses[name]
	if class == "" && status != 0 {
		class = adapters.ClassifyStatus(status)
	}
	if class == "" {
		class = adapters.ClassifyError(msg)
	}
	if class == "" {
		class = adapters.ClassifyError(name)
	}
	p.terminal = true
	return append(dst, &event.Error{Code: event.ErrAgentError, Message: msg, Class: class, Status: status},
		&event.Result{Status: event.ResultError, SessionID: p.session, NumTurns: p.steps})
}
