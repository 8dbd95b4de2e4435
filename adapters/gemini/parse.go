package gemini

import (
	"hash/maphash"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/adapters/internal/known"
	"github.com/agentharness/harness/adapters/internal/stamps"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fewmap"
)

// call is a tool call between its tool_use and its tool_result.
type call struct {
	name    string
	kind    event.Kind
	paths   []string
	startMS int64 // the tool_use's timestamp, 0 when unknown
	// edit is what a write_file or replace asked for, nil for other
	// tools: a pointer, as a call is copied in and out of p.open.
	edit *edit
}

type parser struct {
	scratch line // the line Parse reads, kept from line to line: a kilobyte a line for some

	session  string
	open     fewmap.Map[string, call] // by tool_id: rarely more than one
	lastText string                   // the last complete assistant message
	lastCut  bool                     // lastText was cut at event.MaxTextBytes
	initMS   int64                    // the init line's timestamp
	wall     bool                     // durations are left to the caller's clock (UseWallClock)
	files    files                    // file contents the stream showed in full

	// ended holds the tool_ids of the last calls that ended: a
	// tool_result for one of them again is the same result twice, not a
	// new call.
	ended recentIDs

	stamps stamps.Span // of the lines understood
	clock  clock       // reads their timestamps

	// The current run of assistant deltas, as one attempt of the model:
	// deltas holds its chunks, replay the position reached by a stream
	// that restarted from the first chunk (-1: none), warned whether the
	// replay was reported.
	deltas chunks
	replay int
	warned bool
	// deltaTS is the last delta's timestamp (raw JSON, a piece of p.lines):
	// a chunk that repeats the first one counts as a retry's replay only
	// when it comes retryGap after it.
	deltaTS string

	lines jsonscan.Lines // copies of the lines, which bodies and p keep pieces of
}

func newParser() *parser {
	return &parser{replay: -1, ended: recentIDs{seed: maphash.MakeSeed()}, files: files{Files: known.New(known.MaxFile, known.MaxTotal, known.ForgetOthers)}}
}

// Parse implements adapters.Parser: read finds the line's fields (it sets
// all of p.scratch), then apply turns them into bodies with p's state.
// LinesStay implements adapters.LinesKept.
func (p *parser) LinesStay() { p.lines.Stay() }

func (p *parser) Parse(dst []event.Body, raw []byte) ([]event.Body, bool) {
	p.read(&p.scratch, raw)
	return p.apply(dst, &p.scratch)
}

// line holds the top-level fields of one line that the parser reads. The
// first of duplicate keys wins, as with gjson.
type line struct {
	bad bool // not a JSON object

	// Members the apply step only decodes, decoded in the walk (text).
	typ, role, content, session, model, toolID, toolName str
	output, status, severity, message                    str
	// Raw members.
	delta, params, err, stats, timestamp string

	// Fields of params, read with the line.
	pCommand, pContent, pOldString, pNewString, pFilePath, pAbsolutePath, pPath str
	pAllowMultiple, pExpected, pModifiedByUser                                  string
}

// str is a member the apply step only decodes, decoded in the walk as
// it is skipped (jsonscan.StrValue): Str would look again through each
// string for escapes, 1.6 % of a gemini parse's instructions (nearly all
// of its strings are short and have none). Not the raw value: a smaller
// line is cheaper to clear.
type str struct {
	text   string // jsonscan.Str of the raw value
	set    bool   // the member was read: a later duplicate is not
	quoted bool   // the raw value is a string (jsonscan.IsString)
}

// read reads raw into l. The line is copied once (into blocks shared with
// other lines) and walked once with jsonscan; bodies and p keep pieces of
// the copy. It uses nothing of the parser's state but p.lines, which
// nothing else uses.
func (p *parser) read(l *line, raw []byte) {
	*l = line{}
	raw, ok := jsonscan.Object(raw)
	if !ok {
		l.bad = true
		return
	}
	s := p.lines.Copy(raw)
	end := jsonscan.Fields(s, func(k, rest string) (int, bool) {
		var m *str      // a member only decoded
		var raw *string // a raw one
		switch k {
		case "type":
			m = &l.typ
		case "role":
			m = &l.role
		case "content":
			m = &l.content
		case "session_id":
			m = &l.session
		case "model":
			m = &l.model
		case "tool_id":
			m = &l.toolID
		case "tool_name":
			m = &l.toolName
		case "output":
			m = &l.output
		case "status":
			m = &l.status
		case "severity":
			m = &l.severity
		case "message":
			m = &l.message
		case "parameters":
			if l.params == "" {
				// Read in the same pass as the line, not skipped and
				// walked again.
				if n := l.readParams(rest); n > 0 {
					l.params = rest[:n]
					return n, true
				}
			}
			raw = &l.params
		case "delta":
			raw = &l.delta
		case "error":
			raw = &l.err
		case "stats":
			raw = &l.stats
		case "timestamp":
			raw = &l.timestamp
		default:
			return 0, true
		}
		if m == nil {
			v := jsonscan.Value(rest)
			jsonscan.SetFirst(raw, v)
			return len(v), true
		}
		// (Written out here and in readParams: a function for it cost a
		// call a member, 0.9 % of a gemini parse.)
		if m.set {
			return 0, true // a duplicate: the first wins
		}
		var n int
		m.text, n = jsonscan.StrValue(rest)
		m.set, m.quoted = true, jsonscan.IsString(rest[:n])
		return n, true
	})
	l.bad = jsonscan.Trailing(s, end)
}

// apply turns a line read by read into bodies, with the parser's state.
func (p *parser) apply(dst []event.Body, l *line) ([]event.Body, bool) {
	dst, known := p.applyLine(dst, l)
	if known {
		p.stamps.Note(l.timestamp)
	}
	return dst, known
}

func (p *parser) applyLine(dst []event.Body, l *line) ([]event.Body, bool) {
	if l.bad || !l.typ.quoted {
		return dst, false
	}
	switch l.typ.text {
	case "message":
		return p.message(dst, l)
	case "init":
		dst = p.endRun(dst)
		p.session = l.session.text
		p.initMS = p.clock.millis(l.timestamp)
		return append(dst, &event.SessionStart{SessionID: p.session, Model: l.model.text}), true
	case "tool_use":
		dst = p.endRun(dst)
		// Text before a tool call is commentary, not the final answer.
		p.lastText, p.lastCut = "", false
		return append(dst, p.toolUse(l)), true
	case "tool_result":
		id := toolID(l)
		c, ok := p.open.Get(id)
		if !ok && p.ended.has(id) {
			// The result of a call that already ended, repeated: dropped
			// silently, as Claude's parser does; it ends no text run either.
			return dst, true
		}
		dst = p.endRun(dst)
		return append(dst, p.toolResult(l, id, c, ok)), true
	case "error":
		dst = p.endRun(dst)
		msg := l.message.text
		if l.severity.text == "warning" {
			return append(dst, &event.Warning{Code: event.WarnAgentWarning, Message: msg}), true
		}
		// An error line does not end the run: the result that follows does.
		return append(dst, agentError(msg, false)), true
	case "result":
		dst = p.endRun(dst)
		return p.result(dst, l), true
	}
	return dst, false
}

// Flush implements adapters.Parser. Text still streaming when the output
// ends was never completed (the run died or was cut off): its deltas went
// out, but it is no message.
func (p *parser) Flush(dst []event.Body) []event.Body {
	p.deltas.reset()
	return dst
}

func (p *parser) message(dst []event.Body, l *line) ([]event.Body, bool) {
	role := l.role.text
	switch {
	case role == "assistant" && jsonscan.Bool(l.delta):
		return p.delta(dst, l.content.text, l.timestamp), true
	case role == "assistant":
		dst = p.endRun(dst)
		text := l.content.text
		p.lastText, p.lastCut = text, false
		return append(dst, &event.Message{Role: event.RoleAssistant, Text: text}), true
	case role == "user":
		// The prompt echoed back: the caller knows it already.
		return p.endRun(dst), true
	}
	return dst, false
}

// retryGap is the least time, in ms, between a failed attempt's last chunk
// and its retry's first: gemini-cli waits 1 s or more before it retries a
// stream (MID_STREAM_RETRY_OPTIONS: 1 s, doubling; 5 s for a failed
// request). A chunk that repeats the first one sooner is the model's own
// text ("**", "Note", "**"), not a replay.
const retryGap = 900

// delta handles one assistant chunk, ts its line's timestamp (raw JSON). A
// retried model request streams the same chunks again from the first one,
// with no marker: chunks that repeat the current attempt are held back,
// and emitted late only if the stream turns out to diverge (then they were
// real text, not a replay).
func (p *parser) delta(dst []event.Body, text, ts string) []event.Body {
	d := &p.deltas
	prevTS := p.deltaTS
	p.deltaTS = ts
	if p.replay >= 0 {
		switch {
		case p.replay < d.n() && d.is(p.replay, text):
			p.replay++
			return p.replayed(dst)
		case p.replay == d.n() && d.is(0, text) && p.mayRetry(prevTS, ts):
			p.replay = 1 // yet another attempt
			return p.replayed(dst)
		case p.replay == d.n():
			// The retry goes on past where the earlier attempt stopped
			// (or past what was kept of it).
			p.replay = -1
		default:
			// Not a replay after all: the held-back chunks were text.
			held := d.upTo(p.replay)
			d.repeat(p.replay)
			p.replay = -1
			dst = append(dst, &event.TextDelta{Text: held})
		}
	} else if d.n() > 0 && d.is(0, text) && p.mayRetry(prevTS, ts) {
		p.replay = 1
		return p.replayed(dst)
	}
	d.add(text)
	return append(dst, &event.TextDelta{Text: text})
}

// mayRetry reports whether a chunk stamped cur may start a retry of the
// attempt whose last chunk was stamped prev: retryGap or more later, or
// either time unknown (a capture without timestamps folds as before).
func (p *parser) mayRetry(prev, cur string) bool {
	a, b := p.clock.millis(prev), p.clock.millis(cur)
	return a == 0 || b == 0 || b-a >= retryGap
}

// replayed reports, once per run, a replay that repeated the whole
// attempt so far.
func (p *parser) replayed(dst []event.Body) []event.Body {
	if p.replay == p.deltas.n() && !p.warned {
		p.warned = true
		dst = append(dst, &event.Warning{Code: event.WarnAgentRetry,
			Message: "the agent streamed the same text again (a retried model request); the repeat is not emitted"})
	}
	return dst
}

// endRun emits the message a run of deltas made, if one is open.
func (p *parser) endRun(dst []event.Body) []event.Body {
	if p.deltas.empty() {
		return dst
	}
	if p.replay > 0 && !p.warned {
		dst = append(dst, &event.Warning{Code: event.WarnAgentRetry,
			Message: "the agent streamed part of its text again (a retried model request); the repeat is not emitted"})
	}
	text, cut := string(p.deltas.buf), p.deltas.cut
	p.deltas.reset()
	p.replay, p.warned = -1, false
	p.lastText, p.lastCut = text, cut
	return append(dst, &event.Message{Role: event.RoleAssistant, Text: text, Truncated: cut})
}

// BuiltinKind is the kind of one of Gemini's built-in tools by its name,
// and whether name is one (gemini --acp names its calls NAME__…). A
// switch, not a map: a map's hash and lookup on every tool call cost
// 0.35 % of a gemini parse.
func BuiltinKind(name string) (event.Kind, bool) {
	switch name {
	case "run_shell_command":
		return event.KindShell, true
	case "read_file", "read_many_files":
		return event.KindRead, true
	case "write_file":
		return event.KindWrite, true
	case "replace", "edit":
		return event.KindEdit, true
	case "glob", "grep_search", "search_file_content", "list_directory":
		return event.KindSearch, true
	case "web_fetch", "google_web_search":
		return event.KindWeb, true
	case "write_todos":
		return event.KindTodo, true
	case "invoke_agent":
		return event.KindTask, true
	}
	return "", false
}

// toolKind returns the kind of a tool name. MCP tools are registered under
// their own name, as `server__tool` when names clash, or `mcp_server_tool`
// in builds that qualify them all; none of the built-in names look so.
func toolKind(name string) event.Kind {
	if k, ok := BuiltinKind(name); ok {
		return k
	}
	if strings.Contains(name, "__") || strings.HasPrefix(name, "mcp_") {
		return event.KindMCP
	}
	return event.KindOther
}

// toolID returns a call's tool_id; event.Stream pairs an empty
// call id badly, so a missing one gets a name.
func toolID(l *line) string {
	if id := l.toolID.text; id != "" {
		return id
	}
	return "tool"
}

// readParams reads the parameters object at the start of rest and returns
// its length (0 when rest does not start with an object).
func (l *line) readParams(rest string) int {
	return jsonscan.Fields(rest, func(k, rest string) (int, bool) {
		var m *str      // a member only decoded
		var raw *string // a raw one
		switch k {
		case "command":
			m = &l.pCommand
		case "content":
			m = &l.pContent
		case "old_string":
			m = &l.pOldString
		case "new_string":
			m = &l.pNewString
		case "file_path":
			m = &l.pFilePath
		case "absolute_path":
			m = &l.pAbsolutePath
		case "path":
			m = &l.pPath
		case "allow_multiple":
			raw = &l.pAllowMultiple
		case "expected_replacements":
			raw = &l.pExpected
		case "modified_by_user":
			raw = &l.pModifiedByUser
		default:
			return 0, true
		}
		if m == nil {
			v := jsonscan.Value(rest)
			jsonscan.SetFirst(raw, v)
			return len(v), true
		}
		if m.set {
			return 0, true // a duplicate: the first wins
		}
		var n int
		m.text, n = jsonscan.StrValue(rest)
		m.set, m.quoted = true, jsonscan.IsString(rest[:n])
		return n, true
	})
}

func (p *parser) toolUse(l *line) *event.ToolStart {
	id := toolID(l)
	name := l.toolName.text
	if name == "" {
		name = nameFromID(id)
	}
	params := l.params
	ts := &event.ToolStart{CallID: id, Name: name, Kind: toolKind(name)}
	if jsonscan.IsObject(params) {
		ts.Input = p.lines.Bytes(params)
	}
	c := call{name: name, kind: ts.Kind}
	if !p.wall {
		c.startMS = p.clock.millis(l.timestamp)
	}
	switch ts.Kind {
	case event.KindShell:
		ts.Command = l.pCommand.text
	case event.KindRead, event.KindWrite, event.KindEdit:
		ts.Path = firstString(l.pFilePath, l.pAbsolutePath, l.pPath)
	}
	switch name {
	case "write_file", "replace", "edit":
		// The edit and the call's paths in one allocation, not two
		// (0.4 % of a gemini parse).
		e := &struct {
			edit
			paths [1]string
		}{readEdit(name, ts.Path, l), [1]string{ts.Path}}
		c.edit = &e.edit
		if ts.Path != "" {
			c.paths = e.paths[:]
		}
		// write_file writes the file whole, in place (fs.writeFile), made
		// when absent: a live run may take a file born during it, that
		// nothing else of the run made, as absent before the call, when
		// the start is read after the write (a loaded machine).
		ts.Creates = name == "write_file" && ts.Path != ""
	}
	// A shell command or another agent's tool may change any file: what
	// was seen of them no longer holds.
	p.files.TouchedBy(ts.Kind)
	p.open.Set(id, c)
	return ts
}

// toolResult ends the call id, c when it was open (ok).
func (p *parser) toolResult(l *line, id string, c call, ok bool) *event.ToolEnd {
	p.open.Delete(id)
	p.ended.add(id) // an unmatched one too: the stream starts and ends it
	te := &event.ToolEnd{CallID: id, Status: event.StatusOK, Output: l.output.text}
	if ok {
		te.Name, te.Kind, te.Paths = c.name, c.kind, c.paths
		if end := p.clock.millis(l.timestamp); !p.wall && c.startMS > 0 && end >= c.startMS {
			te.DurationMS, te.DurationNative = end-c.startMS, true
		}
	} else {
		te.Name = nameFromID(id)
		te.Kind = toolKind(te.Name)
	}
	if l.status.text == "error" {
		te.Status = event.StatusError
		var msg, typ string
		jsonscan.Pick(l.err, []string{"message", "type"}, &msg, &typ)
		if msg := jsonscan.Str(msg); msg != "" {
			te.Output = msg
		}
		if isDenial(jsonscan.Str(typ), te.Output) {
			te.Status = event.StatusDenied
		}
	}
	if ok && c.edit != nil {
		p.files.apply(te, *c.edit)
	} else if !ok || known.Unseen(te.Kind) {
		p.files.ForgetAll()
	}
	if te.Kind == event.KindShell {
		if code, found := exitCode(te.Output); found {
			te.ExitCode = event.Int(code)
			if code != 0 && te.Status == event.StatusOK {
				te.Status = event.StatusError
			}
		}
	}
	return te
}

// recentIDs holds the hashes of the last len(hashes) ids added: a fixed
// 512 bytes and one hash an add, however long the run. Claude's parser
// keeps every ended id (internal/idset), since Claude repeats a tool_use
// id across its lines; Gemini writes each call's result once, so a
// repeat is a line written again, soon after the first. An exact set cost
// 2.4 % of a gemini parse (a growing table, 5000 calls in 4 MiB of
// stream: 0.36 ms, 129 KB and 258 allocations) against 0.3 % for this.
type recentIDs struct {
	seed   maphash.Seed
	hashes [64]uint64
	n      int // ids added, of which the last len(hashes) are kept
}

func (r *recentIDs) add(id string) {
	r.hashes[r.n%len(r.hashes)] = maphash.String(r.seed, id)
	r.n++
}

// has reports whether id is among the last ids added (exact but for a
// collision of 64-bit hashes).
func (r *recentIDs) has(id string) bool {
	x := maphash.String(r.seed, id)
	for _, h := range r.hashes[:min(r.n, len(r.hashes))] {
		if h == x {
			return true
		}
	}
	return false
}

// isDenial reports whether a tool error is the policy refusing the call
// (headless runs deny what would need a confirmation).
func isDenial(typ, msg string) bool {
	return strings.Contains(typ, "denied") || typ == "policy_violation" ||
		strings.Contains(msg, "denied by policy") || strings.Contains(msg, "requires user confirmation")
}

// exitCode reads the exit status Gemini's shell tool reports after the
// command's output, never a number the command printed itself ("[1] npm
// run test exited with code 1" from concurrently, a CI log's "Exit Code:
// 0"). The stream's output is the tool's display (gemini-cli
// packages/core/src/tools/shell.ts; read in 0.61.0's bundle, the pin): the command's output
// alone, with no status; or, when the command printed nothing, "Command
// exited with code: N" alone. With --debug the display is what the model
// reads: "Output: ...", then one field a line, "Error: ...", "Exit Code:
// N" (only when non-zero since 0.27; before, every field, "(none)" when
// empty, after "Command: ..." and "Directory: ..."), "Signal: ...",
// "Background PIDs: ...", "Process Group PGID: ...". So the status is
// the last line's "Command exited with code: N", or the "Exit Code: N"
// line of such a report that only its later fields follow. It runs on
// every shell call's output: no regexp, and only its last lines are read.
func exitCode(out string) (int, bool) {
	if n, ok := codeLine(out[strings.LastIndexByte(out, '\n')+1:], "Command exited with code: "); ok {
		return n, true
	}
	if !strings.HasPrefix(out, "Output: ") && !strings.HasPrefix(out, "Command: ") {
		return 0, false
	}
	for end := len(out); ; {
		i := strings.LastIndexByte(out[:end], '\n')
		line := out[i+1 : end]
		if n, ok := codeLine(line, "Exit Code: "); ok {
			return n, true
		}
		if i < 0 || !(strings.HasPrefix(line, "Signal: ") || strings.HasPrefix(line, "Background PIDs: ") ||
			strings.HasPrefix(line, "Process Group PGID: ")) {
			return 0, false
		}
		end = i
	}
}

// codeLine reads line as prefix followed by a whole number, -?\d+, and
// nothing else.
func codeLine(line, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(line, prefix)
	if !ok {
		return 0, false
	}
	d := 0
	if strings.HasPrefix(rest, "-") {
		d = 1
	}
	if d == len(rest) {
		return 0, false
	}
	for _, c := range []byte(rest[d:]) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil
}

var statusRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"code":\s*(\d{3})\b|\bstatus (\d{3})\b`) })

// agentError is the error event of an error Gemini reported; fatal for
// the one that ended the run.
func agentError(msg string, fatal bool) *event.Error {
	if msg == "" {
		msg = "gemini reported an error"
	}
	e := &event.Error{Code: event.ErrAgentError, Message: msg, Fatal: fatal}
	if fatal {
		e.Partial = &event.Partial{} // the stream adds the last events
	}
	// The regexp needs one of these; most messages have neither.
	if strings.Contains(msg, `"code":`) || strings.Contains(msg, "status ") {
		if m := statusRE().FindStringSubmatch(msg); m != nil {
			code, _ := strconv.Atoi(m[1] + m[2])
			e.Status = code
			e.Class = adapters.ClassifyStatus(code)
		}
	}
	if e.Status == 0 && strings.Contains(msg, overloadedText) {
		e.Status, e.Class = 503, event.ClassOverloaded
	}
	if e.Class == "" {
		e.Class = adapters.ClassifyError(msg)
	}
	return e
}

// overloadedText is Gemini's fixed wording of an HTTP 503 from the model:
// over ACP it gives the same text with the status as the error's code.
const overloadedText = "The model is overloaded. Please try again later."

func (p *parser) result(dst []event.Body, l *line) []event.Body {
	status := event.ResultSuccess
	if l.status.text != "success" {
		status = event.ResultError
		dst = append(dst, agentError(jsonscan.Str(jsonscan.Get(l.err, "message")), true))
	}
	// Pick's members, read with a switch: Pick, which compares each name
	// with every key in turn, cost 0.6 % more of a gemini parse.
	var total, cached, input, inputTokens, outputTokens, duration string
	left := 6 // members not yet read: the walk ends when all are
	jsonscan.Each(l.stats, func(k, v string) bool {
		var dst *string
		switch k {
		case "total_tokens":
			dst = &total
		case "cached":
			dst = &cached
		case "input":
			dst = &input
		case "input_tokens":
			dst = &inputTokens
		case "output_tokens":
			dst = &outputTokens
		case "duration_ms":
			dst = &duration
		default:
			return true
		}
		if *dst == "" {
			*dst = v
			left--
		}
		return left > 0
	})
	r := &event.Result{Status: status, Text: p.lastText, TextTruncated: p.lastCut, SessionID: p.session}
	if !p.wall {
		// Gemini's own duration, 0 included (a run within a millisecond,
		// or a scripted model's); the timestamps' span only when it
		// reports none, or a negative one.
		if jsonscan.IsNumber(duration) && duration[0] != '-' {
			r.DurationMS, r.DurationNative = jsonscan.Int(duration), true
		} else if end := p.clock.millis(l.timestamp); p.initMS > 0 && end >= p.initMS {
			r.DurationMS, r.DurationNative = end-p.initMS, true
		}
	}
	if jsonscan.IsObject(l.stats) {
		// Gemini reports the run's totals only: one usage event for the
		// run. input_tokens is the whole prompt; cached and input are its
		// breakdown (types.ts), so input is what was not read from cache.
		nCached := jsonscan.Int(cached)
		in := jsonscan.Int(input)
		out := jsonscan.Int(outputTokens)
		u := event.Usage{CacheReadTokens: nCached}
		if inputTokens != "" {
			in = max(jsonscan.Int(inputTokens)-nCached, 0)
			// output_tokens counts candidates only: the thoughts are the
			// rest of total_tokens (totalTokenCount), and the spec's
			// output includes them.
			if total != "" {
				u.ReasoningTokens = max(jsonscan.Int(total)-jsonscan.Int(inputTokens)-out, 0)
			}
		}
		u.InputTokens, u.OutputTokens = in, out+u.ReasoningTokens
		if !u.IsZero() {
			dst = append(dst, &u)
			r.Usage = u
		}
	}
	return append(dst, r)
}

// clock reads Gemini's timestamps as Unix milliseconds. It keeps the
// last date it worked out: a run's lines are nearly all of one day, and
// the date (its checks and time.Date) was most of the cost of reading a
// timestamp, which the parser does on every tool and result line.
type clock struct {
	day   string // the date of dayMS, as in 2006-01-02; "" for none
	dayMS int64  // the day's midnight, UTC
}

// millis reads raw, an ISO 8601 timestamp as JSON, as Unix milliseconds,
// 0 when it is missing or malformed.
func (c *clock) millis(raw string) int64 {
	// Gemini's timestamps have no escapes: the string's content as
	// written is its text (a backslash fails the layout), with no call
	// to decode it.
	if len(raw) == 26 && raw[0] == '"' && raw[25] == '"' {
		if ms, ok := c.utcMillis(raw[1:25]); ok {
			return max(ms, 0)
		}
	}
	s := jsonscan.StrOnly(raw)
	ms, ok := c.utcMillis(s)
	if !ok {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return 0
		}
		ms = t.UnixMilli()
	}
	return max(ms, 0)
}

// utcMillis reads the one layout Gemini writes, 2006-01-02T15:04:05.000Z,
// without time.Parse, which was 3.6 % of a gemini parse (it reads every
// tool and result line's timestamp). Anything else, or a field out of its
// range (which time.Date would normalize), is left to time.Parse: the two
// always agree. The ranges are checked field by field: reading the fields
// back from the time.Time (Year, Month, ... each works out the date
// again) cost 7 % of a gemini parse's instructions.
func (c *clock) utcMillis(s string) (int64, bool) {
	if len(s) != 24 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[23] != 'Z' {
		return 0, false
	}
	// Digit by digit, not in loops: utcMillis costs 1.2 % of a gemini
	// parse's instructions, against 1.5 %. A byte that is no digit gives a
	// c over 9 (one below '0' wraps round).
	var top byte // the largest c
	digit := func(i int) int {
		c := s[i] - '0'
		top = max(top, c)
		return int(c)
	}
	h, mi, sec := digit(11)*10+digit(12), digit(14)*10+digit(15), digit(17)*10+digit(18)
	ms := digit(20)*100 + digit(21)*10 + digit(22)
	if top > 9 || h > 23 || mi > 59 || sec > 59 {
		return 0, false // out of range: time.Parse says how
	}
	if s[:10] != c.day {
		y := digit(0)*1000 + digit(1)*100 + digit(2)*10 + digit(3)
		mo, d := digit(5)*10+digit(6), digit(8)*10+digit(9)
		if top > 9 || mo < 1 || mo > 12 || d < 1 || d > daysIn(mo, y) {
			return 0, false
		}
		c.day, c.dayMS = strings.Clone(s[:10]), time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC).UnixMilli()
	}
	return c.dayMS + int64(((h*60+mi)*60+sec)*1000+ms), true
}

// daysIn is the number of days of month m (1 to 12) of year y.
func daysIn(m, y int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// UseWallClock makes the parser leave durations (tool_end and result) to
// the caller's clock: a live run measures them itself, while harness parse
// has only the agent's timestamps.
func (p *parser) UseWallClock() { p.wall = true }

// NativeSpan implements adapters.NativeSpanned: from the first line's
// timestamp to the last's.
func (p *parser) NativeSpan() (int64, bool) {
	return p.stamps.MS(func(raw string) (int64, bool) {
		ms := p.clock.millis(raw)
		return ms, ms > 0
	})
}

// nameFromID recovers the tool name from a tool id of the shape Gemini
// 0.61 gives, `<name>__<name>_<ms>_<n>`, for a result whose tool_use was
// never seen. It returns "unknown" for any other shape.
func nameFromID(id string) string {
	for i := strings.Index(id, "__"); i > 0; {
		if name := id[:i]; strings.HasPrefix(id[i+2:], name+"_") {
			return name
		}
		j := strings.Index(id[i+2:], "__")
		if j < 0 {
			break
		}
		i += 2 + j
	}
	return "unknown"
}

// firstString returns the text of the first of ss that is a non-empty
// string (jsonscan.StrOnly of its raw value).
func firstString(ss ...str) string {
	for _, s := range ss {
		if s.text != "" && s.quoted {
			return s.text
		}
	}
	return ""
}
