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
	adapters.TwoStep[read] // Parse, and ReadAhead: read then apply

	session  string          // the run's session id
	steps    int             // step_start lines seen
	stepText strings.Builder // text parts of the current step
	terminal bool            // a Result was emitted
	lines    jsonscan.Lines  // copies of the lines, which bodies and p keep pieces of
}

func newParser() *parser {
	p := &parser{}
	p.TwoStep = adapters.NewTwoStep(p.read, p.apply)
	return p
}

// line holds the members of a line the parser reads, collected in one pass
// over the line and one over its part with jsonscan (gjson's Get would scan
// again for each, and its ForEach parses every value it passes). As with
// ForEach, the last of duplicate keys wins.
type line struct {
	typ, sessionID string
	err            string // raw JSON
	part           part
}

type part struct {
	sessionID, text, callID, id, tool, reason string
	cost                                      float64
	tokens                                    string // raw JSON
	state                                     state
}

// state holds the raw fields of a tool part's state, read with the line.
// As with gjson's ForEach, the last of duplicate keys wins.
type state struct {
	status, input, output, err, meta, time string
}

// read reads the state object at the start of rest and returns its length
// (0 when rest does not start with an object).
func (st *state) read(rest string) int {
	*st = state{}
	return jsonscan.EachEnd(rest, func(k, v string) bool {
		switch k {
		case "status":
			st.status = v
		case "input":
			st.input = v
		case "output":
			st.output = v
		case "error":
			st.err = v
		case "metadata":
			st.meta = v
		case "time":
			st.time = v
		}
		return true
	})
}

// readLine reads the line s. The strings read are views of s, or copies
// where escapes were decoded.
func readLine(s string) line {
	var l line
	// The part is read in the same pass as the line, not skipped and
	// walked again.
	jsonscan.Fields(s, func(k, rest string) (int, bool) {
		if k == "part" {
			// gjson's ForEach hands a non-object to its callback once,
			// with no key: nothing matches.
			l.part = part{}
			return l.part.read(rest), true
		}
		v := jsonscan.Value(rest)
		switch k {
		case "type":
			l.typ = jsonscan.Str(v)
		case "sessionID":
			l.sessionID = jsonscan.Str(v)
		case "error":
			l.err = v
		}
		return len(v), true
	})
	return l
}

// read reads the part object at the start of rest and returns its length
// (0 when rest does not start with an object).
func (p *part) read(rest string) int {
	return jsonscan.Fields(rest, func(k, rest string) (int, bool) {
		if k == "state" {
			// Read in the same pass, not skipped and walked again.
			if n := p.state.read(rest); n > 0 {
				return n, true
			}
			p.state = state{}
		}
		v := jsonscan.Value(rest)
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
		case "tokens":
			p.tokens = v
		}
		return len(v), true
	})
}

// read is a line as read by parser.read.
type read struct {
	bad bool // not a JSON object, or of a type the parser does not know
	l   line
}

// read reads raw into r, in one pass. It uses nothing of the parser's
// state but p.lines, which nothing else uses.
func (p *parser) read(r *read, raw []byte) {
	*r = read{}
	trimmed := bytes.TrimSpace(raw)
	// Not validated whole (that would cost a second pass): gjson reads
	// malformed input without failing, and a line cut short does not end
	// with its closing brace.
	if len(trimmed) < 2 || trimmed[0] != '{' || trimmed[len(trimmed)-1] != '}' {
		r.bad = true
		return
	}
	// One copy of the line (into blocks shared with other lines): bodies
	// and p keep pieces of it.
	r.l = readLine(p.lines.Copy(trimmed))
	switch r.l.typ {
	case "step_start", "step_finish", "done", "text", "reasoning", "tool_use", "error":
	default:
		r.bad = true
	}
}

// apply turns a line read by read into bodies, with the parser's state.
func (p *parser) apply(dst []event.Body, r *read) ([]event.Body, bool) {
	if r.bad {
		return dst, false
	}
	l := &r.l
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

func set(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// Flush implements adapters.Parser; OpenCode's parts arrive whole, so
// nothing is held back.
func (p *parser) Flush(dst []event.Body) []event.Body { return dst }

func (p *parser) stepFinish(dst []event.Body, part *part) []event.Body {
	// As with gjson's Get, the first of duplicate keys wins.
	var in, out, reasoningRaw, cache, cacheRead, cacheWrite string
	jsonscan.Each(part.tokens, func(k, v string) bool {
		switch k {
		case "input":
			set(&in, v)
		case "output":
			set(&out, v)
		case "reasoning":
			set(&reasoningRaw, v)
		case "cache":
			set(&cache, v)
		}
		return true
	})
	jsonscan.Each(cache, func(k, v string) bool {
		switch k {
		case "read":
			set(&cacheRead, v)
		case "write":
			set(&cacheWrite, v)
		}
		return true
	})
	reasoning := jsonscan.Int(reasoningRaw)
	u := &event.Usage{
		// OpenCode's input already excludes the cached part: its getUsage
		// subtracts cache reads and writes for providers that include them.
		InputTokens: jsonscan.Int(in),
		// Its output is net of reasoning, which it prices separately.
		OutputTokens:     jsonscan.Int(out) + reasoning,
		ReasoningTokens:  reasoning,
		CacheReadTokens:  jsonscan.Int(cacheRead),
		CacheWriteTokens: jsonscan.Int(cacheWrite),
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

func (p *parser) agentError(dst []event.Body, e string) []event.Body {
	name := jsonscan.Str(jsonscan.Get(e, "name"))
	data := jsonscan.Get(e, "data")
	msg := jsonscan.Str(jsonscan.Get(data, "message"))
	if msg == "" {
		msg = jsonscan.Str(jsonscan.Get(e, "message"))
	}
	if msg == "" {
		msg = name
	}
	if msg == "" {
		msg = "opencode reported an error"
	}
	status := int(jsonscan.Int(jsonscan.Get(data, "statusCode")))
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
