package event

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// MaxJSONDepth is how deeply the JSON values an event carries (a tool
// call's input, a native line under --raw) may nest. A deeper value is
// not kept: validating or reading it recursively costs a stack per level
// (8 million levels, one 16 MiB line, overflowed the Go stack), and the
// stream's readers (encoding/json, jq, Python) stop at a depth of their
// own. Real inputs nest a few levels.
const MaxJSONDepth = 128

// ValidJSON reports whether raw is one valid JSON value (white space
// around it allowed) nested at most MaxJSONDepth deep. It accepts what
// gjson.Valid accepts at that depth (invalid UTF-8 in strings included),
// without recursion: its cost is one pass over raw, whatever raw holds.
func ValidJSON(raw []byte) bool {
	ok, _ := checkJSON(raw)
	return ok
}

// JSONTooDeep reports whether ValidJSON refuses raw for its depth: raw is
// valid JSON up to where it nests past MaxJSONDepth (what follows is not
// looked at).
func JSONTooDeep(raw []byte) bool {
	_, deep := checkJSON(raw)
	return deep
}

// checkJSON is ValidJSON; deep is true when it stopped where raw nests
// past MaxJSONDepth.
func checkJSON(raw []byte) (ok, deep bool) {
	var c jsonCheck
	return c.check(raw)
}

// jsonCheck is one validating pass that also notes what compactJSON needs
// to know of raw, so that it walks raw once rather than three times:
// spaced, white space outside strings; high, a byte past ASCII (inside a
// string, where it may be invalid UTF-8).
type jsonCheck struct{ spaced, high bool }

// check is checkJSON.
func (jc *jsonCheck) check(raw []byte) (ok, deep bool) {
	var closers [MaxJSONDepth]byte // the closing byte of each open container
	depth := 0
	i := jc.ws(raw, 0)
	for {
		// A value starts at i.
		if i >= len(raw) {
			return false, false
		}
		switch c := raw[i]; c {
		case '{', '[':
			if depth == MaxJSONDepth {
				return false, true
			}
			closer := byte('}')
			if c == '[' {
				closer = ']'
			}
			closers[depth] = closer
			depth++
			i = jc.ws(raw, i+1)
			if i < len(raw) && raw[i] == closer {
				depth--
				i++
				break
			}
			if c == '{' {
				if i = jc.validKey(raw, i); i < 0 {
					return false, false
				}
			}
			continue // the first value of the container
		case '"':
			if i = jc.validString(raw, i+1); i < 0 {
				return false, false
			}
		case 't':
			if i = validWord(raw, i, "true"); i < 0 {
				return false, false
			}
		case 'f':
			if i = validWord(raw, i, "false"); i < 0 {
				return false, false
			}
		case 'n':
			if i = validWord(raw, i, "null"); i < 0 {
				return false, false
			}
		default:
			if i = validNumber(raw, i); i < 0 {
				return false, false
			}
		}
		// A value ended at i: close containers, or go on to the next value.
		for {
			i = jc.ws(raw, i)
			if depth == 0 {
				return i == len(raw), false
			}
			if i >= len(raw) {
				return false, false
			}
			if raw[i] == closers[depth-1] {
				depth--
				i++
				continue
			}
			if raw[i] != ',' {
				return false, false
			}
			i = jc.ws(raw, i+1)
			if closers[depth-1] == '}' {
				if i = jc.validKey(raw, i); i < 0 {
					return false, false
				}
			}
			break
		}
	}
}

// ws skips white space at i, noting any.
func (jc *jsonCheck) ws(raw []byte, i int) int {
	if i < len(raw) && raw[i] > ' ' {
		return i // none, as between most tokens: a fifth of a check's cost went here
	}
	j := i
	for j < len(raw) && (raw[j] == ' ' || raw[j] == '\t' || raw[j] == '\n' || raw[j] == '\r') {
		j++
	}
	if j != i {
		jc.spaced = true
	}
	return j
}

// validKey checks an object's key and its colon at i, and returns the
// index of the value after them, or -1.
func (jc *jsonCheck) validKey(raw []byte, i int) int {
	if i >= len(raw) || raw[i] != '"' {
		return -1
	}
	if i = jc.validString(raw, i+1); i < 0 {
		return -1
	}
	i = jc.ws(raw, i)
	if i >= len(raw) || raw[i] != ':' {
		return -1
	}
	return jc.ws(raw, i+1)
}

// validString checks the string whose content starts at i and returns the
// index past its closing quote, or -1: no control characters, only JSON's
// escapes.
func (jc *jsonCheck) validString(raw []byte, i int) int {
	for i < len(raw) {
		// Skip eight bytes at a time up to the first that needs a look
		// (the loop of one byte at a time cost 1.5k instructions per
		// tool input on a cursor stream, 4 % of harness parse): a quote,
		// a backslash, a control character, or, until one was seen, a
		// byte past ASCII.
		if i+8 <= len(raw) {
			v := binary.LittleEndian.Uint64(raw[i:])
			m := escapeMask(v)
			if jc.high {
				m = quoteOrControl8(v)
			}
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		}
		c := raw[i]
		switch {
		case c == '"':
			return i + 1
		case c < ' ':
			return -1
		case c >= utf8.RuneSelf:
			jc.high = true
		case c == '\\':
			i++
			if i >= len(raw) {
				return -1
			}
			switch raw[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(raw) || !isHex(raw[i+1]) || !isHex(raw[i+2]) || !isHex(raw[i+3]) || !isHex(raw[i+4]) {
					return -1
				}
				i += 4
			default:
				return -1
			}
		}
		i++
	}
	return -1
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func validWord(raw []byte, i int, word string) int {
	if len(raw)-i < len(word) || string(raw[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}

// validNumber checks the number at i and returns the index past it, or -1.
func validNumber(raw []byte, i int) int {
	if raw[i] == '-' {
		i++
	}
	switch {
	case i < len(raw) && raw[i] == '0':
		i++
	case i < len(raw) && raw[i] >= '1' && raw[i] <= '9':
		i = digits(raw, i)
	default:
		return -1
	}
	if i < len(raw) && raw[i] == '.' {
		if i+1 >= len(raw) || !isDigit(raw[i+1]) {
			return -1
		}
		i = digits(raw, i+1)
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			i++
		}
		if i >= len(raw) || !isDigit(raw[i]) {
			return -1
		}
		i = digits(raw, i)
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digits(raw []byte, i int) int {
	for i < len(raw) && isDigit(raw[i]) {
		i++
	}
	return i
}
