package event

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"sync"
	"unicode/utf8"
)

// MaxLineBytes is the longest line the stream may carry (spec: 1 MiB).
const MaxLineBytes = 1 << 20

// AppendJSON appends ev as one JSON object (no newline) to dst. Strings are
// written as valid UTF-8 (invalid bytes become U+FFFD) without HTML escaping.
func AppendJSON(dst []byte, ev Event) ([]byte, error) {
	return (*Appender)(nil).Append(dst, ev)
}

// Appender is AppendJSON for a sequence of events: it keeps the encoding of
// the run id, the seq and the timestamp, which repeat (or, for seq, go up
// by one) from one event to the next. The zero value is ready to use, and
// so is a nil *Appender (it keeps nothing). An Appender is not safe for
// concurrent use.
type Appender struct {
	run    string
	runEnc []byte // `","run":"<run>","seq":`
	seq    int64
	seqEnc []byte // seq in decimal
	ts     int64
	tsEnc  []byte // `,"ts":<ts>`
}

// Append appends ev as AppendJSON does.
func (a *Appender) Append(dst []byte, ev Event) ([]byte, error) {
	if ev.Body == nil {
		return dst, errors.New("event: nil body")
	}
	if ev.V == Version {
		dst = append(dst, `{"v":1,"type":"`...)
	} else {
		dst = append(dst, `{"v":`...)
		dst = strconv.AppendInt(dst, int64(ev.V), 10)
		dst = append(dst, `,"type":"`...)
	}
	dst = append(dst, ev.Body.EventType()...)
	if a == nil {
		dst = append(dst, `","run":`...)
		dst = AppendString(dst, ev.Run)
		dst = append(dst, `,"seq":`...)
		dst = strconv.AppendInt(dst, ev.Seq, 10)
		dst = append(dst, `,"ts":`...)
		dst = strconv.AppendInt(dst, ev.TS, 10)
		return appendBody(dst, ev.Body)
	}
	// What an event shares with the one before is kept encoded, and the
	// seq counted up in decimal rather than formatted: 120 to 145
	// instructions an event less than the fields appended one by one
	// (callgrind, harness parse of claude and cursor streams).
	if a.runEnc == nil || ev.Run != a.run {
		a.run = ev.Run
		a.runEnc = append(AppendString(append(a.runEnc[:0], `","run":`...), ev.Run), `,"seq":`...)
	}
	dst = append(dst, a.runEnc...)
	if ev.Seq > 1 && ev.Seq-1 == a.seq {
		a.seqEnc = incDecimal(a.seqEnc)
	} else {
		a.seqEnc = strconv.AppendInt(a.seqEnc[:0], ev.Seq, 10)
	}
	a.seq = ev.Seq
	dst = append(dst, a.seqEnc...)
	if a.tsEnc == nil || ev.TS != a.ts {
		a.ts, a.tsEnc = ev.TS, strconv.AppendInt(append(a.tsEnc[:0], `,"ts":`...), ev.TS, 10)
	}
	dst = append(dst, a.tsEnc...)
	return appendBody(dst, ev.Body)
}

// incDecimal adds one to the positive decimal number d.
func incDecimal(d []byte) []byte {
	for i := len(d) - 1; i >= 0; i-- {
		if d[i] < '9' {
			d[i]++
			return d
		}
		d[i] = '0'
	}
	return append([]byte{'1'}, d...) // 99 -> 100
}

// appendBody appends the fields of b and the closing brace.
func appendBody(dst []byte, b Body) ([]byte, error) {
	// Every body a run emits often is encoded by hand.
	switch b := b.(type) {
	case *TextDelta:
		dst = append(dst, `,"text":`...)
		dst = AppendString(dst, b.Text)
		dst = appendStringField(dst, "message_id", b.MessageID)
		dst = appendStringField(dst, "parent_call_id", b.ParentCallID)
		return append(dst, '}'), nil
	case *ReasoningDelta:
		dst = append(dst, `,"text":`...)
		dst = AppendString(dst, b.Text)
		dst = appendStringField(dst, "parent_call_id", b.ParentCallID)
		return append(dst, '}'), nil
	case *Message:
		dst = append(dst, `,"role":`...)
		dst = AppendString(dst, b.Role)
		dst = append(dst, `,"text":`...)
		dst = AppendString(dst, b.Text)
		dst = appendStringField(dst, "message_id", b.MessageID)
		dst = appendStringField(dst, "parent_call_id", b.ParentCallID)
		if b.Truncated {
			dst = append(dst, `,"truncated":true`...)
		}
		return append(dst, '}'), nil
	case *Reasoning:
		dst = append(dst, `,"text":`...)
		dst = AppendString(dst, b.Text)
		dst = appendStringField(dst, "parent_call_id", b.ParentCallID)
		if b.Truncated {
			dst = append(dst, `,"truncated":true`...)
		}
		return append(dst, '}'), nil
	case *ToolStart:
		if len(b.Input) == 0 {
			break // encoding/json's error
		}
		mark := len(dst)
		dst = appendCall(dst, b.CallID, b.Name, b.Kind)
		dst = append(dst, `,"input":`...)
		if b.inputCompact {
			dst = append(dst, b.Input...) // checked and compacted by the Stream
		} else {
			var err error
			if dst, err = appendCompact(dst, b.Input); err != nil {
				dst = dst[:mark]
				break
			}
		}
		if b.InputTruncated {
			dst = append(dst, `,"input_truncated":true`...)
		}
		dst = appendStringField(dst, "command", b.Command)
		dst = appendStringField(dst, "path", b.Path)
		dst = appendPaths(dst, b.Paths)
		dst = appendStringField(dst, "parent_call_id", b.ParentCallID)
		return append(dst, '}'), nil
	case *ToolEnd:
		dst = appendCall(dst, b.CallID, b.Name, b.Kind)
		dst = append(dst, `,"status":`...)
		dst = AppendString(dst, b.Status)
		dst = appendStringField(dst, "output", b.Output)
		if b.OutputTruncated {
			dst = append(dst, `,"output_truncated":true`...)
		}
		if b.ExitCode != nil {
			dst = append(dst, `,"exit_code":`...)
			dst = strconv.AppendInt(dst, int64(*b.ExitCode), 10)
		}
		dst = append(dst, `,"duration_ms":`...)
		dst = strconv.AppendInt(dst, b.DurationMS, 10)
		if b.Synthetic {
			dst = append(dst, `,"synthetic":true`...)
		}
		dst = appendPaths(dst, b.Paths)
		dst = appendStringField(dst, "diff", b.Diff)
		if b.DiffTruncated {
			dst = append(dst, `,"diff_truncated":true`...)
		}
		dst = appendStringField(dst, "diff_skipped", b.DiffSkipped)
		return append(dst, '}'), nil
	case *Warning:
		dst = append(dst, `,"code":`...)
		dst = AppendString(dst, b.Code)
		dst = append(dst, `,"message":`...)
		dst = AppendString(dst, b.Message)
		dst = appendIntField(dst, "idle_ms", b.IdleMS)
		dst = appendIntField(dst, "abort_in_ms", b.AbortInMS)
		dst = appendStringField(dst, "call_id", b.CallID)
		dst = appendStringField(dst, "name", b.Name)
		dst = appendIntField(dst, "elapsed_ms", b.ElapsedMS)
		dst = appendIntField(dst, "budget_ms", b.BudgetMS)
		if b.LineGiven {
			dst = append(dst, `,"bytes":`...)
			dst = strconv.AppendInt(dst, b.Bytes, 10)
			dst = append(dst, `,"line":`...)
			dst = AppendString(dst, b.Line)
		} else {
			dst = appendIntField(dst, "bytes", b.Bytes)
			dst = appendStringField(dst, "line", b.Line)
		}
		if b.Truncated {
			dst = append(dst, `,"truncated":true`...)
		}
		return append(dst, '}'), nil
	case *Error:
		if b.Partial != nil || len(b.Tried) > 0 {
			break // a fatal error's partial run, not_installed's places: rare
		}
		// An agent's errors may come once a tool call (a loop detected,
		// a tool refused): through encoding/json each cost as much as
		// forty tool calls.
		dst = append(dst, `,"code":`...)
		dst = AppendString(dst, b.Code)
		dst = append(dst, `,"message":`...)
		dst = AppendString(dst, b.Message)
		dst = append(dst, `,"fatal":`...)
		dst = strconv.AppendBool(dst, b.Fatal)
		dst = appendStringField(dst, "class", b.Class)
		if b.Killed != nil {
			dst = append(dst, `,"killed":`...)
			dst = strconv.AppendBool(dst, *b.Killed)
		}
		dst = appendStringField(dst, "signal", b.Signal)
		dst = appendStringField(dst, "hint", b.Hint)
		if b.ExitCode != nil {
			dst = append(dst, `,"exit_code":`...)
			dst = strconv.AppendInt(dst, int64(*b.ExitCode), 10)
		}
		dst = appendIntField(dst, "http_status", int64(b.Status))
		return append(dst, '}'), nil
	case *Usage:
		dst = appendIntField(dst, "input_tokens", b.InputTokens)
		dst = appendIntField(dst, "output_tokens", b.OutputTokens)
		dst = appendIntField(dst, "cache_read_tokens", b.CacheReadTokens)
		dst = appendIntField(dst, "cache_write_tokens", b.CacheWriteTokens)
		dst = appendIntField(dst, "reasoning_tokens", b.ReasoningTokens)
		if b.CostUSD != 0 {
			dst = append(dst, `,"cost_usd":`...)
			dst = appendFloat(dst, b.CostUSD)
		}
		if b.CostEstimated {
			dst = append(dst, `,"cost_estimated":true`...)
		}
		return append(dst, '}'), nil
	}
	return appendReflected(dst, b)
}

// appendCall appends the fields that name a tool call, first in both of
// its events.
func appendCall(dst []byte, callID, name string, kind Kind) []byte {
	dst = append(dst, `,"call_id":`...)
	dst = AppendString(dst, callID)
	dst = append(dst, `,"name":`...)
	dst = AppendString(dst, name)
	dst = append(dst, `,"kind":`...)
	return AppendString(dst, string(kind))
}

func appendStringField(dst []byte, key, v string) []byte {
	if v == "" {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return AppendString(dst, v)
}

func appendIntField(dst []byte, key string, v int64) []byte {
	if v == 0 {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return strconv.AppendInt(dst, v, 10)
}

// appendFloat formats f as encoding/json does. A NaN or an infinity,
// which JSON cannot hold (the Stream keeps them out), is clamped rather
// than breaking the line.
func appendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		f = 0
	case math.IsInf(f, 0):
		f = math.Copysign(math.MaxFloat64, f)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' { // e-09 -> e-9
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// appendReflected encodes the rarer bodies with encoding/json and splices
// their fields after the envelope.
func appendReflected(dst []byte, b Body) ([]byte, error) {
	buf := bodyBufs.Get().(*bytes.Buffer)
	defer bodyBufs.Put(buf)
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b); err != nil {
		return dst, fmt.Errorf("event: encode %s: %w", b.EventType(), err)
	}
	body := bytes.TrimRight(buf.Bytes(), "\n")
	if len(body) > 2 { // not "{}"
		dst = append(dst, ',')
		dst = append(dst, body[1:len(body)-1]...)
	}
	return append(dst, '}'), nil
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, as encoding/json does without HTML
// escaping: invalid UTF-8 becomes U+FFFD and U+2028/U+2029 are escaped.
func AppendString(dst []byte, s string) []byte {
	// Most strings need no escaping at all: check eight bytes at a time
	// (the last eight again, overlapping, for the tail) and copy s whole.
	i := 0
	for last := len(s) - 8; i <= last; i += 8 { // no bounds check, as in logger's scan
		if !plain8(s[i : i+8]) {
			return appendEscaped(append(dst, '"'), s, i)
		}
	}
	if i < len(s) {
		if len(s) >= 8 {
			if !plain8(s[len(s)-8:]) {
				return appendEscaped(append(dst, '"'), s, i)
			}
		} else {
			for j := i; j < len(s); j++ {
				if c := s[j]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
					return appendEscaped(append(dst, '"'), s, j)
				}
			}
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// appendEscaped appends the rest of the JSON string s, from i on (s[:i]
// needs no escaping), and its closing quote.
func appendEscaped(dst []byte, s string, i int) []byte {
	start := 0
	for last := len(s) - 8; i < len(s); {
		if i <= last {
			m := escapes8(s[i : i+8])
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3 // s[i:] up to there needs none
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const (
	lsb8 = 0x0101010101010101
	msb8 = 0x8080808080808080
)

// plain8 reports whether the 8 bytes of s (len(s) == 8) need no escaping:
// none is a control character, '"', '\\' or outside ASCII. It tests all
// eight at once with the has-zero-byte trick.
func plain8(s string) bool { return escapes8(s) == 0 }

// escapes8 marks (the high bit of its byte) the first of the 8 bytes of s
// that may need escaping, and perhaps later ones: the lowest mark is exact.
func escapes8(s string) uint64 {
	return escapeMask(binary.LittleEndian.Uint64([]byte(s))) // no copy: the compiler sees through it
}

// escapeMask is escapes8 of the 8 bytes of v.
func escapeMask(v uint64) uint64 {
	// As v|quoteOrControl8(v), but a byte past ASCII is marked by v
	// itself, so the &^ of each term (which only unmarks such bytes) can
	// go: 4 operations less on every 8 bytes of every string encoded.
	// The subtractions borrow only from a marked byte, into later ones.
	return (v | (v - 0x20*lsb8) | ((v ^ '"'*lsb8) - lsb8) | ((v ^ '\\'*lsb8) - lsb8)) & msb8
}

// quoteOrControl8 marks (as escapes8) the first of the 8 bytes of v that
// is a quote, a backslash or below 0x20, and perhaps later ones.
func quoteOrControl8(v uint64) uint64 {
	q, b := v^('"'*lsb8), v^('\\'*lsb8)
	bad := (v-0x20*lsb8)&^v | // below 0x20
		(q-lsb8)&^q |
		(b-lsb8)&^b
	return bad & msb8
}

// Encoder writes events as NDJSON, one line per event, flushed at once.
// It is safe for concurrent use.
type Encoder struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	app Appender
}

// NewEncoder returns an Encoder writing to w. Each Encode is a single Write
// of one whole line, so w needs no buffering of its own.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// Encode writes ev and a newline.
func (e *Encoder) Encode(ev Event) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var err error
	e.buf, err = e.app.Append(e.buf[:0], ev)
	if err != nil {
		return err
	}
	e.buf = append(e.buf, '\n')
	_, err = e.w.Write(e.buf)
	if cap(e.buf) > 4*MaxLineBytes { // don't pin one huge line's buffer
		e.buf = nil
	}
	return err
}

type envelope struct {
	V    *int   `json:"v"`
	Type Type   `json:"type"`
	Run  string `json:"run"`
	Seq  int64  `json:"seq"`
	TS   int64  `json:"ts"`
}

// ErrUnknownType is Decode's error for a well-formed line of version 1
// whose type this version does not know: one a later harness may write,
// since version 1 only grows (docs/events.md). ReadAll, ReadLog and
// ScanLog skip such a line.
var ErrUnknownType = errors.New("unknown type")

// Decode parses one line of the stream. Unknown fields are ignored, as the
// spec asks of readers; an unknown type is an error, ErrUnknownType when
// the line is of version 1.
func Decode(line []byte) (Event, error) {
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		return Event{}, fmt.Errorf("event: decode: %w", err)
	}
	// A line of another version, or of none, is not read as one of this
	// version, whatever its type: a later harness may give a known type
	// other fields or meanings (docs/events.md).
	if env.V == nil {
		return Event{}, errors.New(`event: decode: no "v" (version)`)
	}
	if *env.V != Version {
		return Event{}, fmt.Errorf("event: decode: version %d, this harness reads %d", *env.V, Version)
	}
	body := NewBody(env.Type)
	if body == nil {
		// Only a type added within version 1 may be passed over: a line
		// of no type is not one old readers can know they may ignore.
		if env.Type != "" {
			return Event{}, fmt.Errorf("event: decode: %w %q", ErrUnknownType, env.Type)
		}
		return Event{}, fmt.Errorf("event: decode: unknown type %q", env.Type)
	}
	if err := json.Unmarshal(line, body); err != nil {
		return Event{}, fmt.Errorf("event: decode %s: %w", env.Type, err)
	}
	if w, ok := body.(*Warning); ok {
		w.LineGiven = lineGiven(line)
	}
	return Event{V: *env.V, Type: env.Type, Run: env.Run, Seq: env.Seq, TS: env.TS, Body: body}, nil
}

// lineGiven reports whether the warning line has both "bytes" and "line",
// which LineGiven (not itself encoded) stands for: without it a decoded
// unparsed_line warning of an empty line would re-encode without them.
func lineGiven(line []byte) bool {
	var keys struct {
		Bytes *int64  `json:"bytes"`
		Line  *string `json:"line"`
	}
	return json.Unmarshal(line, &keys) == nil && keys.Bytes != nil && keys.Line != nil
}

// ReadAll decodes every line of an NDJSON stream. A line of a type this
// version does not know (ErrUnknownType) is skipped. It stops at the first
// malformed line and returns the events before it with the error.
func ReadAll(r io.Reader) ([]Event, error) {
	evs, _, err := readAll(r, false)
	return evs, err
}

// ReadLog is ReadAll for a session log's event stream, which its harness
// may still be writing or was killed writing: a last line that has no
// newline and does not decode is a write not finished. It is left out,
// and cut says so, however long it is (its bytes are read, not held). A
// line of an unknown type is skipped, as by ReadAll. Any other line that
// does not decode, or is over the cap, is an error naming it.
func ReadLog(r io.Reader) (evs []Event, cut bool, err error) { return readAll(r, true) }

// ScanLog is ReadLog handing each event to fn as it is decoded instead of
// returning them all: it holds one line at a time, for a log too big to
// hold. An error of fn ends the scan and is returned as it is.
func ScanLog(r io.Reader, fn func(Event) error) (cut bool, err error) { return scan(r, true, fn) }

// maxReadLine is the longest line readAll decodes, without its newline:
// room over MaxLineBytes for a log of an older harness.
const maxReadLine = 4 * MaxLineBytes

func readAll(r io.Reader, cutOK bool) (evs []Event, cut bool, err error) {
	cut, err = scan(r, cutOK, func(ev Event) error {
		evs = append(evs, ev)
		return nil
	})
	return evs, cut, err
}

func scan(r io.Reader, cutOK bool, fn func(Event) error) (cut bool, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for n := 1; ; n++ {
		var line []byte
		var terminated, over bool
		line, buf, terminated, over, err = readLogLine(br, buf)
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if over {
			if cutOK && !terminated {
				return true, nil
			}
			return false, fmt.Errorf("line %d: %w", n, bufio.ErrTooLong)
		}
		ev, err := Decode(line)
		if errors.Is(err, ErrUnknownType) {
			continue // a later harness's event: the spec lets readers ignore it
		}
		if err != nil {
			if cutOK && !terminated {
				return true, nil
			}
			return false, fmt.Errorf("line %d: %w", n, err)
		}
		if err := fn(ev); err != nil {
			return false, err
		}
	}
}

// readLogLine reads the next line of br into buf (returned, to be reused) as
// bufio.ScanLines splits lines: without its newline or a \r before it.
// terminated says it ended in a newline. A line over maxReadLine is read
// to its end and dropped, not held: over, and line nil. io.EOF: no line
// is left.
func readLogLine(br *bufio.Reader, buf []byte) (line, kept []byte, terminated, over bool, err error) {
	kept = buf[:0]
	read := false
	for {
		frag, ferr := br.ReadSlice('\n')
		read = read || len(frag) > 0
		if ferr != nil && ferr != bufio.ErrBufferFull && ferr != io.EOF {
			return nil, kept, false, false, ferr
		}
		terminated = ferr == nil
		size := len(kept) + len(frag)
		if terminated {
			size--
		}
		if !over && size > maxReadLine {
			over, kept = true, kept[:0]
		}
		if !over {
			kept = append(kept, frag...)
		}
		if ferr != bufio.ErrBufferFull {
			break
		}
	}
	if !read {
		return nil, kept, false, false, io.EOF
	}
	if over {
		return nil, kept, terminated, true, nil
	}
	line = kept
	if terminated {
		line = line[:len(line)-1]
	}
	return bytes.TrimSuffix(line, []byte{'\r'}), kept, terminated, false, nil
}

// MarshalJSON encodes ev with its envelope.
func (ev Event) MarshalJSON() ([]byte, error) { return AppendJSON(nil, ev) }

// UnmarshalJSON decodes one event with its envelope.
func (ev *Event) UnmarshalJSON(b []byte) error {
	d, err := Decode(b)
	if err != nil {
		return err
	}
	*ev = d
	return nil
}

// appendCompact appends the JSON value raw compacted, as encoding/json
// writes a RawMessage (no HTML escaping); invalid JSON is an error.
func appendCompact(dst []byte, raw []byte) ([]byte, error) {
	out, ok := AppendCompactJSON(dst, raw)
	if !ok {
		return dst, errors.New("event: invalid raw JSON")
	}
	return out, nil
}

// AppendCompactJSON appends the JSON value raw without insignificant white
// space, as encoding/json's Compact does without HTML escaping; invalid
// UTF-8 inside strings becomes U+FFFD. ok is false, and dst unchanged, when
// raw is not valid JSON or nests deeper than MaxJSONDepth.
func AppendCompactJSON(dst, raw []byte) (out []byte, ok bool) {
	if !ValidJSON(raw) {
		return dst, false
	}
	if !utf8.Valid(raw) {
		raw = bytes.ToValidUTF8(raw, []byte("\uFFFD"))
	}
	return appendCompactValid(dst, raw), true
}

// compactJSON returns the valid JSON value raw as AppendCompactJSON writes
// it: raw itself when it is already so, else a compacted copy. ok is false
// when raw is not valid JSON (or nests deeper than MaxJSONDepth).
func compactJSON(raw []byte) (out []byte, ok bool) {
	var jc jsonCheck
	if ok, _ := jc.check(raw); !ok {
		return raw, false
	}
	if jc.high && !utf8.Valid(raw) {
		raw = bytes.ToValidUTF8(raw, []byte("\uFFFD"))
	} else if !jc.spaced {
		return raw, true
	}
	return appendCompactValid(nil, raw), true
}

// InputOverCap reports whether the tool input raw is over MaxInputBytes
// once compacted, so that the stream would not keep it ({} with
// input_truncated): an adapter need not copy or keep such an input. It
// does not validate raw and costs one pass over it.
func InputOverCap(raw []byte) bool {
	return len(raw) > MaxInputBytes && compactLen(raw) > MaxInputBytes
}

// compactLen is the length of raw without white space outside strings:
// what compactJSON would make of it, were it valid, without a copy and
// without validating.
func compactLen(raw []byte) int {
	n := len(raw)
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case ' ', '\t', '\r', '\n':
			n--
		case '"':
			i = stringEnd(raw, i+1) - 1
		}
	}
	return n
}

// stringEnd returns the index just past the closing quote of the string
// whose content starts at raw[i], skipping eight plain bytes at a time.
func stringEnd(raw []byte, i int) int {
	for i < len(raw) {
		if i+8 <= len(raw) {
			v := binary.LittleEndian.Uint64(raw[i:])
			q, b := v^('"'*lsb8), v^('\\'*lsb8)
			m := ((q-lsb8)&^q | (b-lsb8)&^b) & msb8
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3 // the first quote or backslash
		}
		switch raw[i] {
		case '"':
			return i + 1
		case '\\':
			i++
		}
		i++
	}
	return len(raw)
}

// appendCompactValid appends the valid JSON raw without white space
// outside strings.
func appendCompactValid(dst, raw []byte) []byte {
	start := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case ' ', '\t', '\r', '\n':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		case '"':
			i = stringEnd(raw, i+1) - 1
		}
	}
	return append(dst, raw[start:]...)
}

func appendPaths(dst []byte, paths []string) []byte {
	if len(paths) == 0 {
		return dst
	}
	dst = append(dst, `,"paths":[`...)
	for i, p := range paths {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, p)
	}
	return append(dst, ']')
}
