// Package rpcline reads newline-delimited JSON-RPC messages for harness's
// servers ('harness acp', 'harness mcp') with a cap: a line over the cap
// is read through and never held, and what an answer to it needs (its
// top-level id and method) is kept. The servers' SDKs end the connection
// at such a line; their input goes through a Reader first, and each line
// through Check, which tells what is not one JSON-RPC 2.0 message.
package rpcline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
)

// Reader reads lines of up to a cap. It is not safe for concurrent use.
type Reader struct {
	r    *bufio.Reader
	max  int
	line []byte // the line being read
}

// NewReader returns a Reader of r whose lines are at most max bytes, their
// newline not counted.
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Oversize is what is kept of a line over the cap.
type Oversize struct {
	Size   int    // the line's length in bytes, its newline included
	Method string // its top-level method; "" when none could be read
	// ID is its top-level id when that is one JSON-RPC allows (see
	// ValidID); nil otherwise.
	ID json.RawMessage
	// Request reports whether it has a method and an id, null too (then
	// ID is nil, and the answer's id null): its sender waits for an
	// answer.
	Request bool
}

// Next reads the next line. It returns the line with its newline (valid
// until the next call), or, for a line over the cap, a nil line and what
// was kept of it. err is the error that ended the input (io.EOF, or a
// read error), returned with the last line when that had no newline; the
// line may then be empty.
func (r *Reader) Next() (line []byte, over *Oversize, err error) {
	if cap(r.line) > 1<<20 {
		r.line = nil // don't pin a long line's buffer
	}
	r.line = r.line[:0]
	var f *topFields // set once the line is past the cap
	size := 0
	for {
		chunk, err := r.r.ReadSlice('\n')
		size += len(chunk)
		switch {
		case f != nil:
			f.write(chunk)
		case len(r.line)+len(chunk) > r.max+1: // +1: its newline
			f = &topFields{}
			f.write(r.line)
			f.write(chunk)
			r.line = nil
		default:
			r.line = append(r.line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if f != nil {
			return nil, f.oversize(size), err
		}
		return r.line, nil, err
	}
}

// ID returns the id of msg when msg is a JSON object with a method and an
// id JSON-RPC allows (see ValidID): a request, which an error answer must
// name. Otherwise nil.
func ID(msg []byte) json.RawMessage {
	var m map[string]json.RawMessage // exact keys, as JSON-RPC reads them
	if json.Unmarshal(msg, &m) != nil || m["method"] == nil || !ValidID(m["id"]) {
		return nil
	}
	return m["id"]
}

// maxIDBytes bounds the id read off an oversize message.
const maxIDBytes = 4 << 10

// maxExactID is the largest id number every JSON reader holds exactly
// (2^53-1, a float64's whole numbers).
const maxExactID = 1<<53 - 1

// ValidID reports whether id is one JSON-RPC allows and harness can answer
// with exactly the id it was sent: a string of at most 4 KiB, or a whole
// number written plainly (no fraction, exponent or -0) of at most 2^53-1
// in magnitude. The MCP SDK reads an id number as a float64 and answers
// with it as an int64: 1.5 came back 1, 9007199254740993 came back
// 9007199254740992.
func ValidID(id json.RawMessage) bool {
	if len(id) == 0 || len(id) > maxIDBytes {
		return false
	}
	switch c := id[0]; {
	case c == '"':
		var s string
		return json.Unmarshal(id, &s) == nil
	case c == '-' || c >= '0' && c <= '9':
		n, err := strconv.ParseInt(string(id), 10, 64)
		return err == nil && n >= -maxExactID && n <= maxExactID && strconv.FormatInt(n, 10) == string(id)
	}
	return false
}

// topFields finds the top-level "id" and "method" of a JSON object fed in
// pieces, keeping at most maxIDBytes of each value and nothing else: it
// reads a message too long to hold.
type topFields struct {
	depth      int
	inStr, esc bool
	isKey      bool   // the string being read is a key of the top object
	wantKey    bool   // the next string at depth 1 is a key
	key        []byte // the last key of the top object (its first bytes)
	capture    bool   // the value being read is the id's or the method's
	val        []byte
	hasID      bool
	id         json.RawMessage
	method     string
}

func (f *topFields) write(b []byte) {
	for _, c := range b {
		if !f.inStr && f.depth == 1 && (c == ',' || c == '}') {
			f.endValue()
			if c == ',' {
				f.wantKey = true
			} else {
				f.depth = 0
			}
			continue
		}
		if f.capture && len(f.val) <= maxIDBytes {
			f.val = append(f.val, c)
		}
		if f.inStr {
			switch {
			case f.esc:
				f.esc = false
			case c == '\\':
				f.esc = true
			case c == '"':
				f.inStr = false
				continue
			}
			if f.isKey && len(f.key) <= 8 {
				f.key = append(f.key, c)
			}
			continue
		}
		switch c {
		case '"':
			f.inStr = true
			f.isKey = f.depth == 1 && f.wantKey
			if f.isKey {
				f.key, f.wantKey = f.key[:0], false
			}
		case '{', '[':
			f.depth++
			if f.depth == 1 && c == '{' {
				f.wantKey = true
			}
		case '}', ']':
			f.depth--
		case ':':
			if f.depth == 1 && !f.capture {
				k := string(f.key)
				f.capture, f.val = k == "id" || k == "method", f.val[:0]
			}
		}
	}
}

// endValue ends a value of the top object.
func (f *topFields) endValue() {
	if !f.capture {
		return
	}
	f.capture = false
	v := bytes.TrimSpace(f.val)
	switch string(f.key) {
	case "id":
		f.hasID = true // null too: a request, answered with id null
		f.id = append(json.RawMessage(nil), v...)
	case "method":
		var s string
		if len(v) <= maxIDBytes && json.Unmarshal(v, &s) == nil {
			f.method = s
		}
	}
}

// oversize is what was read of a line of size bytes.
func (f *topFields) oversize(size int) *Oversize {
	o := &Oversize{Size: size, Method: f.method, Request: f.method != "" && f.hasID}
	if ValidID(f.id) {
		o.ID = f.id
	}
	return o
}

// WriteError writes the JSON-RPC error answer e (the protocol's error
// object) to the request id, as one line in one Write; a nil id is null,
// as JSON-RPC answers a request whose id could not be read.
func WriteError(w io.Writer, id json.RawMessage, e any) error {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", id, e})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
