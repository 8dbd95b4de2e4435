package event

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// nesting is how deeply raw's brackets nest, strings skipped as a JSON
// scanner would (for any bytes, valid JSON or not).
func nesting(raw []byte) int {
	depth, most := 0, 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{', '[':
			depth++
			most = max(most, depth)
		case '}', ']':
			depth--
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		}
	}
	return most
}

func TestValidJSON(t *testing.T) {
	t.Parallel()
	for _, s := range []string{`{}`, `[]`, ` {"a" : [1, -2.5e+3, "x\u00e9\n", true, false, null, {}]} `, `"s"`, `0`, `-0.0E1`, "\"\xff\"", `[[[]]]`, `{"a":{"b":{}}}`} {
		require.True(t, ValidJSON([]byte(s)), "%s", s)
		require.True(t, gjson.Valid(s), "%s", s)
	}
	for _, s := range []string{``, ` `, `{`, `[1,]`, `{"a"}`, `{"a":1,}`, `01`, `-`, `1.`, `1e`, `.5`, `tru`, `nul`, `"\x"`, "\"a\nb\"", `"\u12"`, `{}{}`, `[1 2]`, `{1:2}`, `]`, `"`, `[}`, `{]`} {
		require.False(t, ValidJSON([]byte(s)), "%q", s)
		require.False(t, gjson.Valid(s), "%q", s)
	}
}

// A value nested past MaxJSONDepth is refused, and checking one nested
// millions of levels deep costs no stack: one 16 MiB line of brackets
// overflowed the Go stack in gjson's recursive validation.
func TestValidJSONDeep(t *testing.T) {
	t.Parallel()
	at := func(n int) []byte { return []byte(strings.Repeat("[", n) + strings.Repeat("]", n)) }
	require.True(t, ValidJSON(at(MaxJSONDepth)))
	require.False(t, ValidJSON(at(MaxJSONDepth+1)))
	obj := []byte(strings.Repeat(`{"a":`, MaxJSONDepth) + "1" + strings.Repeat("}", MaxJSONDepth))
	require.True(t, ValidJSON(obj))
	require.False(t, ValidJSON(at(8<<20)))
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a": [1, 2 ,3], "b" : "x y\t"}`, "{\"s\":\"\\\" \\\\\"}", `[1,`, `{"a":1}x`, "{\"u\":\"\xff\"}", `"\u2028"`, ` { } `, `{"a":1e5,"b":-0.5,"c":true,"d":null}`, `[[[[]]]]`, `{"a":[{"b":[]}]}`, `-01`, `1.5e+`,
		// Strings long enough to be read eight bytes at a time.
		"{\"abcdefghij\xc3\xa9klmnop\":\"0123456789\\\"x\\\\y\\nz\"}", "\"abcdefgh\xffijklmnop\x01\"", "\"abcdefghijklmnop\x1fq\"",
		"\"abcdefgh\\u00e9ijklmn\\uZZZZ\"", "[\"aaaaaaaaaaaaaaa\" , \"bbbbbbbb\tb\"]", "\"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\\\"q\x7f\x80\""} {
		f.Add([]byte(s))
	}
	f.Add(bytes.Repeat([]byte("["), MaxJSONDepth+1))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got := ValidJSON(raw)
		if nesting(raw) > MaxJSONDepth {
			require.False(t, got, "a value nested deeper than the cap: %q", raw)
			return
		}
		require.Equal(t, gjson.ValidBytes(raw), got, "%q", raw)
		require.Equal(t, json.Valid(raw), got, "%q", raw)
	})
}

func TestJSONTooDeep(t *testing.T) {
	t.Parallel()
	deep := []byte(`{"a":` + strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth) + `}`)
	require.True(t, JSONTooDeep(deep))
	require.False(t, JSONTooDeep([]byte(`{"a":[1,}`)))
	require.False(t, JSONTooDeep([]byte(`{"a":[]}`)))
}
