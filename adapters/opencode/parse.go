package opencode

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/adapters/internal/known"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/idset"
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
	scratch read // the line Parse reads, kept from line to line: a kilobyte a line for some

	session  string          // the run's session id
	steps    int             // model calls seen (a retried call counts once)
	stepMsg  string          // the message id of the step in progress
	stepOpen bool            // a step started and has not finished
	stepText strings.Builder // text parts of the current step, at most event.MaxTextBytes
	textCut  bool            // stepText was cut
	held     []string        // text parts of the step not yet known to be complete messages
	terminal bool            // a Result was emitted
	firstMS  int64           // the first line's timestamp
	lastMS   int64           // the last line's timestamp (NativeSpan)
	wall     bool            // durations are left to the caller's clock (UseWallClock)
	lines    jsonscan.Lines  // copies of the lines, which bodies and p keep pieces of
	files    known.Files     // file contents the stream showed in full, for diffs
	finished idset.Set       // part ids of the step_finish lines applied
}

// UseWallClock makes the parser leave durations (tool_end and result) to
// the caller's clock: a live run measures them itself, while harness parse
// has only the agent's timestamps.
func (p *parser) UseWallClock() { p.wall = true }

// NativeSpan implements adapters.NativeSpanned: from the first line's
// timestamp to the last's, as the result's duration is to the terminal
// line's.
func (p *parser) NativeSpan() (int64, bool) {
	if p.firstMS > 0 && p.lastMS >= p.firstMS {
		return p.lastMS - p.firstMS, true
	}
	return 0, false
}

func newParser() *parser {
	return &parser{files: known.New(known.MaxFile, known.MaxTotal, known.ForgetOthers)}
}

// Parse implements adapters.Parser: read finds the line's fields (it sets
// all of p.scratch), then apply turns them into bodies with p's state.
// LinesStay implements adapters.LinesKept.
func (p *parser) LinesStay() { p.lines.Stay() }

func (p *parser) Parse(dst []event.Body, raw []byte) ([]event.Body, bool) {
	p.read(&p.scratch, raw)
	return p.apply(dst, &p.scratch)
}

// line holds the members of a line the parser reads, collected in one pass
// over the line and one over its part with jsonscan (gjson's Get would scan
// again for each, and its ForEach parses every value it passes). As with
// ForEach, the last of duplicate keys wins.
type line struct {
	typ, sessionID string
	err            string // raw JSON
	timestamp      int64  // Unix ms
	part           part
}

type part struct {
	sessionID, text, callID, id, tool, reason, messageID string
	cost                                                 float64
	tokens                                               tokens // read with the part
	state                                                state
}

// tokens is a step's token counts, read with the line.
type tokens struct {
	input, output, reasoning, cacheRead, cacheWrite jsonscan.FirstInt
	cache                                           bool // the first cache member was read
}

// read reads the tokens object at the start of rest and returns its
// length (0 when rest does not start with an object).
func (t *tokens) read(rest string) int {
	return jsonscan.Fields(rest, func(k, rest string) (int, bool) {
		switch k {
		case "input":
			return t.input.Read(rest), true
		case "output":
			return t.output.Read(rest), true
		case "reasoning":
			return t.reasoning.Read(rest), true
		case "cache":
			if t.cache {
				break
			}
			t.cache = true
			return jsonscan.Fields(rest, func(k, rest string) (int, bool) {
				switch k {
				case "read":
					return t.cacheRead.Read(rest), true
				case "write":
					return t.cacheWrite.Read(rest), true
				}
				return 0, true
			}), true
		}
		return 0, true
	})
}

// state holds the fields of a tool part's state, read with the line: raw
// JSON, but for status, output and error, decoded as they are walked. As
// with gjson's ForEach, the last of duplicate keys wins.
type state struct {
	status, output, err string // decoded (jsonscan.Str)
	input, meta         string
	start, end          jsonscan.FirstInt // time's, read with it
	in                  input             // input's members, read with it
	md                  metadata          // meta's members, read with it
}

// read reads the state object at the start of rest into st, which must be
// empty, and returns its length (0 when rest does not start with an
// object).
func (st *state) read(rest string) int {
	return jsonscan.Fields(rest, func(k, rest string) (int, bool) {
		switch k {
		case "input":
			if st.input != "" {
				st.in = input{} // the last input wins
			}
			n := st.in.read(rest)
			if n == 0 {
				n = len(jsonscan.Value(rest))
			}
			st.input = rest[:n]
			return n, true
		case "time":
			st.start, st.end = jsonscan.FirstInt{}, jsonscan.FirstInt{} // the last time wins
			return jsonscan.Fields(rest, func(k, rest string) (int, bool) {
				switch k {
				case "start":
					return st.start.Read(rest), true
				case "end":
					return st.end.Read(rest), true
				}
				return 0, true
			}), true
		case "metadata":
			if st.meta != "" {
				st.md = metadata{} // the last metadata wins
			}
			n := st.md.read(rest)
			if n == 0 {
				n = len(jsonscan.Value(rest))
			}
			st.meta = rest[:n]
			return n, true
		}
		var n int
		switch k {
		case "status":
			st.status, n = jsonscan.StrValue(rest)
		case "output":
			st.output, n = jsonscan.StrValue(rest)
		case "error":
			st.err, n = jsonscan.StrValue(rest)
		}
		return n, true
	})
}

// read reads the line s into l, which must be empty, and reports whether
// s held nothing past its object (jsonscan.Trailing). The strings read
// are views of s, or copies where escapes were decoded.
func (l *line) read(s string) (whole bool) {
	// The part is read in the same pass as the line, not skipped and
	// walked again.
	parts := 0
	end := jsonscan.Fields(s, func(k, rest string) (int, bool) {
		if k == "part" {
			// gjson's ForEach hands a non-object to its callback once,
			// with no key: nothing matches.
			if parts++; parts > 1 {
				l.part = part{} // the last part wins
			}
			return l.part.read(rest), true
		}
		// Each member is decoded as it is skipped: n is its length, or 0
		// to have Fields skip it.
		var n int
		switch k {
		case "type":
			l.typ, n = jsonscan.StrValue(rest)
		case "sessionID":
			l.sessionID, n = jsonscan.StrValue(rest)
		case "error":
			l.err = jsonscan.Value(rest)
			n = len(l.err)
		case "timestamp":
			l.timestamp, n = jsonscan.IntValue(rest)
		}
		return n, true
	})
	return !jsonscan.Trailing(s, end)
}

// read reads the part object at the start of rest and returns its length
// (0 when rest does not start with an object).
func (p *part) read(rest string) int {
	states := 0
	return jsonscan.Fields(rest, func(k, rest string) (int, bool) {
		if k == "state" {
			if states++; states > 1 {
				p.state = state{} // the last state wins
			}
			// Read in the same pass, not skipped and walked again.
			if n := p.state.read(rest); n > 0 {
				return n, true
			}
		}
		var n int
		switch k {
		case "sessionID":
			p.sessionID, n = jsonscan.StrValue(rest)
		case "text":
			p.text, n = jsonscan.StrValue(rest)
		case "callID":
			p.callID, n = jsonscan.StrValue(rest)
		case "id":
			p.id, n = jsonscan.StrValue(rest)
		case "tool":
			p.tool, n = jsonscan.StrValue(rest)
		case "reason":
			p.reason, n = jsonscan.StrValue(rest)
		case "messageID":
			p.messageID, n = jsonscan.StrValue(rest)
		case "cost":
			v := jsonscan.Value(rest)
			p.cost, n = floatOf(v), len(v)
		case "tokens":
			p.tokens = tokens{} // the last tokens wins
			n = p.tokens.read(rest)
		}
		return n, true
	})
}

// floatOf decodes the raw value v as gjson's Result.Float does. A number,
// which gjson reads with strconv.ParseFloat, is read so here: through
// gjson.Parse the cost of every step_finish took twice as long (2.6 M of
// the 400 M parser instructions of a 20 MB opencode stream).
func floatOf(v string) float64 {
	if v != "" && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
		f, _ := strconv.ParseFloat(v, 64)
		return f
	}
	return gjson.Parse(v).Float()
}

// read is a line as read by parser.read.
type read struct {
	// full is set once r holds a line. Read-ahead slots come empty (Apply
	// empties them); Parse's one slot as the last line left it.
	full bool
	bad  bool // not a JSON object, or of a type the parser does not know
	l    line
}

// read reads raw into r, in one pass. It uses nothing of the parser's
// state but p.lines, which nothing else uses.
func (p *parser) read(r *read, raw []byte) {
	if r.full {
		// Only when needed: while the collector marks, clearing a read
		// costs a write barrier for each of its pointers.
		*r = read{}
	}
	r.full = true
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
	if !r.l.read(p.lines.Copy(trimmed)) {
		r.bad = true
		return
	}
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
	if l.timestamp > 0 {
		if p.firstMS == 0 {
			p.firstMS = l.timestamp
		}
		p.lastMS = l.timestamp
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
		// A step that starts again in the same message before it finished
		// is the same model call retried (OpenCode keeps the assistant
		// message across retries), not another turn.
		if !p.stepOpen || part.messageID == "" || part.messageID != p.stepMsg {
			p.steps++
		}
		dst = p.unfinished(dst) // a step cut short and started again
		p.stepOpen, p.stepMsg = true, strings.Clone(part.messageID)
		p.stepText.Reset()
		p.textCut = false
	case "text":
		if part.text == "" {
			return dst, true
		}
		if p.stepText.Len() > 0 {
			p.keepText("\n\n")
		}
		p.keepText(part.text)
		// The step went on past the parts held: they are complete, and a
		// reader of the stream gets each message before the next part's
		// text, not two parts run together.
		dst = p.release(dst)
		p.held = append(p.held, part.text)
		dst = append(dst, &event.TextDelta{Text: part.text})
	case "reasoning":
		if part.text != "" {
			dst = append(dst, &event.Reasoning{Text: part.text})
		}
	case "tool_use":
		dst = p.release(dst)
		// Text before a tool call is commentary, not the final answer.
		p.stepText.Reset()
		p.textCut = false
		dst = toolUse(dst, part, p.wall, &p.files, &p.lines)
	case "step_finish":
		// A step_finish printed again (same part id) is the same model
		// call: its usage counts once, and it ends nothing more.
		if part.id != "" && !p.finished.Add(part.id) {
			return dst, true
		}
		p.stepOpen = false
		dst = p.release(dst)
		dst = p.stepFinish(dst, part, l.timestamp)
	case "error":
		dst = p.unfinished(dst)
		dst = p.agentError(dst, l.err, l.timestamp)
	case "done":
		dst = p.release(dst)
		if !p.terminal {
			p.terminal = true
			dst = append(dst, p.result(event.ResultSuccess, p.stepText.String(), l.timestamp))
		}
	}
	return dst, true
}

// keepText adds s to the step's text, up to event.MaxTextBytes: the
// answer is kept for the result, and no longer than the stream would let
// it be, whatever the agent sends.
func (p *parser) keepText(s string) {
	room := event.MaxTextBytes - p.stepText.Len()
	if len(s) > room {
		for room > 0 && !utf8.RuneStart(s[room]) {
			room--
		}
		s = s[:room]
		p.textCut = true
	}
	p.stepText.WriteString(s)
}

// result is the run's Result, its duration from the first line's
// timestamp to the terminal line's (OpenCode reports none of its own).
func (p *parser) result(status, text string, endMS int64) *event.Result {
	r := &event.Result{Status: status, Text: text, SessionID: p.session, NumTurns: p.steps}
	if text != "" {
		r.TextTruncated = p.textCut
	}
	if !p.wall && p.firstMS > 0 && endMS >= p.firstMS {
		r.DurationMS, r.DurationNative = endMS-p.firstMS, true
	}
	return r
}

// A text part arrives whole and goes out at once as a delta, but whether
// it is a complete message is known only when its step goes on: another
// text part, a tool call or the step's end makes it one (the commentary before a tool, or
// the answer). Text of a step the output ended in — a run cut off while
// the step's tool was still running — was never completed: it stays a
// delta, and is no answer.

// release emits the held text parts as complete messages.
func (p *parser) release(dst []event.Body) []event.Body {
	for _, t := range p.held {
		dst = append(dst, &event.Message{Role: event.RoleAssistant, Text: t})
	}
	p.held = p.held[:0]
	return dst
}

// unfinished drops the held text parts: their deltas went out already.
func (p *parser) unfinished(dst []event.Body) []event.Body {
	p.held = p.held[:0]
	return dst
}

// Flush implements adapters.Parser: text of a step that never finished
// stays deltas.
func (p *parser) Flush(dst []event.Body) []event.Body { return p.unfinished(dst) }

func (p *parser) stepFinish(dst []event.Body, part *part, ts int64) []event.Body {
	t := &part.tokens
	reasoning := t.reasoning.N
	u := &event.Usage{
		// OpenCode's input already excludes the cached part: its getUsage
		// subtracts cache reads and writes for providers that include them.
		InputTokens: t.input.N,
		// Its output is net of reasoning, which it prices separately.
		OutputTokens:     t.output.N + reasoning,
		ReasoningTokens:  reasoning,
		CacheReadTokens:  t.cacheRead.N,
		CacheWriteTokens: t.cacheWrite.N,
		CostUSD:          part.cost,
	}
	if !u.IsZero() {
		dst = append(dst, u)
	}
	switch reason := part.reason; reason {
	case "stop":
		p.terminal = true
		dst = append(dst, p.result(event.ResultSuccess, p.stepText.String(), ts))
	case "length", "content-filter", "error":
		// The model call ended abnormally and OpenCode's loop stops.
		p.terminal = true
		msg := "the model stopped: " + reason
		if reason == "length" {
			msg += " (output token limit)"
		}
		// The text of a call cut short is not a final answer.
		dst = append(dst, &event.Error{Code: event.ErrAgentError, Message: msg, Fatal: true, Partial: &event.Partial{}},
			p.result(event.ResultError, "", ts))
	}
	return dst
}

// errorClasses maps OpenCode's error names to classes where the name alone
// is clear.
var errorClasses = map[string]string{
	"ProviderAuthError":    event.ClassAuth,
	"ContextOverflowError": event.ClassContextOverflow,
}

func (p *parser) agentError(dst []event.Body, e string, ts int64) []event.Body {
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
	// OpenCode ends the run on an error event: the error is fatal.
	return append(dst, &event.Error{Code: event.ErrAgentError, Message: msg, Class: class, Status: status,
		Fatal: true, Partial: &event.Partial{}}, p.result(event.ResultError, "", ts))
}
