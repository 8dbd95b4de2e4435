// Package jsonscan is a small JSON object walker for the adapters' hot
// paths. Most native lines need a handful of fields out of a large object;
// gjson's Get and ForEach parse every value they pass (ids, nested
// objects, long texts) and re-walk the same bytes at each level, while
// this walker only skips them. It never allocates and never panics on bad
// input: a malformed object simply ends the walk. Values are handed out
// raw, as slices of the input; Str, Int and Bool decode them with gjson's
// semantics, so a parser moved from gjson to jsonscan behaves the same;
// StrValue and IntValue decode a Fields callback's value as they skip it,
// where Value then Str would walk a string twice. Pick reads a few
// members into variables in one pass, off the hot path; on it a reader's
// compiled switch on member names is cheaper.
//
// The walker does not validate. Full validation would cost a second pass
// over every line; parsers instead accept a line that looks like an object
// (Object), which rejects a line cut short, and read anything else leniently.
//
// Strings returned share the input's memory. A parser whose input is only
// valid during the call must clone what it keeps (Clone, or strings.Clone).
package jsonscan

import (
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf16"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Object trims spaces around line and reports whether what is left looks
// like a JSON object: it starts with '{' and ends with '}'. It is the cheap
// guard the parsers use instead of validating every line: the one realistic
// corruption, a line cut at the length cap, does not end with its brace.
func Object(line []byte) ([]byte, bool) {
	i, j := 0, len(line)
	for i < j && isSpace(line[i]) {
		i++
	}
	for j > i && isSpace(line[j-1]) {
		j--
	}
	line = line[i:j]
	return line, len(line) >= 2 && line[0] == '{' && line[len(line)-1] == '}'
}

// Trailing reports whether s goes on past end, where a Fields walk of
// the object at its start ended: a second value on the line ("{...}
// {...}" starts and ends with a brace, as Object asks), which the walk
// never read. A parser counts such a line unparsed rather than lose it.
func Trailing(s string, end int) bool { return skipSpace(s, end) < len(s) }

// isSpace tells JSON's spaces. Most bytes it sees are not: one compare
// rules them out.
func isSpace(c byte) bool { return c <= ' ' && (c == ' ' || c == '\t' || c == '\r' || c == '\n') }

// Each calls fn with each key and raw value of the JSON object s, in order,
// until fn returns false or the object ends. Keys are given as written
// (escapes are not decoded). A value that is not an object yields nothing.
//
// On malformed input the walk is as lenient as gjson's ForEach, so that
// parsers moved from it read damaged lines alike: each key is the next
// string after the byte that follows the previous value (the comma, when
// there is one), and spaces, commas and colons between a key and its value
// are skipped.
func Each(s string, fn func(key, val string) bool) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return
	}
	i++
	for {
		// The next key usually starts right here, after the comma.
		if i >= len(s) || s[i] != '"' {
			k := strings.IndexByte(s[i:], '"')
			if k < 0 {
				return
			}
			i += k
		}
		end := stringEnd(s, i)
		if end <= 0 {
			end = longString(s, -end, i)
		}
		if end >= len(s) {
			return
		}
		key := s[i+1 : end-1]
		i = end
		if i+1 < len(s) && s[i] == ':' && isValueStart(s[i+1]) {
			i++ // the value right after the colon, as in Fields
		} else {
			for i < len(s) && !isValueStart(s[i]) {
				i++
			}
			if i >= len(s) {
				return
			}
		}
		vend := skipValue(s, i)
		if !fn(key, s[i:vend]) {
			return
		}
		// The byte after a value is the comma, or skipped as gjson skips
		// it.
		i = vend + 1
		if i >= len(s) {
			return
		}
	}
}

// Fields walks the object at the start of s (s may go on past it) as Each
// does, for callers that read some nested values in the same pass instead
// of having them skipped first and walked again: fn gets each key and the
// rest of s from that key's value on, and returns how many bytes of rest
// the value took (0 to have Fields skip the value itself) and whether to go
// on. Fields returns the index just past the object's closing brace, len(s)
// when it does not close, or 0 when s does not start with an object.
//
// Unlike Each, the walk ends at the object's closing brace; on malformed
// input it is as lenient as Each within the object.
func Fields(s string, fn func(key, rest string) (int, bool)) int {
	start := skipSpace(s, 0)
	if start >= len(s) || s[start] != '{' {
		return 0
	}
	i := start + 1
	for {
		// The next key: the next string, unless the object closes first.
		for i < len(s) && s[i] != '"' {
			if s[i] == '}' {
				return i + 1
			}
			i++
		}
		if i >= len(s) {
			return len(s)
		}
		end := stringEnd(s, i)
		if end <= 0 {
			end = longString(s, -end, i)
		}
		if end >= len(s) {
			return len(s)
		}
		key := s[i+1 : end-1]
		i = end
		if i+1 < len(s) && s[i] == ':' && isValueStart(s[i+1]) {
			// The value right after the colon, as it nearly always is:
			// the loop below costs a dozen instructions a member more
			// (claude corpus: 351.2 M instructions against 347.6 M).
			i++
		} else {
			for i < len(s) && !isValueStart(s[i]) {
				if s[i] == '}' {
					return i + 1
				}
				i++
			}
			if i >= len(s) {
				return len(s)
			}
		}
		n, more := fn(key, s[i:])
		if n <= 0 || n > len(s)-i {
			n = skipValue(s, i) - i
		}
		if !more {
			return skipContainer(s, start)
		}
		i += n
		i = skipSpace(s, i)
		if i >= len(s) {
			return len(s)
		}
		if s[i] == '}' {
			return i + 1
		}
		// The byte after a value is the comma, or skipped as Each skips it.
		i++
	}
}

// EachEnd is Each on the object at the start of s (s may go on past it),
// ending at its closing brace; it returns what Fields returns. It reads a
// nested value from a Fields callback: return EachEnd(rest, ...) as the
// length of the value.
func EachEnd(s string, fn func(key, val string) bool) int {
	return Fields(s, func(k, rest string) (int, bool) {
		n := skipValue(rest, 0)
		return n, fn(k, rest[:n])
	})
}

// Value returns the raw value at the start of rest, as a Fields callback
// gets it.
func Value(rest string) string {
	if rest == "" {
		return ""
	}
	return rest[:skipValue(rest, 0)]
}

// isValueStart tells the bytes gjson starts a value at; it skips others.
func isValueStart(c byte) bool { return valueStart[c] }

// valueStart is isValueStart's table: a lookup, where a switch on the
// byte cost a dozen compares for the colon before every value.
var valueStart = [256]bool{
	'"': true, '{': true, '[': true, '-': true, '+': true, 't': true, 'f': true, 'n': true, 'i': true, 'I': true, 'N': true,
	'0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true, '7': true, '8': true, '9': true,
}

// Elems walks the array at the start of s (s may go on past it) as
// EachElem does, for callers that read each element in the same pass: fn
// gets the rest of s from each element on and returns how many bytes the
// element took (0 to have Elems skip it). Elems returns the index just past
// the array's closing bracket, len(s) when it does not close, or 0 when s
// does not start with an array.
func Elems(s string, fn func(rest string) int) int {
	start := skipSpace(s, 0)
	if start >= len(s) || s[start] != '[' {
		return 0
	}
	i := skipSpace(s, start+1)
	if i < len(s) && s[i] == ']' {
		return i + 1
	}
	for {
		i = skipSpace(s, i)
		if i >= len(s) {
			return len(s)
		}
		if s[i] == ']' || s[i] == ',' {
			return skipContainer(s, start) // malformed: EachElem stops here
		}
		n := fn(s[i:])
		if n <= 0 || n > len(s)-i {
			n = skipValue(s, i) - i
		}
		if n <= 0 {
			return skipContainer(s, start)
		}
		i = skipSpace(s, i+n)
		if i >= len(s) {
			return len(s)
		}
		switch s[i] {
		case ']':
			return i + 1
		case ',':
			i++
		default:
			return skipContainer(s, start)
		}
	}
}

// EachElem calls fn with each raw element of the JSON array s, in order,
// until fn returns false or the array ends. A value that is not an array
// yields nothing.
func EachElem(s string, fn func(val string) bool) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '[' {
		return
	}
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == ']' {
		return
	}
	for {
		i = skipSpace(s, i)
		if i >= len(s) || s[i] == ']' || s[i] == ',' {
			return
		}
		vend := skipValue(s, i)
		if vend <= i || !fn(s[i:vend]) {
			return
		}
		i = skipSpace(s, vend)
		if i >= len(s) || s[i] != ',' {
			return
		}
		i++
	}
}

// Get returns the raw value of the first field of object s named key, or ""
// when there is none.
func Get(s, key string) string {
	var out string
	Each(s, func(k, v string) bool {
		if k == key {
			out = v
			return false
		}
		return true
	})
	return out
}

// Pick reads a few members of the object s in one pass, as Get would find
// each: *dst[i] is the raw value of the first member named keys[i], left
// as it was when there is none (Pick is for variables declared empty). It
// costs about three times what a compiled switch on the member names
// does: a reader that runs on every line, or per tool call or content
// block, keeps its switch; Pick is for what is read once per run or per
// rare call.
func Pick(s string, keys []string, dst ...*string) {
	if len(keys) != len(dst) {
		panic("jsonscan: Pick: keys and destinations differ in number")
	}
	left := len(keys)
	Each(s, func(k, v string) bool {
		for i, key := range keys {
			if key == k {
				if *dst[i] == "" {
					*dst[i] = v
					left--
				}
				break
			}
		}
		return left > 0
	})
}

// Path returns the raw value at the path of keys through nested objects,
// or "" when some step is missing.
func Path(s string, keys ...string) string {
	for _, k := range keys {
		s = Get(s, k)
		if s == "" {
			return ""
		}
	}
	return s
}

// IsString, IsObject and IsArray tell a raw value's type.
func IsString(raw string) bool { return len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' }

// IsObject reports whether raw is an object.
func IsObject(raw string) bool { return len(raw) >= 2 && raw[0] == '{' }

// IsArray reports whether raw is an array.
func IsArray(raw string) bool { return len(raw) >= 2 && raw[0] == '[' }

// IsNumber reports whether raw is a number.
func IsNumber(raw string) bool {
	return len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'))
}

// Str decodes raw as gjson's Result.String does: a string's text (sharing
// raw's memory when it has no escapes), a number's or object's raw text,
// "true"/"false", and "" for null or nothing. A \u escape is decoded as
// encoding/json does, not as gjson: a surrogate without its pair is
// U+FFFD and the escape after it is its own (gjson takes that one for
// the pair, and its character is lost).
func Str(raw string) string {
	if IsString(raw) {
		inner := raw[1 : len(raw)-1]
		if strings.IndexByte(inner, '\\') < 0 {
			return inner
		}
		if s, ok := unescape(inner); ok {
			return s
		}
	} else if raw == "" || raw == "null" {
		return ""
	}
	return gjson.Parse(raw).String()
}

// unescape decodes the content of a JSON string that has a backslash
// when every escape in it is well formed and it holds no control byte
// and no bare quote: ok is false for anything else, which gjson decodes.
// Escaped newlines and quotes are common in tool output and commands:
// through gjson each such string cost a parse and two allocations.
func unescape(inner string) (string, bool) {
	var b strings.Builder
	b.Grow(len(inner))
	for {
		// The text up to the next backslash, as it is.
		run := inner[:plainRun(inner)]
		if len(run) < len(inner) && inner[len(run)] != '\\' {
			return "", false // a control byte or a bare quote
		}
		b.WriteString(run)
		if len(run) == len(inner) {
			return b.String(), true
		}
		if len(run)+1 == len(inner) {
			return "", false // a backslash last
		}
		c := inner[len(run)+1]
		switch c {
		case '\\', '/', '"':
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'u':
			r, n := decodeU(inner[len(run):])
			if n == 0 {
				return "", false
			}
			b.WriteRune(r)
			inner = inner[len(run)+n:]
			continue
		default:
			return "", false
		}
		b.WriteByte(c)
		inner = inner[len(run)+2:]
	}
}

// decodeU decodes the \uXXXX escape at the start of s, with the low
// surrogate's escape after it when it is a high surrogate's pair, as
// encoding/json does: a surrogate without its pair is U+FFFD, and what
// follows it is decoded on its own. n is the bytes taken, 0 for a
// malformed escape.
func decodeU(s string) (r rune, n int) {
	r, ok := hex4(s)
	if !ok {
		return 0, 0
	}
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	if r2, ok := hex4(s[6:]); ok {
		if pair := utf16.DecodeRune(r, r2); pair != unicode.ReplacementChar {
			return pair, 12
		}
	}
	return unicode.ReplacementChar, 6
}

// hex4 is the rune of the \uXXXX escape at the start of s.
func hex4(s string) (rune, bool) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[2:6]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// plainRun returns the length of the run at the start of s that has no
// backslash, quote or control byte, eight bytes at a time (a byte loop
// was most of the cost of decoding text with escaped newlines).
func plainRun(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := load8(s, i)
		if m := special(x) | (x-0x20*ones)&^x&highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s) && s[i] >= ' ' && s[i] != '"' && s[i] != '\\'; i++ {
	}
	return i
}

// StrValue is Str(Value(rest)) in one pass: it decodes the value at the
// start of rest, as a Fields callback gets it, and returns it with the
// length of the raw value. Str would look again for escapes in the string
// the walk has just skipped.
func StrValue(rest string) (string, int) {
	if rest == "" {
		return "", 0
	}
	if rest[0] == '"' {
		end := shortString(rest, 0)
		if end > 0 {
			return rest[1 : end-1], end // plain
		}
		end = longString(rest, -end, 0)
		return Str(rest[:end]), end
	}
	v := rest[:skipValue(rest, 0)]
	return Str(v), len(v)
}

// IntValue is Int(Value(rest)) in one pass, as StrValue is for Str: an
// integer is read as it is skipped.
func IntValue(rest string) (int64, int) {
	sign := 0
	if len(rest) > 1 && rest[0] == '-' {
		sign = 1
	}
	n, digits := digitsOf(rest[sign:])
	end := sign + digits
	if digits == 0 || end < len(rest) && !numberEnd(rest[end]) {
		v := Value(rest) // not a plain integer, or too long to read here
		return Int(v), len(v)
	}
	if sign == 1 {
		n = -n
	}
	return n, end
}

// digitsOf reads the decimal digits at the start of s: their value and
// how many there are, or 0 digits when there are more than eighteen
// (which could overflow).
func digitsOf(s string) (n int64, digits int) {
	s = s[:min(len(s), 19)]
	for ; digits < len(s); digits++ {
		c := s[digits] - '0'
		if c > 9 {
			return n, digits
		}
		n = n*10 + int64(c)
	}
	if digits == 19 {
		return 0, 0
	}
	return n, digits
}

// numberEnd tells the bytes that end a number, as skipValue reads one.
func numberEnd(c byte) bool { return c <= ' ' || c == ',' || c == '}' || c == ']' }

// SetFirst sets *dst to the raw value v unless *dst is set: a reader
// that walks an object's members keeps the first of duplicate keys, as
// gjson's Get finds it.
func SetFirst(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// FirstInt is an integer member read in the walk of its object (a Fields
// callback), where it would be skipped and looked up again; as with
// gjson's Get, the first of duplicate keys wins.
type FirstInt struct {
	N    int64
	Seen bool // a member was read
}

// Read reads the integer at the start of rest, unless an earlier
// duplicate was read, and returns its length (0 to have Fields skip it).
func (c *FirstInt) Read(rest string) int {
	if c.Seen {
		return 0
	}
	var n int
	c.N, n = IntValue(rest)
	c.Seen = true
	return n
}

// StrOnly decodes raw only when it is a JSON string, as gjson code that
// checks Type == gjson.String does; anything else is "". The result shares
// raw's memory when there are no escapes.
func StrOnly(raw string) string {
	if !IsString(raw) {
		return ""
	}
	return Str(raw)
}

// Int decodes raw as gjson's Result.Int does.
func Int(raw string) int64 {
	if raw == "" {
		return 0
	}
	sign := 0
	if len(raw) > 1 && raw[0] == '-' {
		sign = 1
	}
	n, digits := digitsOf(raw[sign:])
	if sign+digits != len(raw) {
		return gjson.Parse(raw).Int() // not a plain integer, or a long one
	}
	if sign == 1 {
		return -n
	}
	return n
}

// Bool decodes raw as gjson's Result.Bool does.
func Bool(raw string) bool {
	switch raw {
	case "true":
		return true
	case "false", "", "null":
		return false
	}
	return gjson.Parse(raw).Bool()
}

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at s[i] ('"'),
// or len(s) when it does not end. It cannot be inlined, so the walk's hot
// paths write out its two steps: calling it there cost a frame per string
// on top of stringEnd's call (claude corpus: 365.4 M instructions against
// 347.6 M; codex 1086 M against 1060 M).
func skipString(s string, i int) int {
	end := stringEnd(s, i)
	if end <= 0 {
		end = longString(s, -end, i)
	}
	return end
}

// stringEnd is skipString for the strings that end within 64 bytes (ids,
// keys, type names: most strings), eight bytes at a time, where a call to
// IndexByte costs more: it returns the index just past the string or, for
// a longer one or one that ends in the last few bytes of s, the negated
// index at which longString goes on (<= 0). It looks for quotes only,
// half the work of looking for backslashes too (skipping with shortString
// cost 368.6 M instructions on the claude corpus, against 347.6 M), and
// leaves a quote with a backslash before it to longString. It calls
// nothing and checks no bounds, so it has no frame.
func stringEnd(s string, i int) int {
	j := i + 1
	if j <= 0 {
		// Never (s[i] is the quote), but j > 0 spares load8 its bounds
		// check, whose panic call gave the function a frame: 372.9 M
		// instructions on the claude corpus without this, 347.6 M with.
		return len(s)
	}
	for lim := j + 64; j <= len(s)-8 && j < lim; j += 8 {
		q := load8(s, j) ^ quotes
		if m := (q - ones) &^ q & highs; m != 0 {
			j += bits.TrailingZeros64(m) >> 3
			// (j <= len(s) always holds: it spares a bounds check.)
			if j <= len(s) && s[j-1] == '\\' {
				return -j // escaped, or after an escaped backslash
			}
			return j + 1
		}
	}
	return -j
}

// shortString is stringEnd for the strings that have no backslash either,
// whose content StrValue hands out as it is: for any other string it
// returns the negated index at which longString goes on.
func shortString(s string, i int) int {
	j := i + 1
	if j <= 0 {
		return len(s) // never, as in stringEnd
	}
	for lim := j + 64; j <= len(s)-8 && j < lim; j += 8 {
		x := load8(s, j)
		if m := special(x); m != 0 {
			// m's lowest bit is the high bit of the first quote or backslash.
			tz := bits.TrailingZeros64(m)
			if byte(x>>(tz&^7)) == '"' {
				return j + tz>>3 + 1
			}
			return -(j + tz>>3)
		}
	}
	return -j
}

// longString returns the end of the string that starts at s[i], as
// skipString does, looking from s[j] on with IndexByte.
func longString(s string, j, i int) int {
	for {
		k := strings.IndexByte(s[j:], '"')
		if k < 0 {
			return len(s)
		}
		j += k
		n := 0
		for b := j - 1; b > i && s[b] == '\\'; b-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

// load8 returns the eight bytes of s at i (i+8 <= len(s)), the first in
// the lowest byte.
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

const (
	ones   = 0x0101010101010101
	highs  = 0x8080808080808080
	quotes = ones * '"'
	slashs = ones * '\\'
)

// special returns x's bytes that are '"' or '\\' as their high bits; the
// lowest set bit is exact (bits above it may be false positives).
func special(x uint64) uint64 {
	q, b := x^quotes, x^slashs
	return ((q-ones)&^q | (b-ones)&^b) & highs
}

// skipValue returns the index just past the value starting at s[i].
func skipValue(s string, i int) int {
	switch s[i] {
	case '"':
		end := stringEnd(s, i)
		if end <= 0 {
			end = longString(s, -end, i)
		}
		return end
	case '{', '[':
		return skipContainer(s, i)
	case 'n':
		if i+1 < len(s) && s[i+1] != 'u' {
			break // gjson reads "nan" and the like as a number
		}
		fallthrough
	case 't', 'f':
		// A literal is its letters, as gjson reads it.
		j := i + 1
		for j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
			j++
		}
		return j
	}
	// A number runs to a space, control byte, comma or closing bracket.
	j := i + 1
	for j < len(s) && !numberEnd(s[j]) {
		j++
	}
	return j
}

// skipContainer returns the index just past the object or array starting
// at s[i].
func skipContainer(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		if !structural[s[j]] {
			continue // one lookup for the bytes between strings
		}
		switch s[j] {
		case '"':
			// The string, and those that follow it across a colon or a
			// comma ("key":"value","key"), without the loop's lookup of
			// the byte between them (claude corpus: 349.2 M instructions
			// without, 347.6 M with; codex 1064 M and 1060 M).
			for {
				end := stringEnd(s, j)
				if end <= 0 {
					end = longString(s, -end, j)
				}
				j = end
				if j+1 >= len(s) || s[j+1] != '"' || s[j] != ':' && s[j] != ',' {
					break
				}
				j++
			}
			j-- // the loop's j++ reads the byte after the last string
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(s)
}

// structural marks the bytes skipContainer acts on.
var structural = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// Values calls fn with each value of raw as gjson's ForEach does: an
// object's values, an array's elements, or, for any other value, that
// value itself once. A missing value ("") yields nothing.
func Values(raw string, fn func(val string) bool) {
	switch {
	case raw == "":
	case raw[0] == '{':
		Each(raw, func(_, v string) bool { return fn(v) })
	case raw[0] == '[':
		EachElem(raw, fn)
	default:
		fn(raw)
	}
}

// Lines keeps copies of a parser's lines in shared blocks, so that the
// parser can keep pieces of a line (in the bodies it emits, or in its own
// state) with Str instead of an allocation per piece. Nothing in a block
// is written twice, so a piece stays valid for as long as it is used; it
// keeps its block (16 KiB at most) alive that long.
//
// A block is a strings.Builder's buffer, which the runtime does not
// zero before the lines overwrite it (a make'd block is zeroed: on codex
// every line's bytes were written twice).
type Lines struct {
	block strings.Builder
	stay  bool // the lines stay valid: Copy hands them back as they are
}

// Stay says that the lines given to Copy from now on stay valid and
// unchanged for as long as the parser uses pieces of them (views of a
// mapped file): Copy then copies nothing.
func (l *Lines) Stay() { l.stay = true }

const linesBlock = 16 << 10

// Bytes returns s, a piece of a line Copy returned, as the bytes of a
// body's []byte field (ToolStart.Input). When the lines stay (a read-only
// mapping) it is a view of them: copying each tool input was 4 to 5 % of
// parsing a cursor, opencode or gemini stream (harness parse, 200 MB,
// medians of 7 interleaved runs). Otherwise it is a copy, which whoever
// is given the body may write to without changing the line's other pieces.
func (l *Lines) Bytes(s string) []byte {
	if l.stay {
		return unsafe.Slice(unsafe.StringData(s), len(s))
	}
	return []byte(s)
}

// Copy returns a copy of line that the parser may keep pieces of.
func (l *Lines) Copy(line []byte) string {
	if len(line) == 0 {
		return ""
	}
	if l.stay {
		return unsafe.String(&line[0], len(line))
	}
	if len(line) > linesBlock/4 {
		return string(line) // a long line gets its own copy, not a share of a block
	}
	if l.block.Cap()-l.block.Len() < len(line) {
		// A new Builder, not Reset: the old block's pieces stay in use.
		l.block = strings.Builder{}
		l.block.Grow(linesBlock)
	}
	start := l.block.Len()
	l.block.Write(line) // within its capacity: the block is never moved
	return l.block.String()[start:]
}
