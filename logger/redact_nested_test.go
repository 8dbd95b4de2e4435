package logger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// nestedSecrets are values given with --env that JSON encoders escape:
// a quote and a slash, a backslash, a letter past ASCII, and every kind
// at once (HTML characters, an astral rune). Each ends with a tail found
// nowhere else, however encoded, that no log may hold.
var nestedSecrets = []struct{ value, tail string }{
	{`pa"ss/word1`, "word1"},
	{`pa\ssword2`, "ssword2"},
	{"pässword3", "ssword3"},
	{`k<é>&"/\🔑-zq4`, "-zq4"},
}

// strEncoder writes s as the inside of a JSON string, as some encoder does.
type strEncoder struct {
	name string
	enc  func(s string) string
}

// goEncoder is encoding/json (HTML characters escaped or not).
func goEncoder(html bool) strEncoder {
	return strEncoder{fmt.Sprintf("go(html=%v)", html), func(s string) string { return jsonForm(s, html) }}
}

// asciiEncoder is Python's json.dumps (ensure_ascii: past ASCII as \uXXXX),
// Java's with upper-case hex, or PHP's json_encode ("/" as "\/" too).
func asciiEncoder(name string, upper, slash bool) strEncoder {
	hex := "%04x"
	if upper {
		hex = "%04X"
	}
	return strEncoder{name, func(s string) string {
		var b strings.Builder
		for _, r := range s {
			switch {
			case r == '"' || r == '\\':
				b.WriteByte('\\')
				b.WriteRune(r)
			case r == '/' && slash:
				b.WriteString(`\/`)
			case r == '\n':
				b.WriteString(`\n`)
			case r < 0x20:
				fmt.Fprintf(&b, `\u`+hex, r)
			case r < 0x80:
				b.WriteRune(r)
			case r > 0xFFFF:
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u`+hex+`\u`+hex, r1, r2)
			default:
				fmt.Fprintf(&b, `\u`+hex, r)
			}
		}
		return b.String()
	}}
}

var strEncoders = []strEncoder{
	goEncoder(false), goEncoder(true),
	asciiEncoder("python", false, false), asciiEncoder("java", true, false), asciiEncoder("php", false, true),
}

// encoderChains returns every chain of up to n encoders, innermost first.
func encoderChains(n int) [][]strEncoder {
	chains := [][]strEncoder{nil}
	var all [][]strEncoder
	for range n {
		var next [][]strEncoder
		for _, c := range chains {
			for _, e := range strEncoders {
				next = append(next, append(append([]strEncoder(nil), c...), e))
			}
		}
		all = append(all, next...)
		chains = next
	}
	return all
}

// nestedLine puts v in a tool's JSON output (closed, or cut off as a
// line the adapter could not parse), that in a string of a tool result,
// and so on, one level for each encoder of chain, innermost first.
func nestedLine(v string, chain []strEncoder, closed bool) string {
	doc := `{"note": "x ` + chain[0].enc(v)
	if closed {
		doc += `"}`
	}
	for _, e := range chain[1:] {
		doc = `{"type": "tool_result", "content": "` + e.enc(doc) + `"}`
	}
	return doc
}

// TestRedactNestedJSONStrings: a value given with --env is redacted when
// it is JSON-encoded several times over (a tool printed JSON, which the
// agent's line carries in a string, which an MCP result or the event
// stream's unparsed_line warning carries again), up to jsonDepth strings
// deep, whatever chain of encoders wrote it; a JSON line stays valid JSON
// at every level, and the innermost text keeps what is no secret. With
// the forms of a value one level deep only, the scan missed pa\\\"ss/word1
// and pa\\\\ssword2 two deep, and redactJSON never ran.
func TestRedactNestedJSONStrings(t *testing.T) {
	t.Parallel()
	var env []string
	for i, s := range nestedSecrets {
		env = append(env, fmt.Sprintf("SECRET_%d=%s", i, s.value))
	}
	r := NewRedactor(nil).WithEnv(env)
	for _, s := range nestedSecrets {
		for _, chain := range encoderChains(jsonDepth) {
			for _, closed := range []bool{true, false} {
				var names []string
				for _, e := range chain {
					names = append(names, e.name)
				}
				in := nestedLine(s.value, chain, closed)
				what := fmt.Sprintf("%q through %v (closed %v): %s", s.value, names, closed, in)
				for _, line := range []string{in, "tool said: " + in} { // JSON, and text
					out := string(r.Redact([]byte(line)))
					require.NotContains(t, out, s.tail, what)
					require.Contains(t, out, Redacted, what)
					if line != in {
						continue
					}
					// Peel the levels: each is still JSON, the innermost
					// text has lost the value only.
					doc := out
					for range len(chain) - 1 {
						var m map[string]string
						require.NoError(t, json.Unmarshal([]byte(doc), &m), "%s\nout %s", what, out)
						doc = m["content"]
					}
					require.True(t, strings.HasPrefix(doc, `{"note": "x `+Redacted), "%s\ninnermost %s", what, doc)
					require.Equal(t, closed, json.Valid([]byte(doc)), "%s\ninnermost %s", what, doc)
				}
			}
		}
	}
}

// TestValueFormsCount: the forms of a value grow with jsonDepth only for
// the characters encoders disagree on; a plain token has one.
func TestValueFormsCount(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"tok-0123456789abcdef"}, valueForms("tok-0123456789abcdef"))
	require.Equal(t, []string{`pa"ss1`, `pa\"ss1`, `pa\\\"ss1`, `pa\\\\\\\"ss1`}, valueForms(`pa"ss1`))
	require.Len(t, valueForms(nestedSecrets[3].value), 98) // valueForms' doc says about a hundred
}

// TestSessionLogRedactsNestedJSON is the reviewer's repro through the
// logger: with --env DB_PASSWORD=pa"ss/word1 (and the others), a tool
// prints json.dumps({"note": "x " + password}), which Claude's line
// carries in a tool_result's content, the event stream in a tool_end's
// output, and, when the line is not understood, in an unparsed_line
// warning's line, one level deeper still. Neither the native log nor the
// events hold any of the values, and every line stays JSON.
func TestSessionLogRedactsNestedJSON(t *testing.T) {
	t.Parallel()
	var env []string
	for i, s := range nestedSecrets {
		env = append(env, fmt.Sprintf("DB_PASSWORD_%d=%s", i, s.value))
	}
	red := NewRedactor(nil).WithEnv(env)
	dir := t.TempDir()
	s, err := Open(dir, "r1", Meta{Agent: "claude"}, WithRedactor(red))
	require.NoError(t, err)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := event.NewStream(event.StreamConfig{Run: "r1", Raw: true, Secrets: red.Values(),
		Now:   func() time.Time { clock = clock.Add(time.Millisecond); return clock },
		Start: event.SessionStart{Agent: "claude"},
		Sink: func(ev event.Event) {
			line, err := event.AppendJSON(nil, ev)
			require.NoError(t, err)
			require.NoError(t, s.WriteEvent(line))
		}})
	py := asciiEncoder("python", false, false).enc
	for _, sec := range nestedSecrets {
		for _, enc := range []func(string) string{py, goEncoder(false).enc} {
			output := `{"note": "x ` + enc(sec.value) + `"}`
			line := `{"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "` +
				enc(output) + `"}]}, "session_id": "s"}`
			require.NoError(t, s.WriteNative(event.StreamStdout, []byte(line)))
			require.NoError(t, st.Line(event.StreamStdout, []byte(line), false, []event.Body{&event.ToolEnd{CallID: "t1", Output: output}}))
			require.NoError(t, st.Line(event.StreamStdout, []byte(line), true, nil))
		}
	}
	st.Finish(event.Outcome{NoProcess: true})
	require.NoError(t, s.Close(Meta{Status: "success"}))

	for _, ext := range []string{ExtNative, ExtEvents} {
		data, err := os.ReadFile(s.path(ext))
		require.NoError(t, err)
		for _, sec := range nestedSecrets {
			require.NotContains(t, string(data), sec.tail, "%s holds %q:\n%s", ext, sec.value, data)
		}
		require.Contains(t, string(data), Redacted, ext)
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			require.True(t, json.Valid(sc.Bytes()), "%s: %s", ext, sc.Bytes())
		}
	}
	events, err := os.ReadFile(s.path(ExtEvents))
	require.NoError(t, err)
	require.Contains(t, string(events), `"code":"unparsed_line"`)
	require.Contains(t, string(events), `"type":"tool_end"`)
}

// BenchmarkRedactNestedEnv is BenchmarkRedact's lines with WithEnv values
// that have many forms (nestedSecrets: 124 needles), what the depth of
// valueForms costs the scan.
func BenchmarkRedactNestedEnv(b *testing.B) {
	var env []string
	for i, s := range nestedSecrets {
		env = append(env, fmt.Sprintf("SECRET_%d=%s", i, s.value))
	}
	r := benchRedactor().WithEnv(env)
	for _, c := range benchLines {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.line)))
			b.ReportAllocs()
			for b.Loop() {
				r.Redact(c.line)
			}
		})
	}
}
