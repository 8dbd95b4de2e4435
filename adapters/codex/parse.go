package codex

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fewmap"
)

// LegacyMessage is the parse error reported, once, for a stream in a
// format older than the thread/turn/item schema.
const LegacyMessage = "this is the legacy codex --json format (codex ≤ 0.43, or the transitional 0.42 session.created stream), which harness does not parse; upgrade codex to 0.44 or later"

type parser struct {
	scratch read // the line Parse reads, kept from line to line: a kilobyte a line for some

	foreign bool   // a legacy or transitional line was seen: nothing more is parsed
	session string // thread id
	// cwd is the run's directory, which diffs name files from as the
	// run's own did; "" (a capture alone) leaves absolute paths as given.
	cwd string
	// lastText is the last agent_message of the current turn that no tool
	// call followed: interim commentary before a tool call is not the
	// final answer.
	lastText string
	// pending is the last top-level error, held back one line: Codex sends
	// a failure as an error line and then turn.failed with the same text,
	// and only then is it known to be the run's terminal, fatal error.
	pending *event.Error
	// total is the thread's usage as the last turn.completed reported it:
	// Codex reports the thread's running total, not the turn's.
	total event.Usage
	// open holds the item ids whose tool_start was emitted: rarely more
	// than one at a time.
	open   fewmap.Map[string, struct{}]
	warned map[string]bool // error item ids already reported
	diffs  diffCheck       // the diffs passed on, held to each other
	lines  jsonscan.Lines  // copies of the lines, which bodies and p keep pieces of
}

func newParser() *parser {
	return &parser{warned: map[string]bool{}, diffs: diffCheck{replay: event.DiffReplay{Limit: maxDiffsHeld}}}
}

// Parse implements adapters.Parser: read finds the line's fields (it sets
// all of p.scratch), then apply turns them into bodies with p's state.
// LinesStay implements adapters.LinesKept.
func (p *parser) LinesStay() { p.lines.Stay() }

func (p *parser) Parse(dst []event.Body, raw []byte) ([]event.Body, bool) {
	p.read(&p.scratch, raw)
	return p.apply(dst, &p.scratch)
}

// ReplayIn makes the parser name the files of its diffs from cwd, the
// captured run's directory, as the run's own diffs did (harness.Parse of
// a run's log with its cwd). It is called before the first line.
func (p *parser) ReplayIn(cwd string) {
	if abs, err := filepath.Abs(cwd); err == nil && cwd != "" {
		cwd = abs // "" stays: no directory, not harness's own
	}
	p.cwd = cwd
}

// line holds the top-level fields of one line that the parser reads, raw
// but for typ and usage. The first of duplicate keys wins, as with gjson.
type line struct {
	typ str

	threadID, err, message, item, delta, itemID, questions, msg string

	usage usage
}

// str is a member read as it is walked: its raw value, and its text as
// jsonscan.Str decodes it. The walk has just seen whether the string has
// escapes; Str looked for them again, for the half a million strings of a
// 20 MB codex stream that every line decodes (types, ids, statuses, the
// changes' paths and kinds): 20 M of its 650 M parser instructions.
type str struct{ raw, text string }

// read reads the value at the start of rest, unless an earlier duplicate
// was read, and returns its length (0 to have Fields skip it).
func (s *str) read(rest string) int {
	if s.raw != "" {
		return 0
	}
	var n int
	s.text, n = jsonscan.StrValue(rest)
	s.raw = rest[:n]
	return n
}

// first sets *dst to the raw value at the start of rest unless *dst is
// set (jsonscan.SetFirst), and returns the value's length.
func first(dst *string, rest string) int {
	v := jsonscan.Value(rest)
	jsonscan.SetFirst(dst, v)
	return len(v)
}

// usage is turn.completed's token counts, read with the line rather than
// skipped and walked again: the first usage member, and in it the first
// of duplicate keys.
type usage struct {
	seen                                bool // the first usage member was read
	in, cached, written, out, reasoning jsonscan.FirstInt
}

// read reads the usage object at the start of rest and returns its
// length (0 when rest does not start with an object).
func (u *usage) read(rest string) int {
	if u.seen {
		return 0
	}
	u.seen = true
	return jsonscan.Fields(rest, func(k, rest string) (int, bool) {
		switch k {
		case "input_tokens":
			return u.in.Read(rest), true
		case "cached_input_tokens":
			return u.cached.Read(rest), true
		case "cache_write_input_tokens":
			return u.written.Read(rest), true
		case "output_tokens":
			return u.out.Read(rest), true
		case "reasoning_output_tokens":
			return u.reasoning.Read(rest), true
		}
		return 0, true
	})
}

// read is a line as read by parser.read.
type read struct {
	// full is set once r holds a line. Read-ahead slots come empty (Apply
	// empties them); Parse's one slot as the last line left it.
	full bool
	bad  bool // not a JSON object
	l    line
	it   item
}

// read reads raw into r. The line is copied once (into blocks shared with
// other lines) and walked once with jsonscan; bodies and p keep pieces of
// the copy. It uses nothing of the parser's state but p.lines, which
// nothing else uses.
func (p *parser) read(r *read, raw []byte) {
	if r.full {
		// Only when needed: a read is some 700 bytes of strings, and
		// while the collector marks, clearing it costs a write barrier
		// for each of its pointers.
		*r = read{}
	}
	r.full = true
	raw, ok := jsonscan.Object(raw)
	if !ok {
		r.bad = true
		return
	}
	l, it := &r.l, &r.it
	// The item is read in the same pass as the line, not skipped and
	// walked again.
	s := p.lines.Copy(raw)
	end := jsonscan.Fields(s, func(k, rest string) (int, bool) {
		switch k {
		case "item":
			if l.item == "" {
				if n := it.read(rest); n > 0 {
					l.item = rest[:n]
					return n, true
				}
			}
			return first(&l.item, rest), true
		case "usage":
			return l.usage.read(rest), true
		case "type":
			return l.typ.read(rest), true
		case "thread_id":
			return first(&l.threadID, rest), true
		case "error":
			return first(&l.err, rest), true
		case "message":
			return first(&l.message, rest), true
		case "delta":
			return first(&l.delta, rest), true
		case "item_id":
			return first(&l.itemID, rest), true
		case "questions":
			return first(&l.questions, rest), true
		case "msg":
			return first(&l.msg, rest), true
		}
		return 0, true
	})
	r.bad = jsonscan.Trailing(s, end)
}

// apply turns a line read by read into bodies, with the parser's state.
func (p *parser) apply(dst []event.Body, r *read) ([]event.Body, bool) {
	if r.bad || p.foreign {
		return dst, false
	}
	l, it := &r.l, &r.it
	if !jsonscan.IsString(l.typ.raw) {
		if jsonscan.Get(l.msg, "type") != "" {
			return p.legacy(p.release(dst)), false
		}
		return dst, false
	}
	typ := l.typ.text
	if typ != "turn.failed" {
		dst = p.release(dst)
	}
	switch typ {
	case "thread.started":
		p.session = jsonscan.Str(l.threadID)
		return append(dst, &event.SessionStart{SessionID: p.session}), true
	case "turn.started":
		p.lastText = ""
		clear(p.warned)
		return dst, true
	case "turn.completed":
		return p.turnCompleted(dst, &l.usage), true
	case "turn.failed":
		return p.turnFailed(dst, jsonscan.Str(jsonscan.Get(l.err, "message"))), true
	case "error":
		return p.streamError(dst, jsonscan.Str(l.message)), true
	case "item.started", "item.updated", "item.completed":
		if !jsonscan.IsString(it.typ.raw) {
			if it.itemType != "" {
				return p.legacy(dst), false
			}
			return dst, false
		}
		return p.item(dst, typ[len("item."):], it.typ.text, it)
	case "item.plan.delta":
		if d := jsonscan.Str(l.delta); d != "" {
			dst = append(dst, &event.TextDelta{Text: d, MessageID: jsonscan.Str(l.itemID)})
		}
		return dst, true
	case "request_user_input":
		return append(dst, &event.Warning{Code: event.WarnAgentWarning,
			Message: "the agent asked for user input, which a headless run cannot give: " + questions(l.questions)}), true
	case "session.created":
		return p.legacy(dst), false
	}
	return dst, false
}

// item holds the fields of an item object that the parser reads: raw,
// but for id, type and status, which every tool item's lines decode.
type item struct {
	id, typ, status                                                str
	itemType, text, message, command, aggregatedOutput, exitCode   string
	changes, server, tool, arguments, query, action, items, prompt string
	receivers, err, result                                         string

	kind   event.Kind // changeKind of changes, once computed
	list   []change   // changes, once read (listed)
	listed bool
	// one holds list when there is one change, as there mostly is: a
	// slice made for each cost 10 M of the 600 M parser instructions of
	// a 20 MB codex stream (26,000 file_change lines).
	one [1]change
}

// read reads the item object at the start of rest and returns its length
// (0 when rest does not start with an object).
func (it *item) read(rest string) int {
	return jsonscan.Fields(rest, func(k, rest string) (int, bool) {
		switch k {
		case "id":
			return it.id.read(rest), true
		case "type":
			return it.typ.read(rest), true
		case "status":
			return it.status.read(rest), true
		case "item_type":
			return first(&it.itemType, rest), true
		case "text":
			return first(&it.text, rest), true
		case "message":
			return first(&it.message, rest), true
		case "command":
			return first(&it.command, rest), true
		case "aggregated_output", "aggregatedOutput": // exec's, the app-server's
			return first(&it.aggregatedOutput, rest), true
		case "exit_code", "exitCode":
			return first(&it.exitCode, rest), true
		case "changes":
			if it.changes == "" {
				// An array of changes is read in the same pass, not
				// skipped and walked twice again (the kind, then the
				// paths and diffs).
				if n := it.readChanges(rest); n > 0 {
					it.changes = rest[:n]
					return n, true
				}
			}
			return first(&it.changes, rest), true
		case "server":
			return first(&it.server, rest), true
		case "tool":
			return first(&it.tool, rest), true
		case "arguments":
			return first(&it.arguments, rest), true
		case "query":
			return first(&it.query, rest), true
		case "action":
			return first(&it.action, rest), true
		case "items":
			return first(&it.items, rest), true
		case "prompt":
			return first(&it.prompt, rest), true
		case "receiver_thread_ids", "receiverThreadIds":
			return first(&it.receivers, rest), true
		case "error":
			return first(&it.err, rest), true
		case "result":
			return first(&it.result, rest), true
		}
		return 0, true
	})
}

// readChanges reads the array of changes at the start of rest into it.list
// and returns its length (0 when rest does not start with an array: the
// value is then listed from its raw text when needed).
func (it *item) readChanges(rest string) int {
	it.list = it.one[:0]
	n := jsonscan.Elems(rest, func(rest string) int {
		c, n := readChange(rest)
		it.list = append(it.list, c)
		return n
	})
	it.listed = n > 0
	return n
}

// legacy reports the old format once and switches the parser off.
func (p *parser) legacy(dst []event.Body) []event.Body {
	p.foreign = true
	return append(dst, &event.Error{Code: event.ErrParseError, Message: LegacyMessage,
		Hint: "run `codex --version`; harness reads the thread.*/turn.*/item.* events of codex exec --json"})
}

// Flush implements adapters.Parser: it releases a top-level error that no
// turn.failed followed (the run ended without its terminal event).
func (p *parser) Flush(dst []event.Body) []event.Body { return p.release(dst) }

// release emits the held-back top-level error as it is: not the terminal
// one, as a line other than turn.failed came next.
func (p *parser) release(dst []event.Body) []event.Body {
	if p.pending != nil {
		dst = append(dst, p.pending)
		p.pending = nil
	}
	return dst
}

// turnFailed ends the turn with the terminal error, fatal, and a result
// whose text is the last final answer (never the error message).
func (p *parser) turnFailed(dst []event.Body, msg string) []event.Body {
	if msg == "" {
		msg = "turn failed"
	}
	// Codex usually sends the failure twice: a top-level error, then
	// turn.failed with the same text. Report it once.
	if p.pending != nil && p.pending.Message != msg {
		dst = p.release(dst)
	}
	p.pending = nil
	e := agentError(msg)
	e.Fatal, e.Partial = true, &event.Partial{}
	dst = append(dst, e, &event.Result{Status: event.ResultError, Text: p.lastText, SessionID: p.session, Usage: p.total})
	p.lastText = ""
	return dst
}

func (p *parser) turnCompleted(dst []event.Body, u *usage) []event.Body {
	total := openAIUsage(u.in.N, u.cached.N, u.written.N, u.out.N, u.reasoning.N)
	inc := p.increment(total)
	if !inc.IsZero() {
		dst = append(dst, &inc)
	}
	dst = append(dst, &event.Result{Status: event.ResultSuccess, Text: p.lastText, SessionID: p.session, Usage: p.total})
	p.lastText = ""
	return dst
}

// openAIUsage is a usage as OpenAI counts it, in ours: cached reads and
// cache writes are counted inside input, and reasoning inside output.
func openAIUsage(in, cached, written, out, reasoning int64) event.Usage {
	return event.Usage{InputTokens: max(in-cached-written, 0), OutputTokens: out,
		CacheReadTokens: cached, CacheWriteTokens: written, ReasoningTokens: min(reasoning, out)}
}

// increment takes the thread's running total as Codex reports it and
// returns what is new since the last one (a second turn in one stream
// reports the first one's tokens again). A total that went down is no
// running total of this stream; it is counted whole.
func (p *parser) increment(total event.Usage) event.Usage {
	inc, prev := total, p.total
	if total.InputTokens >= prev.InputTokens && total.OutputTokens >= prev.OutputTokens &&
		total.CacheReadTokens >= prev.CacheReadTokens && total.CacheWriteTokens >= prev.CacheWriteTokens &&
		total.ReasoningTokens >= prev.ReasoningTokens {
		inc = event.Usage{InputTokens: total.InputTokens - prev.InputTokens, OutputTokens: total.OutputTokens - prev.OutputTokens,
			CacheReadTokens: total.CacheReadTokens - prev.CacheReadTokens, CacheWriteTokens: total.CacheWriteTokens - prev.CacheWriteTokens,
			ReasoningTokens: total.ReasoningTokens - prev.ReasoningTokens}
	}
	p.total.Add(inc)
	return inc
}

func (p *parser) streamError(dst []event.Body, msg string) []event.Body {
	if strings.HasPrefix(msg, "Reconnecting...") {
		return append(dst, &event.Warning{Code: event.WarnAgentRetry, Message: msg})
	}
	if msg == "" {
		msg = "codex reported an error"
	}
	p.pending = agentError(msg)
	return dst
}

// item handles one item.* line; phase is started, updated or completed.
func (p *parser) item(dst []event.Body, phase, typ string, it *item) ([]event.Body, bool) {
	done := phase == "completed"
	switch typ {
	case "agent_message":
		if done {
			text := jsonscan.Str(it.text)
			p.lastText = text
			dst = append(dst, &event.Message{Role: event.RoleAssistant, Text: text, MessageID: itemID(it)})
		}
		return dst, true
	case "plan":
		if done {
			dst = append(dst, &event.Message{Role: event.RoleAssistant, Text: jsonscan.Str(it.text), MessageID: itemID(it)})
		}
		return dst, true
	case "reasoning":
		if done {
			dst = append(dst, &event.Reasoning{Text: jsonscan.Str(it.text)})
		}
		return dst, true
	case "error":
		// Non-fatal by Codex's own definition (e.g. missing model metadata).
		// Reported once per item, whichever phases it shows up in.
		id := it.id.text
		if id == "" {
			id = "item"
		}
		if !p.warned[id] {
			p.warned[id] = true
			dst = append(dst, &event.Warning{Code: event.WarnAgentWarning, Message: jsonscan.Str(it.message)})
		}
		return dst, true
	case "command_execution":
		typ = "command_execution"
	case "file_change":
		typ = "file_change"
	case "mcp_tool_call":
		typ = "mcp_tool_call"
	case "web_search":
		typ = "web_search"
	case "todo_list":
		typ = "todo_list"
	case "collab_tool_call":
		typ = "collab_tool_call"
	default:
		return dst, false
	}
	// typ is now a constant, not a view of the line.
	id := it.id.text
	if id == "" {
		// event.Stream pairs an empty call id badly; give it one.
		id = "item"
	}
	if !p.open.Has(id) {
		dst = append(dst, toolStart(id, typ, it))
		p.open.Set(id, struct{}{})
		// A message before a tool call was commentary, not the answer.
		p.lastText = ""
	}
	if done {
		te := toolEnd(id, typ, it, p.cwd)
		p.diffs.check(te, p.cwd)
		dst = append(dst, te)
		p.open.Delete(id)
	}
	return dst, true
}

// itemID returns the item's id, or "item" when it has none.
func itemID(it *item) string {
	if id := it.id.text; id != "" {
		return id
	}
	return "item"
}

func toolStart(id, typ string, it *item) *event.ToolStart {
	ts := &event.ToolStart{CallID: id, Name: typ}
	switch typ {
	case "command_execution":
		ts.Kind = event.KindShell
		ts.Command = jsonscan.Str(it.command)
		ts.Input = object(field{"command", it.command})
	case "file_change":
		ts.Kind = it.changeKind()
		var paths []string
		for _, c := range it.changeList() {
			if c.path != "" {
				paths = append(paths, c.path)
			}
		}
		if len(paths) > 0 {
			ts.Path = paths[0]
		}
		if len(paths) > 1 {
			ts.Paths = paths // a change set: the live run reads every file before the change
		}
		ts.Input = object(field{"changes", it.changes})
		ts.Creates = len(paths) > 0 && allAdded(it.changeList())
	case "mcp_tool_call":
		ts.Kind = event.KindMCP
		ts.Input = object(field{"server", it.server}, field{"tool", it.tool}, field{"arguments", it.arguments})
	case "web_search":
		ts.Kind = event.KindWeb
		ts.Input = object(field{"query", it.query}, field{"action", it.action})
	case "todo_list":
		ts.Kind = event.KindTodo
		ts.Input = object(field{"items", it.items})
	case "collab_tool_call":
		ts.Kind = event.KindTask
		ts.Input = object(field{"tool", it.tool}, field{"prompt", it.prompt}, field{"receiver_thread_ids", it.receivers})
	}
	return ts
}

func toolEnd(id, typ string, it *item, cwd string) *event.ToolEnd {
	te := &event.ToolEnd{CallID: id, Name: typ, Status: event.StatusOK}
	switch it.status.text {
	case "failed":
		te.Status = event.StatusError
	case "declined": // refused at its approval (the app-server's, live sessions)
		te.Status = event.StatusDenied
	}
	switch typ {
	case "command_execution":
		te.Kind = event.KindShell
		te.Output = jsonscan.Str(it.aggregatedOutput)
		if jsonscan.IsNumber(it.exitCode) {
			ec := jsonscan.Int(it.exitCode)
			te.ExitCode = event.Int(int(ec))
			if ec != 0 && te.Status == event.StatusOK {
				te.Status = event.StatusError
			}
		}
	case "file_change":
		te.Kind = it.changeKind()
		fileChange(te, it.changeList(), cwd)
	case "mcp_tool_call":
		te.Kind = event.KindMCP
		if msg := jsonscan.Get(it.err, "message"); msg != "" {
			te.Output = jsonscan.Str(msg)
			te.Status = event.StatusError
		} else {
			te.Output = mcpOutput(it.result)
		}
	case "web_search":
		te.Kind = event.KindWeb
	case "todo_list":
		te.Kind = event.KindTodo
		te.Output = todoOutput(it.items)
	case "collab_tool_call":
		te.Kind = event.KindTask
	}
	return te
}

// changeList returns the item's changes, read once for the start and the
// end of an item (its kind, paths, whether it only adds, its diff).
func (it *item) changeList() []change {
	if !it.listed {
		it.listed = true
		jsonscan.Values(it.changes, func(raw string) bool {
			c, _ := readChange(raw)
			it.list = append(it.list, c)
			return true
		})
	}
	return it.list
}

// changeKind returns changeKind(it.changeList()), once computed.
func (it *item) changeKind() event.Kind {
	if it.kind == "" {
		it.kind = changeKind(it.changeList())
	}
	return it.kind
}

// changeKind maps a file_change's change kinds: all add → write, all
// delete → delete, anything else (update, or a mix) → edit.
func changeKind(changes []change) event.Kind {
	kind := event.Kind("")
	for _, c := range changes {
		k := event.KindEdit
		switch c.kind {
		case "add":
			k = event.KindWrite
		case "delete":
			k = event.KindDelete
		}
		if kind == "" {
			kind = k
		} else if kind != k {
			kind = event.KindEdit
		}
	}
	if kind == "" {
		return event.KindEdit
	}
	return kind
}

// changeKindOf reads a change's kind: a string in exec's JSON ("add"),
// an object with a type in the app-server's ({"type":"add"}).
func changeKindOf(kind str) string {
	switch {
	case jsonscan.IsObject(kind.raw):
		return jsonscan.Str(jsonscan.Get(kind.raw, "type"))
	case jsonscan.IsString(kind.raw):
		return kind.text
	}
	return ""
}

type field struct{ key, raw string }

// object builds a JSON object of the given fields of an item, as Codex gave
// them; missing fields are left out. The result is a fresh copy.
func object(fields ...field) json.RawMessage {
	n := 2
	for _, f := range fields {
		n += len(f.key) + len(f.raw) + 4
	}
	buf := make([]byte, 0, n)
	buf = append(buf, '{')
	first := true
	for _, f := range fields {
		if f.raw == "" {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		// The keys are this file's plain names: nothing to escape.
		buf = append(buf, '"')
		buf = append(buf, f.key...)
		buf = append(buf, '"', ':')
		buf = append(buf, f.raw...)
	}
	return append(buf, '}')
}

// mcpOutput joins the text blocks of an MCP result, or falls back to its
// structured content as JSON.
func mcpOutput(res string) string {
	var b strings.Builder
	var content, structured string
	jsonscan.Pick(res, []string{"content", "structured_content"}, &content, &structured)
	jsonscan.Values(content, func(c string) bool {
		if t := jsonscan.Get(c, "text"); jsonscan.IsString(t) {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(jsonscan.Str(t))
		}
		return true
	})
	if b.Len() == 0 {
		if structured != "" && structured != "null" {
			return structured
		}
	}
	return b.String()
}

// todoOutput renders the final to-do list as a checklist.
func todoOutput(items string) string {
	var b strings.Builder
	jsonscan.Values(items, func(it string) bool {
		var completed, text string
		jsonscan.Pick(it, []string{"completed", "text"}, &completed, &text)
		if jsonscan.Bool(completed) {
			b.WriteString("[x] ")
		} else {
			b.WriteString("[ ] ")
		}
		b.WriteString(jsonscan.Str(text))
		b.WriteByte('\n')
		return true
	})
	return b.String()
}

func questions(qs string) string {
	var parts []string
	jsonscan.Values(qs, func(q string) bool {
		if t := jsonscan.Str(jsonscan.Get(q, "question")); t != "" {
			parts = append(parts, t)
		}
		return true
	})
	return strings.Join(parts, " / ")
}
