package claude

import (
	"strings"

	"github.com/tidwall/gjson"
)

// A small JSON object walker for the hot path. Most of a partial-message
// stream is stream_event lines of which the parser needs four top-level
// fields and a nested delta; gjson's ForEach parses every value it passes
// (uuids, session ids) while this walker only skips them, which doubles the
// parser's throughput. It never allocates and never panics on bad input: a
// malformed object simply ends the walk. Values are handed out raw; strVal
// and intVal decode them.

// eachField calls fn with each key and raw value of the JSON object s, in
// order, until fn returns false or the object ends. Keys are given as
// written (escapes are not decoded; Claude's keys have none).
func eachField(s string, fn func(key, val string) bool) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return
	}
	i++
	for {
		i = skipSpace(s, i)
		if i >= len(s) || s[i] != '"' {
			return
		}
		end := skipString(s, i)
		if end > len(s) || end-1 <= i {
			return
		}
		key := s[i+1 : end-1]
		i = skipSpace(s, end)
		if i >= len(s) || s[i] != ':' {
			return
		}
		i = skipSpace(s, i+1)
		if i >= len(s) {
			return
		}
		vend := skipValue(s, i)
		if !fn(key, s[i:vend]) {
			return
		}
		i = skipSpace(s, vend)
		if i >= len(s) || s[i] != ',' {
			return
		}
		i++
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at s[i] ('"'),
// or len(s) when it does not end.
func skipString(s string, i int) int {
	j := i + 1
	// Most strings are short (ids, keys): a plain loop beats a call to
	// IndexByte there; long ones (text, tool output) go to IndexByte.
	for end := min(j+32, len(s)); j < end; j++ {
		switch s[j] {
		case '"':
			return j + 1
		case '\\':
			j++
		}
	}
	if j >= len(s) {
		return len(s)
	}
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

// skipValue returns the index just past the value starting at s[i].
func skipValue(s string, i int) int {
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		return skipContainer(s, i)
	}
	j := i
	for j < len(s) && s[j] != ',' && s[j] != '}' && s[j] != ']' && s[j] != ' ' && s[j] != '\n' && s[j] != '\t' && s[j] != '\r' {
		j++
	}
	return j
}

// strVal decodes a raw JSON string value; anything else is "". Without
// escapes the result shares raw's memory.
func strVal(raw string) string {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return ""
	}
	inner := raw[1 : len(raw)-1]
	if strings.IndexByte(inner, '\\') < 0 {
		return inner
	}
	return gjson.Parse(raw).Str
}

// intVal decodes a raw JSON number as an integer; anything else is 0.
func intVal(raw string) int64 {
	var n int64
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c < '0' || c > '9' {
			if i == 0 && c == '-' {
				continue
			}
			return gjson.Parse(raw).Int()
		}
		if n > (1<<62)/10 {
			return gjson.Parse(raw).Int()
		}
		n = n*10 + int64(c-'0')
	}
	if len(raw) > 0 && raw[0] == '-' {
		return -n
	}
	return n
}

// skipContainer returns the index just past the object or array starting
// at s[i]. Strings inside are scanned in line: they are mostly short keys
// and ids, where a call per string costs more than the scan.
func skipContainer(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '"':
			for j++; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
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
