package claude

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/adapters/internal/known"
	"github.com/agentharness/harness/adapters/internal/stamps"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/idset"
)

// maxBlocks bounds the content block index a stream_event may name, so that
// a hostile index cannot make the parser allocate.
const maxBlocks = 1024

// parser is the state of one Claude Code run.
//
// Claude prints one `assistant` line per content block, all lines of one API
// message sharing message.id and repeating that message's usage snapshot.
// With --include-partial-messages it also prints the raw SSE events as
// stream_event lines, and the consolidated `assistant` line of a block comes
// after the block's deltas but before its content_block_stop. The parser
// therefore keeps, per stream (the main agent, and each sub-agent by its
// parent_tool_use_id), the blocks of the message being streamed: the k-th
// block of an `assistant` line for that message id is block k of the stream.
type parser struct {
	scratch top // the line Parse reads, kept from line to line: a kilobyte a line for some

	// calls are the open tool calls by tool_use id, for tool_end's name
	// and kind; ended holds the ids of those that ended, which a line may
	// announce or answer again (ignored). usage is the usage state of
	// the model calls not yet counted, by message id (see usage.go), and
	// counted holds the ids of those counted. Ended and counted calls
	// are kept as hashes only: maps of them all kept ~300 bytes a tool
	// call, and a parse of the 800 MB benchmark stream of every capture
	// peaked at 87 MB and spent most of its CPU collecting that heap.
	calls   map[string]*call
	ended   idset.Set
	usage   map[string]*callUsage
	counted idset.Set
	// modelIDs counts the non-empty message ids seen, in usage or
	// counted: a result reads it.
	modelIDs int64
	emitted  event.Usage // the sum of the usage events emitted
	// left is the part of emitted that Claude's next result.usage will
	// not hold (abandoned calls, usage.go): the result adds it.
	left    event.Usage
	streams []*stream
	// pendingErr is an assistant line's API error, held until the next
	// line says whether it ends the run: the result's terminal error is
	// then this one, fatal.
	pendingErr *event.Error
	cwd        string      // the run's directory (system/init), for diff headers
	sessionID  string      // the session's id, as the last system/init named it
	files      known.Files // file contents the stream showed in full, for diffs
	wallClock  bool        // tool durations left to the caller's clock (UseWallClock)
	toolsKnown bool        // an init's tool list was emitted (system)

	stamps stamps.Span // of the lines understood
}

// stream is the partial-message state of one agent (main or sub-agent).
type stream struct {
	parent string
	msgID  string
	blocks []block
	seen   int // content blocks of msgID's assistant lines matched so far
}

// Block types of a stream.
const (
	blockOther byte = iota
	blockText
	blockThinking
	blockTool
)

type block struct {
	typ      byte
	id, name string
	buf      []byte // the streamed text, thinking or partial input JSON, cut at its cap
	cut      bool   // buf was cut: the deltas held more
	streamed bool   // deltas were emitted for it
	stopped  bool   // its content_block_stop came
	done     bool   // its complete form (message, reasoning, tool_start) was emitted, or dropped
}

// Caps of what one block accumulates for its complete form, whatever the
// size of its deltas (which are all streamed): the Stream cuts a message or
// reasoning at event.MaxTextBytes, and an input object over
// event.MaxInputBytes becomes {} with input_truncated.
const (
	maxBlockText  = event.MaxTextBytes
	maxBlockInput = event.MaxInputBytes + 1
)

// add appends s to the block's buffer up to max bytes.
func (b *block) add(s string, max int) {
	if b.cut {
		return
	}
	if room := max - len(b.buf); len(s) > room {
		b.buf = append(b.buf, s[:room]...)
		b.cut = true
		return
	}
	b.buf = append(b.buf, s...)
}

// delta keeps a streamed delta of a text or thinking block (typ, unless
// its start named it) and reports whether it is worth a delta event: it
// is not empty.
func (b *block) delta(typ byte, text string) bool {
	if b.typ == blockOther {
		b.typ = typ
	}
	b.add(text, maxBlockText)
	b.streamed = true
	return text != ""
}

// reset empties the block, keeping a small buffer for reuse.
func (b *block) reset() {
	buf := b.buf[:0]
	if cap(buf) > 64<<10 {
		buf = nil // don't pin a long block's memory
	}
	*b = block{buf: buf}
}

func newParser() *parser {
	return &parser{calls: map[string]*call{}, usage: map[string]*callUsage{},
		files: known.New(known.MaxFile, maxKnownBytes, known.ForgetOthers)}
}

// Parse implements adapters.Parser: read finds the line's fields (it sets
// all of p.scratch), then apply turns them into bodies with p's state.
func (p *parser) Parse(dst []event.Body, raw []byte) ([]event.Body, bool) {
	p.read(&p.scratch, raw)
	return p.apply(dst, &p.scratch)
}

// UseWallClock implements adapters.WallClocked: tool_end durations are
// left to the caller's clock. By default they come from the lines' own
// timestamps (a tool_use's assistant line to its tool_result's user line),
// which is all a capture has.
func (p *parser) UseWallClock() { p.wallClock = true }

// NativeSpan implements adapters.NativeSpanned: from the first line's
// timestamp to the last's. Claude Code stamps its assistant and user
// lines, not its init, stream_event or result lines.
func (p *parser) NativeSpan() (int64, bool) {
	return p.stamps.MS(func(raw string) (int64, bool) {
		t := parseTime(raw)
		return t.UnixMilli(), !t.IsZero()
	})
}

// top holds the top-level fields of a line that dispatch needs.
type top struct {
	bad          bool   // not a JSON object
	line         string // the copy of the line the fields are pieces of
	typ, subtype string
	message      string // raw JSON
	parent       string
	apiMsgID     string
	errCode      string // assistant.error
	apiStatus    int64  // assistant.api_error_status
	// system/init
	session, model, cwd, version, tools string
	// user: text Claude injected itself (skill bodies, reminders)
	synthetic bool
	// user: raw JSON of the tool results' extra fields
	toolUseResult, toolResultMeta string
	timestamp                     string // raw JSON
	abandoned                     string // message_stop's abandoned_blocks, raw JSON
	// result (the last of duplicate keys wins)
	isError                        bool
	result, cost, usage, errs, den string // raw JSON
	begun                          string // begun_message_ids, raw JSON
	numTurns, durationMS           int64
	hasDuration                    bool     // the result says duration_ms, perhaps 0
	ev                             streamEv // the event of a stream_event, read with the line
	msg                            msgFields
}

// msgFields are the fields of an assistant message, read with the line.
type msgFields struct {
	id     string // decoded
	usage  string // raw JSON
	blocks int    // content blocks
	// Claude prints one block a line: room for three, zeroed with every
	// line, cost 1.8 M instructions of 343.5 M (claude corpus).
	first [1]blockFields
	more  []blockFields // the blocks after the first
}

// blockFields are the fields of a content block; the strings are decoded,
// input is raw JSON.
type blockFields struct {
	typ, text, thinking, id, name, input string
}

// block returns content block i.
func (m *msgFields) block(i int) *blockFields {
	if i < len(m.first) {
		return &m.first[i]
	}
	return &m.more[i-len(m.first)]
}

// readContent reads the content array at the start of rest, every block
// in the same pass, and returns its length (0 when rest does not start
// with an array).
func (m *msgFields) readContent(rest string) int {
	m.blocks, m.more = 0, nil
	return jsonscan.Elems(rest, func(rest string) int {
		var b *blockFields
		if m.blocks < len(m.first) {
			b = &m.first[m.blocks]
			*b = blockFields{}
		} else {
			m.more = append(m.more, blockFields{})
			b = &m.more[len(m.more)-1]
		}
		m.blocks++
		// A block that is not an object has no fields, as with Each.
		return jsonscan.EachEnd(rest, func(k, v string) bool {
			switch k {
			case "type":
				b.typ = jsonscan.StrOnly(v)
			case "text":
				b.text = jsonscan.StrOnly(v)
			case "thinking":
				b.thinking = jsonscan.StrOnly(v)
			case "id":
				b.id = jsonscan.StrOnly(v)
			case "name":
				b.name = jsonscan.StrOnly(v)
			case "input":
				b.input = v
			}
			return true
		})
	})
}

// streamEv holds the fields of a stream_event's event that the parser reads.
type streamEv struct {
	typ                    string
	index                  int64
	cblock, message, usage string // raw JSON
	dtype, dtext           string // delta.type and its text
}

// read reads the event object at the start of rest, in the pass over the
// line, and returns its length (0 when rest does not start with one).
func (e *streamEv) read(rest string) int {
	*e = streamEv{index: -1}
	return jsonscan.Fields(rest, func(k, rest string) (int, bool) {
		if k == "delta" {
			e.dtype, e.dtext = "", "" // the last delta wins, as a whole
			n := jsonscan.EachEnd(rest, func(k, v string) bool {
				switch k {
				case "type":
					e.dtype = jsonscan.StrOnly(v)
				case "text", "thinking", "partial_json":
					e.dtext = jsonscan.StrOnly(v)
				}
				return true
			})
			if n > 0 {
				return n, true
			}
		}
		v := jsonscan.Value(rest)
		switch k {
		case "type":
			e.typ = jsonscan.StrOnly(v)
		case "index":
			e.index = jsonscan.Int(v)
		case "content_block":
			e.cblock = v
		case "message":
			e.message = v
		case "usage":
			e.usage = v
		}
		return len(v), true
	})
}

// read reads line into t: the fields the parser needs, in one pass, as
// views of line. It uses nothing of the parser's state.
func (p *parser) read(t *top, line []byte) {
	*t = top{}
	if !looksLikeObject(line) {
		t.bad = true
		return
	}
	// The fields are views of line: apply clones what it keeps.
	s := unsafe.String(unsafe.SliceData(line), len(line))
	t.line = s
	// Nested values read here (the event of a stream_event) are read in
	// the same pass as the line, not skipped and walked again.
	end := jsonscan.Fields(s, func(k, rest string) (int, bool) {
		switch k {
		case "event":
			if n := t.ev.read(rest); n > 0 {
				return n, true
			}
			t.ev = streamEv{index: -1}
		case "message":
			t.msg = msgFields{}
			n := jsonscan.Fields(rest, func(k, rest string) (int, bool) {
				if k == "content" {
					if n := t.msg.readContent(rest); n > 0 {
						return n, true
					}
					t.msg.blocks, t.msg.more = 0, nil // not an array: no blocks
				}
				v := jsonscan.Value(rest)
				switch k {
				case "id":
					t.msg.id = jsonscan.StrOnly(v)
				case "usage":
					t.msg.usage = v
				}
				return len(v), true
			})
			if n > 0 {
				t.message = rest[:n]
				return n, true
			}
		}
		v := jsonscan.Value(rest)
		switch k {
		case "type":
			t.typ = jsonscan.StrOnly(v)
		case "subtype":
			t.subtype = jsonscan.StrOnly(v)
		case "message":
			t.message = v
		case "parent_tool_use_id":
			t.parent = jsonscan.StrOnly(v)
		case "api_message_id":
			t.apiMsgID = jsonscan.StrOnly(v)
		case "error":
			t.errCode = jsonscan.StrOnly(v)
		case "api_error_status":
			t.apiStatus = jsonscan.Int(v)
		case "session_id":
			t.session = v
		case "model":
			t.model = v
		case "cwd":
			t.cwd = v
		case "claude_code_version":
			t.version = v
		case "tools":
			t.tools = v
		case "isSynthetic", "isMeta":
			t.synthetic = t.synthetic || v == "true"
		case "tool_use_result":
			if t.toolUseResult == "" { // the first, as gjson.Get finds it
				t.toolUseResult = v
			}
		case "tool_result_meta":
			if t.toolResultMeta == "" {
				t.toolResultMeta = v
			}
		case "timestamp":
			t.timestamp = v
		case "abandoned_blocks":
			t.abandoned = v
		case "is_error":
			t.isError = v == "true"
		case "result":
			t.result = v
		case "num_turns":
			t.numTurns = jsonscan.Int(v)
		case "begun_message_ids":
			t.begun = v
		case "duration_ms":
			t.durationMS, t.hasDuration = jsonscan.Int(v), jsonscan.IsNumber(v)
		case "total_cost_usd", "cost_usd":
			if gjsonNumber(v) { // the last number wins
				t.cost = v
			}
		case "usage":
			t.usage = v
		case "errors":
			t.errs = v
		case "permission_denials":
			t.den = v
		}
		return len(v), true
	})
	t.bad = jsonscan.Trailing(s, end)
}

// apply turns a line read by read into bodies, with the parser's state.
func (p *parser) apply(dst []event.Body, t *top) ([]event.Body, bool) {
	dst, known := p.applyLine(dst, t)
	if known {
		p.stamps.Note(t.timestamp)
	}
	return dst, known
}

func (p *parser) applyLine(dst []event.Body, t *top) ([]event.Body, bool) {
	if t.bad {
		return dst, false
	}
	switch t.typ {
	case "stream_event":
		return p.streamEvent(dst, t), true
	case "assistant":
		dst = p.releaseErr(dst)
		return p.assistant(dst, t), true
	case "user":
		dst = p.releaseErr(dst)
		return p.user(dst, t), true
	case "result":
		return p.result(dst, t), true
	case "system":
		return p.system(dst, t.line, t), true
	case "rate_limit_event", "tool_progress", "tool_use_summary", "auth_status",
		"prompt_suggestion", "control_request", "control_response", "control_cancel_request",
		"command_lifecycle":
		return dst, true
	}
	return dst, false
}

// releaseErr emits the held API error as it was: the run went on after it.
func (p *parser) releaseErr(dst []event.Body) []event.Body {
	if e := p.pendingErr; e != nil {
		p.pendingErr = nil
		dst = append(dst, e)
	}
	return dst
}

// looksLikeObject is a cheap guard against non-JSON and cut lines: a JSON
// object starts with '{' and ends with '}'. Full validation would cost a
// second pass over every line; gjson is lenient on the rest.
func looksLikeObject(line []byte) bool {
	i, j := 0, len(line)-1
	for i <= j && isSpace(line[i]) {
		i++
	}
	for j >= i && isSpace(line[j]) {
		j--
	}
	return i < j && line[i] == '{' && line[j] == '}'
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// gjsonNumber reports whether gjson.Parse takes v, a value as Fields
// gives it (it starts at its first byte), for a number, without parsing
// it (claude corpus: 343.2 M instructions with gjson.Parse here, 341.7 M
// without).
func gjsonNumber(v string) bool {
	if v == "" {
		return false
	}
	switch c := v[0]; {
	case c == '+' || c == '-' || c >= '0' && c <= '9' || c == 'i' || c == 'I' || c == 'N':
		return true
	case c == 'n':
		return len(v) > 1 && v[1] != 'u' // "nan"; "null" is not
	}
	return false
}

// Flush implements adapters.Parser: a block that was streamed to its
// content_block_stop but whose complete form never came is emitted as
// assembled from its deltas; a block the stream left unfinished is not
// (its deltas stay the only record of it). The usage of a model call the
// output ended in is emitted (usageCut). A held API error is emitted.
func (p *parser) Flush(dst []event.Body) []event.Body {
	for _, st := range p.streams {
		dst = p.finishBlocks(dst, st)
	}
	dst = p.usageCut(dst)
	return p.releaseErr(dst)
}

// closeStream finishes and forgets the stream of the sub-agent run by
// tool call parent, once that call has its result: nothing of the
// sub-agent comes after it, and a run of many sub-agents kept every
// one's stream, and looked through them all at every stream_event.
func (p *parser) closeStream(dst []event.Body, parent string) []event.Body {
	for i, st := range p.streams {
		if st.parent == parent {
			dst = p.finishBlocks(dst, st)
			p.streams = slices.Delete(p.streams, i, i+1)
			break
		}
	}
	return dst
}

func (p *parser) stream(parent string, create bool) *stream {
	for _, st := range p.streams {
		if st.parent == parent {
			return st
		}
	}
	if !create {
		return nil
	}
	st := &stream{parent: strings.Clone(parent)}
	p.streams = append(p.streams, st)
	return st
}

// streamEvent handles one raw SSE event of --include-partial-messages.
func (p *parser) streamEvent(dst []event.Body, t *top) []event.Body {
	e := &t.ev
	typ, index, cblock, usage := e.typ, e.index, e.cblock, e.usage
	switch typ {
	case "content_block_delta":
		st := p.stream(t.parent, true)
		b := st.block(index)
		if b == nil {
			return dst
		}
		dtype, text := e.dtype, e.dtext
		switch dtype {
		case "text_delta":
			if b.delta(blockText, text) {
				dst = append(dst, &event.TextDelta{Text: strings.Clone(text), MessageID: st.msgID, ParentCallID: st.parent})
			}
		case "thinking_delta":
			if b.delta(blockThinking, text) {
				dst = append(dst, &event.ReasoningDelta{Text: strings.Clone(text), ParentCallID: st.parent})
			}
		case "input_json_delta":
			b.add(text, maxBlockInput)
		}
	case "content_block_start":
		st := p.stream(t.parent, true)
		b := st.block(index)
		if b == nil {
			return dst
		}
		b.reset()
		var ctype, id, name string
		jsonscan.Each(cblock, func(k, v string) bool {
			switch k { // the first of duplicate keys, as gjson's Get
			case "type":
				jsonscan.SetFirst(&ctype, v)
			case "id":
				jsonscan.SetFirst(&id, v)
			case "name":
				jsonscan.SetFirst(&name, v)
			}
			return true
		})
		switch jsonscan.StrOnly(ctype) {
		case "text":
			b.typ = blockText
		case "thinking":
			b.typ = blockThinking
		case "tool_use", "server_tool_use":
			b.typ = blockTool
			b.id = strings.Clone(jsonscan.StrOnly(id))
			b.name = strings.Clone(jsonscan.StrOnly(name))
		}
	case "content_block_stop":
		// The block is complete, unless Claude gave up on the message: it
		// then sends this stop itself, before a message_stop that names
		// the abandoned blocks. So a block's complete form, when its
		// assistant line did not bring it, waits for the message_stop.
		if st := p.stream(t.parent, false); st != nil {
			if b := st.block(index); b != nil {
				b.stopped = true
			}
		}
	case "message_start":
		st := p.stream(t.parent, true)
		dst = p.finishBlocks(dst, st)
		var rawID, msgUsage string
		jsonscan.Each(e.message, func(k, v string) bool {
			switch k {
			case "id":
				jsonscan.SetFirst(&rawID, v)
			case "usage":
				jsonscan.SetFirst(&msgUsage, v)
			}
			return true
		})
		id := jsonscan.StrOnly(rawID)
		if id == "" {
			id = t.apiMsgID
		}
		st.msgID = strings.Clone(id)
		st.seen = 0
		for i := range st.blocks {
			st.blocks[i].reset()
		}
		st.blocks = st.blocks[:0]
		if t.parent == "" {
			p.usageStart(st.msgID, msgUsage)
		}
	case "message_delta":
		if t.parent == "" {
			p.usageDelta(p.streamMsgID(t), usage)
		}
	case "message_stop":
		abandoned := jsonscan.IsObject(t.abandoned)
		if st := p.stream(t.parent, false); st != nil {
			if abandoned {
				from := jsonscan.Int(jsonscan.Get(t.abandoned, "from_block_index"))
				for i := range st.blocks {
					if int64(i) >= from {
						st.blocks[i].done = true
					}
				}
			}
			dst = p.finishBlocks(dst, st)
		}
		if t.parent == "" {
			dst = p.usageStop(dst, p.streamMsgID(t), abandoned)
		}
	}
	return dst
}

// streamMsgID is the id of the message a stream_event belongs to.
func (p *parser) streamMsgID(t *top) string {
	if t.apiMsgID != "" {
		return t.apiMsgID
	}
	if st := p.stream(t.parent, false); st != nil {
		return st.msgID
	}
	return ""
}

// block returns block i of the message being streamed, growing the list.
func (st *stream) block(i int64) *block {
	if i < 0 || i >= maxBlocks {
		return nil
	}
	for int64(len(st.blocks)) <= i {
		if len(st.blocks) < cap(st.blocks) {
			st.blocks = st.blocks[:len(st.blocks)+1]
			st.blocks[len(st.blocks)-1].reset()
		} else {
			st.blocks = append(st.blocks, block{})
		}
	}
	return &st.blocks[i]
}

// finishBlocks ends the blocks of the message being streamed. Those that
// reached their content_block_stop and whose assistant line did not come
// are emitted from their deltas: text, thinking, a tool from its input
// JSON. Unfinished ones are dropped: text the model never completed is not
// a message, and a tool whose input JSON is incomplete never ran. (A tool
// input longer than the cap is started, with input_truncated.)
func (p *parser) finishBlocks(dst []event.Body, st *stream) []event.Body {
	for i := range st.blocks {
		b := &st.blocks[i]
		if b.done {
			continue
		}
		b.done = true
		if !b.stopped {
			continue
		}
		switch {
		case b.typ == blockText && b.streamed:
			text, cut := event.Cut(string(b.buf), maxBlockText)
			dst = append(dst, &event.Message{Role: event.RoleAssistant, Text: text, Truncated: cut || b.cut, MessageID: st.msgID, ParentCallID: st.parent})
		case b.typ == blockThinking && b.streamed:
			text, cut := event.Cut(string(b.buf), maxBlockText)
			dst = append(dst, &event.Reasoning{Text: text, Truncated: cut || b.cut, ParentCallID: st.parent})
		case b.typ == blockTool && (b.cut || len(b.buf) == 0 || event.ValidJSON(b.buf) || event.JSONTooDeep(b.buf)):
			dst = p.startTool(dst, b.id, b.name, partialInput(b), st.parent)
			if b.cut || event.JSONTooDeep(b.buf) {
				if ts, ok := dst[len(dst)-1].(*event.ToolStart); ok && ts.CallID == b.id {
					ts.InputTruncated = true
				}
			}
		}
	}
	return dst
}

// partialInput is the input object a tool block's deltas spelled, or {}
// when they spelled none, were cut or nest too deep (event.MaxJSONDepth).
func partialInput(b *block) string {
	if b.cut || !event.ValidJSON(b.buf) || !jsonscan.IsObject(string(b.buf)) {
		return "{}"
	}
	return string(b.buf)
}

// startTool emits a tool_start, once per tool_use id.
func (p *parser) startTool(dst []event.Body, id, name, input, parent string) []event.Body {
	if _, ok := p.calls[id]; ok || p.ended.Has(id) {
		return dst
	}
	id, name = strings.Clone(id), strings.Clone(name)
	if name == "" {
		name = "unknown" // a tool_use without a name; the stream needs one
	}
	ts, c := toolStart(id, name, input)
	ts.ParentCallID = strings.Clone(parent)
	p.calls[id] = c
	p.files.TouchedBy(c.kind)
	return append(dst, ts)
}

// assistant handles an assistant line: usually one content block of an API
// message, which may have been streamed already.
func (p *parser) assistant(dst []event.Body, t *top) []event.Body {
	// The message and its blocks were read with the line, in one pass:
	// this is the line every turn of every agent run produces.
	msgID, usage := t.msg.id, t.msg.usage
	errCode := t.errCode
	st := p.stream(t.parent, false)
	matched := st != nil && st.msgID != "" && st.msgID == msgID
	var errText string
	for i := range t.msg.blocks {
		blk := t.msg.block(i)
		typ, text, thinking, id, name, input := blk.typ, blk.text, blk.thinking, blk.id, blk.name, blk.input
		var b *block
		if matched {
			b = st.block(int64(st.seen))
			st.seen++
		}
		switch typ {
		case "text":
			if errCode != "" {
				// The synthetic "API Error: …" message is the error's text.
				if errText == "" {
					errText = text
				}
				continue
			}
			if b != nil && b.typ == blockText {
				if b.done {
					continue
				}
				b.done = true
			}
			if text != "" {
				dst = append(dst, &event.Message{Role: event.RoleAssistant, Text: strings.Clone(text), MessageID: strings.Clone(msgID), ParentCallID: strings.Clone(t.parent)})
			}
		case "thinking":
			if b != nil && b.typ == blockThinking {
				if b.done {
					continue
				}
				b.done = true
			}
			if thinking != "" {
				dst = append(dst, &event.Reasoning{Text: strings.Clone(thinking), ParentCallID: strings.Clone(t.parent)})
			}
		case "tool_use", "server_tool_use":
			if b != nil && b.typ == blockTool {
				b.done = true
			}
			if !jsonscan.IsObject(input) {
				input = "{}"
			}
			dst = p.startTool(dst, id, name, input, t.parent)
			if c := p.calls[id]; c != nil && c.startedAt.IsZero() && !p.wallClock {
				c.startedAt = parseTime(t.timestamp)
			}
		}
	}
	if errCode == "" {
		if t.parent == "" {
			dst = p.usageLine(dst, msgID, usage)
		}
		return dst
	}
	if errText == "" {
		errText = "Claude reported an error: " + errCode
	}
	status := t.apiStatus
	p.pendingErr = &event.Error{Code: event.ErrAgentError, Message: strings.Clone(errText),
		Class: assistantErrorClass(errCode, status, errText), Status: httpStatus(status)}
	return dst
}

// assistantErrorClass maps assistant.error (and the HTTP status, where
// given) to an error class.
func assistantErrorClass(code string, status int64, text string) string {
	if c := statusClass(status, text); c != "" {
		return c
	}
	switch code {
	case "rate_limit":
		return event.ClassRateLimit
	case "authentication_failed", "billing_error":
		return event.ClassAuth
	case "invalid_request":
		return event.ClassBadRequest
	case "server_error":
		if c := adapters.ClassifyError(text); c != "" && c != event.ClassCrash {
			return c
		}
		return event.ClassServerError
	}
	return adapters.ClassifyError(text)
}

// statusClass is the class of an API error's HTTP status: the status
// given, else the one Claude's "API Error: NNN …" text names. Overload
// (503, 529) is overloaded; any other 5xx is server_error.
func statusClass(status int64, text string) string {
	if status == 0 {
		status = textStatus(text)
	}
	return adapters.ClassifyStatus(int(status))
}

// textStatus reads the status of Claude's "API Error: NNN …" message.
func textStatus(text string) int64 {
	const prefix = "API Error: "
	if !strings.HasPrefix(text, prefix) || len(text) < len(prefix)+3 {
		return 0
	}
	n := int64(0)
	for _, c := range []byte(text[len(prefix) : len(prefix)+3]) {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	if len(text) > len(prefix)+3 && text[len(prefix)+3] >= '0' && text[len(prefix)+3] <= '9' {
		return 0
	}
	return n
}

// httpStatus is the status to report: an HTTP error status, else 0.
func httpStatus(status int64) int {
	if status >= 400 && status < 600 {
		return int(status)
	}
	return 0
}

// user handles tool results (and echoed user text). Its values are read
// with jsonscan, each block in one pass: through gjson, a tool result's
// output (often the largest thing in a stream: whole files read, command
// output) was scanned four times, and decoded once more for nothing, at
// every Get of the block (61 % of harness parse CPU on a stream of Read
// results).
func (p *parser) user(dst []event.Body, t *top) []event.Body {
	content := jsonscan.Get(t.message, "content")
	if jsonscan.IsString(content) {
		if text := ownStr(content); text != "" && !t.synthetic {
			dst = append(dst, &event.Message{Role: event.RoleUser, Text: text})
		}
		return dst
	}
	jsonscan.Values(content, func(raw string) bool {
		var blk resultBlock
		jsonscan.Each(raw, blk.field)
		switch jsonscan.StrOnly(blk.typ) {
		case "tool_result":
			dst = p.toolResult(dst, t, jsonscan.StrOnly(blk.id), blk.output, jsonscan.Bool(blk.isError))
		case "text":
			if text := jsonscan.StrOnly(blk.text); text != "" && !t.synthetic {
				dst = append(dst, &event.Message{Role: event.RoleUser, Text: strings.Clone(text)})
			}
		}
		return true
	})
	return dst
}

// resultBlock is a content block of a user message, raw: the first of
// duplicate members, as jsonscan.Get finds them. It is read with a switch
// on the names, where jsonscan.Pick matched each against a list (claude
// corpus: 341.9 M instructions with Pick, 341.7 M without).
type resultBlock struct {
	typ, text, id, output, isError string
}

func (b *resultBlock) field(k, v string) bool {
	switch k {
	case "type":
		jsonscan.SetFirst(&b.typ, v)
	case "text":
		jsonscan.SetFirst(&b.text, v)
	case "tool_use_id":
		jsonscan.SetFirst(&b.id, v)
	case "content":
		jsonscan.SetFirst(&b.output, v)
	case "is_error":
		jsonscan.SetFirst(&b.isError, v)
	}
	return true
}

// ownStr decodes the JSON string raw into memory of its own (not the
// line's).
func ownStr(raw string) string {
	s := jsonscan.Str(raw)
	if strings.IndexByte(raw, '\\') < 0 {
		s = strings.Clone(s) // undecoded: a view of raw
	}
	return s
}

// toolResult ends the call id with its output (the tool_result's raw
// content) and is_error.
func (p *parser) toolResult(dst []event.Body, t *top, id, output string, isError bool) []event.Body {
	c := p.calls[id]
	if c == nil && p.ended.Has(id) {
		return dst // the same result twice
	}
	if id != "" {
		dst = p.closeStream(dst, id) // a sub-agent's, if this was its Task
	}
	te := &event.ToolEnd{CallID: strings.Clone(id), Status: event.StatusOK, Name: "unknown", Kind: event.KindOther}
	if c != nil {
		te.Name, te.Kind = c.name, c.kind
		p.endCall(id)
	}
	te.Output = resultText(output)
	if isError {
		te.Status = event.StatusError
		if code, ok := exitCode(te.Output); ok && te.Kind == event.KindShell {
			te.ExitCode = event.Int(code)
		} else if looksDenied(te.Output) {
			te.Status = event.StatusDenied
		}
	}
	if deniedByMeta(t.toolResultMeta, id) {
		te.Status = event.StatusDenied
	}
	if c != nil && te.Status == event.StatusOK && (c.kind == event.KindWrite || c.kind == event.KindEdit) {
		switch {
		case c.input != "":
			p.fileChange(te, c, gjson.Parse(t.toolUseResult))
		case c.path != "":
			// Its input was not kept (over the cap): no exact data.
			p.files.Forget(c.path)
			te.Paths, te.DiffSkipped = []string{c.path}, event.DiffSkippedTooLarge
		}
	}
	if c != nil {
		c.input, c.path = "", ""
		if !p.wallClock && !c.startedAt.IsZero() {
			if end := parseTime(t.timestamp); !end.IsZero() && !end.Before(c.startedAt) {
				te.DurationMS, te.DurationNative = end.Sub(c.startedAt).Milliseconds(), true
			}
		}
	}
	return append(dst, te)
}

// endCall moves the open call id to the ended ones.
func (p *parser) endCall(id string) {
	delete(p.calls, id)
	p.ended.Add(id)
}

// deniedByMeta reports whether tool_result_meta (raw) records a refused
// permission decision for id.
func deniedByMeta(raw, id string) bool {
	// Without a refusal's word in it (and no escape that could spell one)
	// there is none to find: most calls were accepted, and gjson's parse
	// said so at a cost (claude corpus: 343.8 M instructions without this
	// check, 341.7 M with).
	if strings.IndexByte(raw, '\\') < 0 && !strings.Contains(raw, "den") && !strings.Contains(raw, "reject") {
		return false
	}
	meta := gjson.Parse(raw)
	if !meta.IsArray() {
		return false
	}
	denied := false
	meta.ForEach(func(_, m gjson.Result) bool {
		if m.Get("id").Str != id {
			return true
		}
		switch m.Get("permission_decision.decision").Str {
		case "deny", "denied", "reject", "rejected":
			denied = true
		}
		return false
	})
	return denied
}

// modelCalls is the number of distinct model calls of the main agent the
// stream showed: the message ids of its assistant lines and streamed
// messages (an API error's synthetic message is none), with those of the
// result's begun_message_ids (Claude Code 2.1.331 on). Claude's own
// num_turns is not it: it counts one more turn for each further tool
// result of parallel tool calls (4 for 3 calls). A call that failed
// before answering has no id and is not counted.
func (p *parser) modelCalls(begun string) int64 {
	n := p.modelIDs
	if !jsonscan.IsArray(begun) {
		return n
	}
	seen := map[string]bool{}
	jsonscan.Values(begun, func(v string) bool {
		id := jsonscan.StrOnly(v)
		if id != "" && !seen[id] && p.usage[id] == nil && !p.counted.Has(id) {
			seen[id] = true
			n++
		}
		return true
	})
	return n
}

// result handles the terminal line. Claude's is_error is the truth: an API
// failure ends with subtype "success" and is_error true. A subtype error_*
// is an error as well, whatever is_error says. The usage events emitted so
// far are topped up to Claude's totals. A failed run's terminal error is
// fatal, and its result text (Claude puts the error message there) is
// empty: the error event carries the message.
func (p *parser) result(dst []event.Body, t *top) []event.Body {
	isErr, subtype, text, session := t.isError, t.subtype, jsonscan.StrOnly(t.result), jsonscan.StrOnly(t.session)
	turns, durMS, apiStatus := p.modelCalls(t.begun), t.durationMS, t.apiStatus
	if turns == 0 {
		turns = t.numTurns // no call answered, or its lines are not in the stream
	}
	var cost *float64
	if v := gjson.Parse(t.cost); v.Type == gjson.Number {
		cost = event.Float(v.Num)
	}
	errs, denials := gjson.Parse(t.errs), gjson.Parse(t.den)
	// Calls Claude refused and never answered with a tool_result.
	denials.ForEach(func(_, d gjson.Result) bool {
		id := d.Get("tool_use_id").Str
		if c := p.calls[id]; c != nil {
			p.endCall(id)
			dst = append(dst, &event.ToolEnd{CallID: strings.Clone(id), Name: c.name, Kind: c.kind,
				Status: event.StatusDenied, Output: "denied: listed in the result's permission_denials"})
		}
		return true
	})
	total := resultUsage(t.usage)
	total.Add(p.left) // the abandoned calls Claude left out
	p.left = event.Usage{}
	p.settle()
	dst = p.usageRest(dst, total)
	isErr = isErr || strings.HasPrefix(subtype, "error")
	r := &event.Result{Status: event.ResultSuccess, Text: strings.Clone(text), SessionID: strings.Clone(session),
		NumTurns: int(turns), DurationMS: durMS, DurationNative: t.hasDuration, CostUSD: cost, Usage: total}
	if !isErr {
		dst = p.releaseErr(dst)
		return append(dst, r)
	}
	r.Status, r.Text = event.ResultError, ""
	e := p.pendingErr
	p.pendingErr = nil
	if e == nil {
		msg := text
		if msg == "" {
			var parts []string
			errs.ForEach(func(_, e gjson.Result) bool {
				if e.String() != "" {
					parts = append(parts, e.String())
				}
				return true
			})
			msg = strings.Join(parts, "; ")
		}
		if msg == "" {
			msg = "Claude ended with " + cmp.Or(subtype, "an error")
		}
		class := statusClass(apiStatus, msg)
		if class == "" {
			class = adapters.ClassifyError(msg)
		}
		e = &event.Error{Code: event.ErrAgentError, Message: strings.Clone(msg), Class: class}
	}
	if e.Status == 0 {
		e.Status = httpStatus(apiStatus)
	}
	if s := statusClass(int64(e.Status), ""); s != "" {
		e.Class = s
	}
	e.Fatal, e.Partial = true, &event.Partial{}
	dst = append(dst, e)
	return append(dst, r)
}

// resultUsage converts result.usage (raw JSON), which is in the unified
// meaning already.
func resultUsage(raw string) event.Usage {
	u, _ := readUsage(raw)
	return u
}

// system handles system lines: init opens the session, api_retry warns,
// the other subtypes (status, hooks, compaction, tasks…) carry nothing the
// unified stream has a place for.
func (p *parser) system(dst []event.Body, s string, t *top) []event.Body {
	switch t.subtype {
	case "init":
		p.cwd = strings.Clone(jsonscan.StrOnly(t.cwd))
		p.sessionID = strings.Clone(jsonscan.StrOnly(t.session))
		ss := &event.SessionStart{Agent: "claude", SessionID: p.sessionID,
			Model: strings.Clone(jsonscan.StrOnly(t.model)), Cwd: p.cwd,
			AgentVersion: strings.Clone(jsonscan.StrOnly(t.version))}
		// The stream keeps the first tool list it is given (a resumed
		// or concatenated stream repeats init at every run): a later
		// list would be copied only to be dropped, thirty strings a line.
		if !p.toolsKnown {
			jsonscan.Values(t.tools, func(v string) bool {
				if name := jsonscan.StrOnly(v); name != "" {
					ss.Tools = append(ss.Tools, strings.Clone(name))
				}
				return true
			})
			p.toolsKnown = len(ss.Tools) > 0
		}
		return append(dst, ss)
	case "api_retry":
		return append(dst, retryWarning(s))
	}
	return dst
}

func retryWarning(s string) *event.Warning {
	var b strings.Builder
	b.WriteString("API request failed")
	status := gjson.Get(s, "error_status")
	errName := gjson.Get(s, "error").String()
	switch {
	case status.Type == gjson.Number && errName != "":
		b.WriteString(" (HTTP " + status.Raw + ", " + errName + ")")
	case status.Type == gjson.Number:
		b.WriteString(" (HTTP " + status.Raw + ")")
	case errName != "":
		b.WriteString(" (" + errName + ")")
	}
	b.WriteString("; retry " + strconv.FormatInt(gjson.Get(s, "attempt").Int(), 10))
	if m := gjson.Get(s, "max_retries"); m.Exists() {
		b.WriteString(" of " + strconv.FormatInt(m.Int(), 10))
	}
	if d := gjson.Get(s, "retry_delay_ms"); d.Exists() {
		b.WriteString(" in " + strconv.FormatInt(d.Int(), 10) + " ms")
	}
	return &event.Warning{Code: event.WarnAgentRetry, Message: b.String()}
}
