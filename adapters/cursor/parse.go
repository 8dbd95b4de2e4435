package cursor

import (
	"bytes"
	"hash/maphash"
	"regexp"
	"strings"
	"sync"

	"github.com/agentharness/harness/internal/ansi"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/adapters/internal/known"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fewmap"
	"github.com/agentharness/harness/internal/idset"
)

// maxErrorText caps the message of an error built from a raw stdout line.
const maxErrorText = 8 << 10

// keepText caps what the parser keeps of one streamed block (a segment's
// text, a reasoning block) for its complete message: one byte over what
// the Stream emits, so that the Stream cuts it there and marks the cut,
// whatever the size of the block. The deltas are all streamed.
const keepText = event.MaxTextBytes + 1

// parser holds one run's state.
//
// With --stream-partial-output Cursor sends each piece of assistant text as
// an assistant event carrying timestamp_ms, then repeats the whole text once
// more as a consolidated event (with model_call_id before tool calls, or
// without timestamp_ms at the end). The parser turns the pieces into
// text_delta events, emits one message per segment, and drops the repeat. A
// segment ends at each tool call and at the result.
type parser struct {
	scratch read // the line Parse reads, kept from line to line: a kilobyte a line for some

	seg      capped                    // text of the current segment's chunks
	chunks   bool                      // chunks were seen in the current segment and not yet closed into a message
	lastSeg  closed                    // the segment closed last, to drop its consolidated repeat
	thinking capped                    // reasoning deltas not yet closed by thinking/completed
	started  fewmap.Map[uint64, int64] // calls announced by tool_call/started and not yet completed, by callKey: their timestamp_ms
	seed     maphash.Seed              // of callKey
	lines    jsonscan.Lines            // copies of the lines
	// ended holds the ids of the calls that completed (hashes only), so
	// that a completed line given again opens no second call.
	ended idset.Set

	// final is the final answer so far: the complete assistant text since
	// the last tool call (text before a tool call is commentary). sawText
	// is set once any assistant text was seen.
	final   capped
	sawText bool
	cwd     string      // the run's directory (system/init), for diff headers
	files   known.Files // file contents the stream showed exactly, by absolute path
	// wallClock leaves tool durations to the harness's clock (live runs,
	// UseWallClock); harness parse takes them from Cursor's timestamps.
	wallClock bool
	// earliestMS and latestMS bound Cursor's stamps seen so far
	// (NativeSpan), 0 before one.
	earliestMS, latestMS int64
}

func newParser() *parser {
	return &parser{seed: maphash.MakeSeed(), files: known.New(known.MaxFile, known.MaxTotal, known.KeepOthers)}
}

// Parse implements adapters.Parser: read finds the line's fields (it sets
// all of p.scratch), then apply turns them into bodies with p's state.
// LinesStay implements adapters.LinesKept.
func (p *parser) LinesStay() { p.lines.Stay() }

func (p *parser) Parse(dst []event.Body, raw []byte) ([]event.Body, bool) {
	p.read(&p.scratch, raw)
	return p.apply(dst, &p.scratch)
}

// UseWallClock implements adapters.WallClocked: tool_end durations are
// left to the caller's clock instead of Cursor's own (the default, read
// from the lines).
func (p *parser) UseWallClock() { p.wallClock = true }

// NativeSpan implements adapters.NativeSpanned: from the earliest of
// Cursor's stamps to the latest — the timestamp_ms of the lines understood
// and the tool calls' startedAtMs and completedAtMs, which are out of line
// order (a completed line carries its call's start).
func (p *parser) NativeSpan() (int64, bool) {
	return p.latestMS - p.earliestMS, p.earliestMS > 0
}

// stamped widens the span of Cursor's stamps to ms, 0 when unknown.
func (p *parser) stamped(ms int64) {
	if ms <= 0 {
		return
	}
	if p.earliestMS == 0 || ms < p.earliestMS {
		p.earliestMS = ms
	}
	p.latestMS = max(p.latestMS, ms)
}

// capped is text kept up to keepText bytes; what is over is counted, not
// kept.
type capped struct {
	b   strings.Builder
	len int // the whole text's length
}

func (c *capped) WriteString(s string) {
	c.len += len(s)
	if room := keepText - c.b.Len(); room > 0 {
		c.b.WriteString(s[:min(room, len(s))])
	}
}

func (c *capped) String() string { return c.b.String() }
func (c *capped) Len() int       { return c.len }
func (c *capped) Cut() bool      { return c.len > c.b.Len() }
func (c *capped) Reset()         { c.b.Reset(); c.len = 0 }

// closed is a closed segment: the text its message carries (capped; the
// message's string, not a copy) and the whole text's length.
type closed struct {
	text string
	len  int
}

// Is reports whether text is the text c stands for.
func (c closed) Is(text string) bool {
	return len(text) == c.len && strings.HasPrefix(text, c.text)
}

// fields are the top-level members of a line the parser reads, collected
// in one pass over the line with jsonscan (gjson's Get would scan it again
// for each, and its ForEach parses every value it passes). As with
// ForEach, the last of duplicate keys wins. Nested values are kept raw.
type fields struct {
	typ, subtype, text, callID    string
	sessionID, model, cwd, result string
	timestamp                     int64
	hasTimestamp, hasModelCall    bool
	isError                       bool
	durationMS                    int64
	hasDuration                   bool   // the line says duration_ms, perhaps 0
	toolCall, usage, err          string // raw JSON
	msgText                       string // the text of message.content, read with message
	call                          call   // tool_call, read with the line when it is an object
	hasCall                       bool
}

// read reads the line s into f, which must be empty, and reports whether
// s held nothing past its object (jsonscan.Trailing). s must be a string
// the parser may keep pieces of (a copy of the line).
func (f *fields) read(s string) (whole bool) {
	// Nested values the parser reads (message, tool_call) are read in the
	// same pass as the line, not skipped and walked again.
	end := jsonscan.Fields(s, func(k, rest string) (int, bool) {
		switch k {
		case "message":
			f.msgText = ""
			seen := false // the first content wins, as with Get
			n := jsonscan.Fields(rest, func(k, rest string) (int, bool) {
				if k != "content" || seen {
					return 0, true
				}
				seen = true
				var n int
				f.msgText, n = messageText(rest)
				return n, true
			})
			if n == 0 {
				n = len(jsonscan.Value(rest))
			}
			return n, true
		case "tool_call":
			if f.toolCall != "" {
				f.call, f.hasCall = call{}, false // the last tool_call wins
			}
			if n := f.call.read(rest); n > 0 {
				f.toolCall, f.hasCall = rest[:n], true
				return n, true
			}
			f.toolCall = jsonscan.Value(rest)
			return len(f.toolCall), true
		}
		// Each member is decoded as it is skipped: n is its length, or 0
		// to have Fields skip it.
		var n int
		switch k {
		case "type":
			f.typ, n = jsonscan.StrValue(rest)
		case "subtype":
			f.subtype, n = jsonscan.StrValue(rest)
		case "text":
			f.text, n = jsonscan.StrValue(rest)
		case "call_id":
			f.callID, n = jsonscan.StrValue(rest)
		case "session_id":
			f.sessionID, n = jsonscan.StrValue(rest)
		case "model":
			f.model, n = jsonscan.StrValue(rest)
		case "cwd":
			f.cwd, n = jsonscan.StrValue(rest)
		case "result":
			f.result, n = jsonscan.StrValue(rest)
		case "timestamp_ms":
			f.hasTimestamp = true
			f.timestamp, n = jsonscan.IntValue(rest)
		case "model_call_id":
			f.hasModelCall = true
		case "is_error":
			v := jsonscan.Value(rest)
			f.isError, n = jsonscan.Bool(v), len(v)
		case "duration_ms":
			f.durationMS, n = jsonscan.IntValue(rest)
			f.hasDuration = jsonscan.IsNumber(rest)
		case "usage":
			f.usage = jsonscan.Value(rest)
			n = len(f.usage)
		case "error":
			f.err = jsonscan.Value(rest)
			n = len(f.err)
		}
		return n, true
	})
	return !jsonscan.Trailing(s, end)
}

// read is a line as read by parser.read.
type read struct {
	// full is set once r holds a line. Read-ahead slots come empty (Apply
	// empties them); Parse's one slot as the last line left it.
	full    bool
	what    int          // one of the line kinds below
	textErr *event.Error // lineText: the error it reports, if any
	f       fields       // lineObject
}

// Kinds of lines.
const (
	lineUnknown = iota // not an event
	lineText           // Cursor's own plain-text output
	lineObject
)

// read reads line into r. It uses nothing of the parser's state but
// p.lines, which nothing else uses.
func (p *parser) read(r *read, line []byte) {
	if r.full {
		// Only when needed: while the collector marks, clearing a read
		// costs a write barrier for each of its pointers (perf, 200 MB
		// of stream: 3 % of harness parse's CPU when every slot was
		// cleared twice).
		*r = read{}
	}
	r.full = true
	trimmed := line
	if len(line) == 0 || line[0] != '{' || line[len(line)-1] != '}' {
		// Not for every line: an object alone on its line is by far the
		// most common (3 M instructions on the 20 MB Cursor corpus).
		trimmed = bytes.TrimSpace(line)
	}
	switch {
	case len(trimmed) == 0:
		// Not understood, as by every other adapter (docs/events.md,
		// unparsed_line): a blank line is not even one of Cursor's
		// plain-text errors.
		r.what = lineUnknown
	case trimmed[0] == '{':
		// Not validated whole (that would cost a second pass): gjson
		// reads malformed input without failing, and a line cut short
		// does not end with its closing brace.
		if trimmed[len(trimmed)-1] != '}' {
			r.what = lineUnknown
			return
		}
		// One copy of the line (into blocks shared with other lines),
		// which the bodies may keep pieces of.
		r.what = lineObject
		if !r.f.read(p.lines.Copy(trimmed)) {
			r.what = lineUnknown
		}
	case event.ValidJSON(trimmed) || event.JSONTooDeep(trimmed):
		r.what = lineUnknown // JSON, but not an event
	default:
		// Cursor prints its own errors as plain text on stdout.
		r.what, r.textErr = lineText, textError(trimmed)
	}
}

// apply turns a line read by read into bodies, with the parser's state.
func (p *parser) apply(dst []event.Body, r *read) ([]event.Body, bool) {
	dst, known := p.applyLine(dst, r)
	if known && r.what == lineObject && r.f.hasTimestamp {
		p.stamped(r.f.timestamp)
	}
	return dst, known
}

func (p *parser) applyLine(dst []event.Body, r *read) ([]event.Body, bool) {
	switch r.what {
	case lineUnknown:
		return dst, false
	case lineText:
		if r.textErr != nil {
			dst = append(dst, r.textErr)
		}
		return dst, true
	}
	f := &r.f
	switch f.typ {
	case "system":
		if f.subtype != "init" {
			return dst, false
		}
		if p.cwd == "" {
			p.cwd = f.cwd
		}
		return append(dst, &event.SessionStart{SessionID: f.sessionID, Model: f.model, Cwd: f.cwd}), true
	case "user", "interaction_query":
		// The prompt echo, and plan-mode queries the CLI answers itself.
		return dst, true
	case "thinking":
		return p.thinkingEvent(dst, f)
	case "assistant":
		return p.assistant(dst, f), true
	case "tool_call":
		return p.toolCall(dst, f)
	case "result":
		return p.result(dst, f), true
	}
	return dst, false
}

// Flush implements adapters.Parser. Text and reasoning still open when
// the stream ended were never completed: their deltas went out, but they
// are not complete messages, so Flush emits nothing.
func (p *parser) Flush(dst []event.Body) []event.Body {
	p.thinking.Reset()
	p.seg.Reset()
	p.chunks = false
	return dst
}

func (p *parser) thinkingEvent(dst []event.Body, f *fields) ([]event.Body, bool) {
	switch f.subtype {
	case "delta":
		text := f.text
		if text == "" {
			return dst, true
		}
		p.thinking.WriteString(text)
		return append(dst, &event.ReasoningDelta{Text: text}), true
	case "completed":
		return p.closeThinking(dst), true
	}
	return dst, false
}

func (p *parser) closeThinking(dst []event.Body) []event.Body {
	if p.thinking.Len() == 0 {
		return dst
	}
	dst = append(dst, &event.Reasoning{Text: p.thinking.String(), Truncated: p.thinking.Cut()})
	p.thinking.Reset()
	return dst
}

func (p *parser) assistant(dst []event.Body, f *fields) []event.Body {
	dst = p.closeThinking(dst)
	text := f.msgText
	chunk := f.hasTimestamp && !f.hasModelCall
	switch {
	case chunk:
		if text == "" {
			return dst
		}
		p.chunks = true
		p.seg.WriteString(text)
		return append(dst, &event.TextDelta{Text: text})
	case p.chunks:
		// The consolidated repeat of the chunks: the segment is complete.
		return p.closeSegment(dst)
	case p.lastSeg.len > 0 && p.lastSeg.Is(text):
		return dst // a second repeat of a segment already closed
	case text == "":
		return dst
	}
	p.answer(text, len(text))
	return append(dst, &event.Message{Role: event.RoleAssistant, Text: text})
}

// answer adds complete assistant text, of whole bytes before any cut, to
// the final answer.
func (p *parser) answer(text string, whole int) {
	p.sawText = true
	p.final.WriteString(text)
	p.final.len += whole - len(text)
}

// closeSegment emits the message assembled from the current segment's chunks.
func (p *parser) closeSegment(dst []event.Body) []event.Body {
	if !p.chunks {
		return dst
	}
	m := &event.Message{Role: event.RoleAssistant, Text: p.seg.String(), Truncated: p.seg.Cut()}
	p.lastSeg = closed{m.Text, p.seg.Len()}
	p.answer(m.Text, p.seg.Len())
	p.seg.Reset()
	p.chunks = false
	return append(dst, m)
}

// endSegment closes the segment at a tool call or the result.
func (p *parser) endSegment(dst []event.Body) []event.Body {
	dst = p.closeThinking(dst)
	dst = p.closeSegment(dst)
	p.lastSeg = closed{}
	return dst
}

// messageText reads the raw message content at the start of rest and
// returns the text of its text blocks joined (or the content itself when
// it is a string), and the content's length.
func messageText(rest string) (string, int) {
	var text string
	n := 0 // text blocks
	block := func(b string) int {
		var typ, txt string
		end := jsonscan.EachEnd(b, func(k, v string) bool {
			switch k {
			case "type":
				if typ == "" {
					typ = v
				}
			case "text":
				if txt == "" {
					txt = v
				}
			}
			return true
		})
		if t := jsonscan.Str(typ); t == "text" || t == "" {
			s := jsonscan.Str(txt)
			if n == 0 {
				text = s
			} else {
				text += s
			}
			n++
		}
		return end
	}
	if rest != "" && rest[0] == '[' {
		// The blocks are read in the same pass as the line.
		return text, jsonscan.Elems(rest, block)
	}
	v := jsonscan.Value(rest)
	switch {
	case jsonscan.IsString(v):
		text = jsonscan.Str(v)
	case jsonscan.IsObject(v):
		jsonscan.Values(v, func(b string) bool { block(b); return true })
	}
	return text, len(v)
}

func (p *parser) toolCall(dst []event.Body, f *fields) ([]event.Body, bool) {
	if f.subtype != "started" && f.subtype != "completed" {
		return dst, false
	}
	id := f.callID
	if id == "" {
		// event.Stream names an id-less start "call" but not an id-less
		// end; naming both here keeps the pair together.
		id = "call"
	}
	key := p.callKey(id)
	startTS, open := p.started.Get(key)
	if !open && f.subtype == "completed" && f.callID != "" && p.ended.Has(f.callID) {
		// The completion of a call already ended, given again: the
		// Stream would make it a second call. Dropped whole, as Claude
		// drops a repeated tool_result: it ends no text segment either.
		// (An id-less one cannot be told from a new call.)
		return dst, true
	}
	dst = p.endSegment(dst)
	call := &f.call
	if !f.hasCall {
		*call = parseCall(f.toolCall)
	} else {
		call.named()
	}
	// Text before a tool call was commentary, not the final answer.
	p.final.Reset()
	p.stamped(call.startedAt)
	p.stamped(call.completedAt)
	ts := f.timestamp
	if f.subtype == "started" {
		p.started.Set(key, ts)
		return append(dst, call.start(id, &p.lines)), true
	}
	if open {
		p.started.Delete(key)
	}
	if f.callID != "" {
		p.ended.Put(f.callID)
	}
	if !open {
		// Only the completion was seen: announce the call with its input.
		dst = append(dst, call.start(id, &p.lines))
	}
	end := call.end(id)
	p.fileDiff(call, end)
	if !p.wallClock {
		end.DurationMS, end.DurationNative = nativeDuration(call, startTS, ts)
	}
	return append(dst, end), true
}

// callKey is a call id's key in p.started: its hash, exact but for a
// collision of 64-bit hashes (as the Stream's sets of ids are). An open
// call keeps no copy of its id (id is a view of the line, which a string
// key would keep whole), and a lookup hashes eight bytes, not the id.
func (p *parser) callKey(id string) uint64 { return maphash.String(p.seed, id) }

// nativeDuration is a call's duration by Cursor's own clock, ok false
// when the lines do not tell: the tool call's startedAtMs/completedAtMs, else
// the timestamp_ms of its started and completed lines, else a shell's
// executionTime.
func nativeDuration(c *call, startTS, endTS int64) (ms int64, ok bool) {
	if c.startedAt > 0 && c.completedAt >= c.startedAt {
		return c.completedAt - c.startedAt, true
	}
	if startTS > 0 && endTS >= startTS {
		return endTS - startTS, true
	}
	if c.kind == event.KindShell {
		if t := c.env.raw(c.env.executionTime); jsonscan.IsNumber(t) {
			return max(jsonscan.Int(t), 0), true
		}
	}
	return 0, false
}

func (p *parser) result(dst []event.Body, f *fields) []event.Body {
	isErr := f.isError || f.subtype == "error"
	if isErr {
		// Text and reasoning the failure cut off were never completed.
		dst = p.Flush(dst)
	}
	dst = p.endSegment(dst)
	text := f.result
	r := &event.Result{Status: event.ResultSuccess, SessionID: f.sessionID, DurationMS: f.durationMS, DurationNative: f.hasDuration}
	if u := f.usage; jsonscan.IsObject(u) {
		var in, out, cacheRead, cacheWrite string
		jsonscan.Pick(u, []string{"inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"}, &in, &out, &cacheRead, &cacheWrite)
		// The CLI's inputTokens leave the cache out already, as the spec
		// counts them: real results report more cacheReadTokens than
		// inputTokens (paperclipai/paperclip#12908: 229382 in, 2158080
		// read). (@cursor/sdk's inputTokens include the cache; the CLI's
		// result does not.) Cursor reports no reasoning count.
		r.Usage = event.Usage{
			InputTokens:      jsonscan.Int(in),
			OutputTokens:     jsonscan.Int(out),
			CacheReadTokens:  jsonscan.Int(cacheRead),
			CacheWriteTokens: jsonscan.Int(cacheWrite),
		}
		if !r.Usage.IsZero() {
			// Cursor reports usage once per run: it is both the only
			// increment and the total.
			u := r.Usage
			dst = append(dst, &u)
		}
	}
	if !isErr {
		// Cursor's result runs every assistant segment together; the
		// answer is the text after the last tool call. A stream with no
		// assistant lines at all has only the result's own text.
		r.Text = text
		if p.sawText {
			r.Text = p.final.String()
		}
		return append(dst, r)
	}
	r.Status = event.ResultError
	r.Text = p.final.String() // the last complete answer, if any: never the error
	msg := text
	if msg == "" {
		msg = jsonscan.Str(jsonscan.Get(f.err, "message"))
	}
	if msg == "" && jsonscan.IsString(f.err) {
		msg = jsonscan.Str(f.err)
	}
	if msg == "" {
		msg = "cursor reported an error"
		if f.subtype != "" {
			msg += " (" + f.subtype + ")"
		}
	}
	// The run's terminal error: fatal, and never the result's text.
	e := agentError(msg)
	e.Fatal, e.Partial = true, &event.Partial{}
	return append(dst, e, r)
}

// Cursor's own wording, checked before the shared rules: a model the plan
// does not allow is a bad request (the shared rules would read "unavailable"
// as overload), and the login prompt is an auth failure.
var (
	planLimit = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)named models unavailable|free plans? can only use|upgrade (your )?plan`)
	})
	signIn = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)press any key to sign in|\bsign[ -]?in\b|\blog[ -]?in\b|cursor_api_key`)
	})
)

func classify(text string) string {
	if planLimit().MatchString(text) {
		return event.ClassBadRequest
	}
	if c := adapters.ClassifyError(text); c != "" {
		return c
	}
	if signIn().MatchString(text) {
		return event.ClassAuth
	}
	return ""
}

// textError reports a plain-text stdout line (Cursor's raw error output),
// or nil when nothing but terminal escapes is left of it.
func textError(line []byte) *event.Error {
	msg := strings.TrimSpace(ansi.Strip(string(line)))
	if msg == "" {
		return nil
	}
	msg, _ = event.Cut(msg, maxErrorText)
	return agentError(msg)
}

// agentError is the error event of a message Cursor reported, with its
// class and the HTTP status where the text names one.
func agentError(msg string) *event.Error {
	e := &event.Error{Code: event.ErrAgentError, Message: msg, Status: httpStatus(msg)}
	if e.Status != 0 {
		e.Class = adapters.ClassifyStatus(e.Status)
	}
	if e.Class == "" {
		e.Class = classify(msg)
	}
	return e
}

// httpStatus finds an HTTP status in an error text: a three-digit number
// after "status", "status code" or "HTTP" ("request failed with status
// 429: …", "HTTP 500"), or 0.
func httpStatus(msg string) int {
	lower := strings.ToLower(msg)
	for _, marker := range [...]string{"status code ", "status code: ", "status ", "status: ", "http "} {
		for i := 0; ; {
			j := strings.Index(lower[i:], marker)
			if j < 0 {
				break
			}
			rest := lower[i+j+len(marker):]
			if len(rest) >= 3 && isDigit(rest[0]) && isDigit(rest[1]) && isDigit(rest[2]) && (len(rest) == 3 || !isDigit(rest[3])) {
				if code := int(rest[0]-'0')*100 + int(rest[1]-'0')*10 + int(rest[2]-'0'); code >= 400 && code <= 599 {
					return code
				}
			}
			i += j + len(marker)
		}
	}
	return 0
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }
