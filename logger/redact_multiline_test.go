package logger

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// A private key handed to the agent with --env (the reviewer's repro),
// and its lines: the body's are secret, the armor is not.
const (
	pemBegin = "-----BEGIN OPENSSH PRIVATE KEY-----"
	pemEnd   = "-----END OPENSSH PRIVATE KEY-----"
)

var pemBody = []string{
	"b3BlbnNzaC1yZXktdjEAAAAABG5vbmUAAAAE",
	"QyNTUxOQAAACDx5r8Zq1kq9W0m2LQ0wbZ8",
	"Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6QUJD",
	"REVGR0hJSktMTU5PUFFSU1RVVldYWVoxMjM0NTY3ODkwK/abcdefghijklmnopqrstuv",
}

func pemKey(sep string) string {
	return strings.Join(append(append([]string{pemBegin}, pemBody...), pemEnd), sep)
}

// requireNoBody fails when out holds any body line of the key, or a run
// of 12 of its bytes (a piece a cut left).
func requireNoBody(t *testing.T, out, what string) {
	t.Helper()
	for _, l := range pemBody {
		for i := 0; i+12 <= len(l); i++ {
			require.NotContains(t, out, l[i:i+12], "%s holds a piece of the key: %q", what, out)
		}
	}
}

// TestRedactMultiLineValue: a value with line breaks given to WithEnv (a
// private key) is redacted however a log cuts or encodes it: each body
// line alone (stderr and text stdout are redacted a line at a time), with
// a CR left by a terminal, inside a JSON string with its breaks escaped
// as \n or \r\n, in part (head), and on one line with its breaks turned
// to spaces (an unquoted echo). A key inside a JSON credentials file,
// its breaks escaped, is redacted once decoded too. The armor and short
// lines are no values of their own.
func TestRedactMultiLineValue(t *testing.T) {
	t.Parallel()
	key := pemKey("\n")
	cred := `{"type":"service_account","private_key":"` + pemKey(`\n`) + `\n"}`
	// However the value breaks its lines, each is known.
	for _, kv := range []string{"DEPLOY_KEY=" + key, "CRLF_KEY=" + pemKey("\r\n") + "\r\n", "SA_JSON=" + cred} {
		r := NewRedactor(nil).WithEnv([]string{kv})
		for _, l := range pemBody {
			require.Equal(t, "x "+Redacted+" y", r.RedactString("x "+l+" y"), kv)
		}
	}
	r := NewRedactor(nil).WithEnv([]string{"DEPLOY_KEY=" + key, "SCRIPT=set -e\nfi\n[default]\n"})
	var ins []string
	for _, l := range pemBody {
		ins = append(ins, l, l+"\r", "  "+l+"  ", `{"line":"`+l+`"}`)
	}
	js, _ := json.Marshal(map[string]string{"output": key + "\n"})
	jsCRLF, _ := json.Marshal(map[string]string{"output": pemKey("\r\n")})
	head, _ := json.Marshal(map[string]string{"output": strings.Join([]string{pemBegin, pemBody[0], pemBody[1][:20]}, "\n")})
	ins = append(ins, string(js), string(jsCRLF), string(head),
		"key: "+pemKey(" ")+" end",                                   // echo $KEY
		`stderr: "`+pemKey(`\n`)+`"`,                                 // a quoted string in text
		`{"text":"`+strings.ReplaceAll(pemKey(`\n`), "/", `\/`)+`"}`, // "/" escaped
	)
	for _, in := range ins {
		out := string(r.Redact([]byte(in)))
		requireNoBody(t, out, in)
		require.Contains(t, out, Redacted, in)
		if strings.HasPrefix(in, "{") {
			require.True(t, json.Valid([]byte(out)), "%s", out)
		}
	}
	require.Equal(t, pemBegin, r.RedactString(pemBegin), "the armor is no secret")
	require.Equal(t, "set -e; fi; [default]", r.RedactString("set -e; fi; [default]"), "short lines are no values of their own")
	// One line and a line break: that line, at the least length of a value.
	pw := NewRedactor(nil).WithEnv([]string{"X_PASS=pw12\n"})
	require.Equal(t, "pw is [REDACTED]", pw.RedactString("pw is pw12"))
}

// TestRedactPEMBlock: the body of a private key block that a line or a
// JSON string holds whole (a tool's output that printed a key file) is
// redacted though no one named the key; cut short, to the end; the armor
// (alone, or quoted in a command) and a certificate stay.
func TestRedactPEMBlock(t *testing.T) {
	t.Parallel()
	r := NewRedactor(nil)
	for _, sep := range []string{"\n", "\r\n"} {
		for _, begin := range []string{pemBegin, "-----BEGIN PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----",
			"-----BEGIN ENCRYPTED PRIVATE KEY-----", "-----BEGIN PGP PRIVATE KEY BLOCK-----"} {
			block := begin + sep + strings.Join(pemBody, sep) + sep + "-----END" + strings.TrimPrefix(begin, "-----BEGIN")
			js, _ := json.Marshal(map[string]string{"type": "tool_end", "output": "$ cat id\n" + block + "\ndone"})
			out := string(r.Redact(js))
			requireNoBody(t, out, string(js))
			require.True(t, json.Valid([]byte(out)), "%s", out)
			require.Contains(t, out, "done", "what follows the block stays")
			require.Contains(t, out, begin)
			cut := string(r.Redact([]byte(`text "` + strings.ReplaceAll(block[:len(block)-50], sep, `\n`))))
			requireNoBody(t, cut, "a cut block")
		}
	}
	for _, kept := range []string{
		`{"output":"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUJ\n-----END CERTIFICATE-----"}`,
		`grep -rl "-----BEGIN RSA PRIVATE KEY-----" .`,
		"-----BEGIN OPENSSH PRIVATE KEY-----",
	} {
		require.Equal(t, kept, string(r.Redact([]byte(kept))))
	}
}

// TestSessionLogRedactsAMultiLineValue is the reviewer's repro in the
// logger: an agent prints a key handed to it with --env to stdout (not
// JSON) and stderr, one line at a time, and in a JSON line; the stream
// makes unparsed_line warnings and, raw, native events of those lines,
// and cuts a long one through a body line. No file of the log holds a
// piece of the key's body.
func TestSessionLogRedactsAMultiLineValue(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	red := NewRedactor(nil).WithEnv([]string{"DEPLOY_KEY=" + pemKey("\n")})
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
	// Long lines first, their previews cut at 200 bytes inside a body
	// line: echo $KEY, and the body alone (no armor to tell a key), cut
	// 23 bytes into its second line, which the redactor knows whole only.
	// Then the key's lines, as a pipe and as a pty (CRLF) end them.
	lines := []string{strings.Repeat(".", 120) + pemKey(" "), strings.Repeat(".", 140) + strings.Join(pemBody, " ")}
	lines = append(lines, strings.Split(pemKey("\n"), "\n")...)
	lines = append(lines, strings.Split(pemKey("\r\n"), "\n")...)
	js, _ := json.Marshal(map[string]string{"type": "tool_result", "content": pemKey("\n")})
	for _, l := range lines {
		require.NoError(t, s.WriteNative(event.StreamStdout, []byte(l)))
		require.NoError(t, s.WriteNative(event.StreamStderr, []byte(l)))
		require.NoError(t, st.Line(event.StreamStdout, []byte(l), true, nil))
		require.NoError(t, st.Line(event.StreamStderr, []byte(l), false, nil))
	}
	require.NoError(t, s.WriteNative(event.StreamStdout, js))
	require.NoError(t, st.Line(event.StreamStdout, js, false, []event.Body{&event.ToolEnd{CallID: "c1", Output: pemKey("\n")}}))
	st.Finish(event.Outcome{NoProcess: true})
	require.NoError(t, s.Close(Meta{Status: "success"}))

	for _, ext := range []string{ExtEvents, ExtNative, ExtStderr} {
		data, err := os.ReadFile(s.path(ext))
		require.NoError(t, err)
		requireNoBody(t, string(data), ext)
		require.Contains(t, string(data), Redacted, ext)
	}
	events, err := os.ReadFile(s.path(ExtEvents))
	require.NoError(t, err)
	require.Contains(t, string(events), `"truncated":true`, "the long line's preview was cut")
}

// BenchmarkRedactMultiLineEnv is BenchmarkRedact's lines with a 4096-bit
// RSA key's worth of PEM (50 lines of 64 base64 characters) given to
// WithEnv: every line a value of its own.
func BenchmarkRedactMultiLineEnv(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	lines := []string{"-----BEGIN RSA PRIVATE KEY-----"}
	for range 50 {
		l := make([]byte, 64)
		for i := range l {
			l[i] = b64[rng.IntN(len(b64))]
		}
		lines = append(lines, string(l))
	}
	lines = append(lines, "-----END RSA PRIVATE KEY-----")
	r := benchRedactor().WithEnv([]string{"DEPLOY_KEY=" + strings.Join(lines, "\n")})
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

// TestBlockIndexFindsEveryNeedle: the lookup of a line's 8-byte blocks
// finds a needle of blockMinLen bytes or more wherever it starts, as bytes.Contains
// does, and nothing else.
func TestBlockIndexFindsEveryNeedle(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	const alpha = "ABCDab01+/ y"
	word := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alpha[rng.IntN(len(alpha))]
		}
		return b
	}
	var needles [][]byte
	for range 40 {
		needles = append(needles, word(blockMinLen+rng.IntN(60)))
	}
	x := newBlockIndex(needles)
	for range 20000 {
		line := word(rng.IntN(200))
		if rng.IntN(2) == 0 {
			nd := needles[rng.IntN(len(needles))]
			at := rng.IntN(len(line) + 1)
			line = append(append(append([]byte{}, line[:at]...), nd...), line[at:]...)
		}
		want := false
		for _, nd := range needles {
			want = want || bytes.Contains(line, nd)
		}
		require.Equal(t, want, x.contains(line), "%q", line)
	}
}
