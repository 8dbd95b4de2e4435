package logger

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var testEnv = []string{
	"MY_SERVICE_TOKEN=tok-0123456789abcdef",
	"DB_PASSWORD=correct-horse-battery",
	"SHORT_KEY=abc",                // too short: not a secret value
	"HOME=/home/someone-long-path", // not a secret name
}

func TestRedactText(t *testing.T) {
	t.Parallel()
	r := NewRedactor(testEnv)
	cases := []struct{ name, in, want string }{
		{"openai-key", "key is sk-abcdefghij0123456789ABCDEFGH ok", "key is [REDACTED] ok"},
		{"anthropic-key", "sk-ant-api03-AbCdEf0123456789_xyz-QRSTUV", "[REDACTED]"},
		{"project-key", "export OPENAI=sk-proj-Z9y8X7w6V5u4T3s2R1q0PpOo", "export OPENAI=[REDACTED]"},
		{"bearer", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "Authorization: Bearer [REDACTED]"},
		{"bearer-lower", "curl -H 'authorization: bearer abcdefgh12345678'", "curl -H 'authorization: bearer [REDACTED]'"},
		{"github-classic", "ghp_1234567890abcdefghijABCDEFGHIJ123456", "[REDACTED]"},
		{"github-oauth", "token gho_abcdefghijklmnopqrstuvwxyz0123", "token [REDACTED]"},
		{"github-server", "ghs_abcdefghijklmnopqrstuvwxyz0123", "[REDACTED]"},
		{"github-pat", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "[REDACTED]"},
		{"aws-akia", "aws key AKIAIOSFODNN7EXAMPLE here", "aws key [REDACTED] here"},
		{"aws-asia", "ASIAY34FZKBOKMUTVV7A", "[REDACTED]"},
		{"google", "AIzaSyA-1234567890abcdefghijklmnopqrstu", "[REDACTED]"},
		{"api-key-eq", "curl https://x.test/?api_key=abc123def&x=1", "curl https://x.test/?api_key=[REDACTED]&x=1"},
		{"password-eq", "mysql -u root password=hunter2 db", "mysql -u root password=[REDACTED] db"},
		{"json-in-text", `config {"apiKey": "s3cr3t-value"} loaded`, `config {"apiKey": "[REDACTED]"} loaded`},
		{"env-value", "connecting with tok-0123456789abcdef now", "connecting with [REDACTED] now"},
		{"env-password", "pw correct-horse-battery", "pw [REDACTED]"},
		{"short-env-kept", "abc is fine", "abc is fine"},
		{"non-secret-env-kept", "cd /home/someone-long-path", "cd /home/someone-long-path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, string(r.Redact([]byte(c.in))))
		})
	}
}

func TestRedactNoFalsePositive(t *testing.T) {
	t.Parallel()
	r := NewRedactor(testEnv)
	for _, s := range []string{
		"task-manager", "sketch", "a risk-assessment-for-the-whole-project", "sk-learn-model-selection-guide",
		"desk-0123456789abcdefghijklmnop", "tokenizer settings", "input_tokens: 240, output_tokens: 50",
		`{"type":"result","usage":{"input_tokens":240,"cache_read_input_tokens":0,"output_tokens":50}}`,
		`{"type":"text","part":{"text":"the key insight is that secrets matter"}}`,
		"the keyboard and the password manager", "Bearer", "ASIAN food",
	} {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, s, string(r.Redact([]byte(s))))
		})
	}
}

func TestRedactJSON(t *testing.T) {
	t.Parallel()
	r := NewRedactor(testEnv)
	cases := []struct {
		name, in string
		check    func(t *testing.T, v map[string]any)
	}{
		{"key-in-string", `{"type":"text_delta","text":"use sk-ant-api03-AbCdEf0123456789_xyz now"}`,
			func(t *testing.T, v map[string]any) { require.Equal(t, "use [REDACTED] now", v["text"]) }},
		{"secret-key-value", `{"env":{"apiKey":"abc","OPENAI_API_KEY":"plain-value","token":"t0k"},"n":1}`,
			func(t *testing.T, v map[string]any) {
				env := v["env"].(map[string]any)
				require.Equal(t, Redacted, env["apiKey"])
				require.Equal(t, Redacted, env["OPENAI_API_KEY"])
				require.Equal(t, Redacted, env["token"])
				require.EqualValues(t, 1, v["n"])
			}},
		{"escaped-newline-before-key", `{"output":"line1\nsk-abcdefghij0123456789ABCDEFGH\n\"quoted\""}`,
			func(t *testing.T, v map[string]any) { require.Equal(t, "line1\n[REDACTED]\n\"quoted\"", v["output"]) }},
		{"escaped-json-in-tool-output", `{"output":"{\"password\": \"hunter2\", \"user\": \"bob\"}"}`,
			func(t *testing.T, v map[string]any) {
				require.Equal(t, `{"password": "[REDACTED]", "user": "bob"}`, v["output"])
			}},
		{"numbers-not-touched", `{"password_len":12,"token_count":5,"x":"ok"}`,
			func(t *testing.T, v map[string]any) { require.EqualValues(t, 12, v["password_len"]) }},
		{"env-value-in-json", `{"cmd":"echo tok-0123456789abcdef"}`,
			func(t *testing.T, v map[string]any) { require.Equal(t, "echo [REDACTED]", v["cmd"]) }},
		{"unicode-kept", `{"text":"héllo \u2028 ghp_1234567890abcdefghijABCDEFGHIJ123456 ✓"}`,
			func(t *testing.T, v map[string]any) { require.Equal(t, "héllo \u2028 [REDACTED] ✓", v["text"]) }},
		{"array-after-secret-key", `{"secret":["a","b"],"name":"x"}`,
			func(t *testing.T, v map[string]any) { require.Equal(t, []any{"a", "b"}, v["secret"]) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := r.Redact([]byte(c.in))
			require.True(t, json.Valid(out), "redacted line must stay JSON: %s", out)
			var v map[string]any
			require.NoError(t, json.Unmarshal(out, &v))
			c.check(t, v)
		})
	}
}

func TestRedactUnchangedReturnsSameSlice(t *testing.T) {
	t.Parallel()
	r := NewRedactor(nil)
	in := []byte(`{"type":"text_delta","text":"hello world"}`)
	out := r.Redact(in)
	require.Equal(t, &in[0], &out[0], "clean lines are not copied")
}

func FuzzRedactJSONStaysValid(f *testing.F) {
	f.Add(`{"a":"sk-abcdefghij0123456789ABCDEFGH"}`)
	f.Add(`{"password":"x\"y","b":["Bearer abcdefghijk"]}`)
	f.Add(`["AKIAIOSFODNN7EXAMPLE", {"token": "\u00e9\ud83d\ude00"}]`)
	f.Add(`{"password":-1.5e3,"api_key" : 0,"token":[1,true],"secret":{"n":2}}`)
	f.Add(`{"cmd":"mysql --password=\"a b\" -e 'x' token='c d'"}`)
	f.Add(`{"arguments":"{\"password\":12345678,\"token\":null,\"n\":[1]}"}`)
	r := NewRedactor(testEnv)
	f.Fuzz(func(t *testing.T, s string) {
		out := r.Redact([]byte(s))
		if json.Valid([]byte(s)) && (strings.HasPrefix(strings.TrimLeft(s, " \t"), "{") || strings.HasPrefix(strings.TrimLeft(s, " \t"), "[")) {
			require.True(t, json.Valid(out), "in %q out %q", s, out)
		}
	})
}

// benchRedactor and benchLines are what BenchmarkRedact measures.
func benchRedactor() *Redactor {
	return NewRedactor(append(testEnv, "ANTHROPIC_API_KEY=sk-ant-benchmark-0123456789"))
}

var benchLines = []struct {
	name string
	line []byte
}{
	{"clean", []byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Here is the plan: first read the file, then edit the function so that it returns early."}},"session_id":"ce92f1d2-0000-4000-8000-000000000000"}`)},
	{"usage-line", []byte(`{"type":"result","subtype":"success","usage":{"input_tokens":240,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":50},"total_cost_usd":0.00147}`)},
	{"secret", []byte(`{"type":"tool_end","output":"export OPENAI_API_KEY=sk-proj-Z9y8X7w6V5u4T3s2R1q0PpOo\nAuthorization: Bearer abcdefgh12345678"}`)},
	// A line of the flood-stdout fake (make bench's memory rows).
	{"flood-line", []byte(`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("y", 900) + `"}]},"seq":2}`)},
	// An agent's answer in English, and a tool result holding Go code:
	// real text is full of the letters that start a trigger.
	{"prose", []byte(`{"type":"assistant","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"I looked at the failing test and the cause is in the retry loop: when the server closes the connection before the response is complete, the client treats the partial body as a success and never tries again. The fix is to check the length of what was read against the Content-Length header, and to return an error that the loop already knows how to handle. I also added a test that starts a small server which hangs up halfway through, so that this case stays covered. All the tests in the package pass now, and the build is clean with the race detector on."}]},"session_id":"ce92f1d2-0000-4000-8000-000000000000"}`)},
	{"code", []byte(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01A09q90qw90lq917835lq9","type":"tool_result","content":"     1\tpackage retry\n     2\t\n     3\timport (\n     4\t\t\"context\"\n     5\t\t\"errors\"\n     6\t\t\"time\"\n     7\t)\n     8\t\n     9\t// Do calls f until it succeeds, ctx is done or n attempts failed.\n    10\tfunc Do(ctx context.Context, n int, f func() error) error {\n    11\t\tvar err error\n    12\t\tfor i := 0; i < n; i++ {\n    13\t\t\tif err = f(); err == nil {\n    14\t\t\t\treturn nil\n    15\t\t\t}\n    16\t\t\tselect {\n    17\t\t\tcase <-ctx.Done():\n    18\t\t\t\treturn errors.Join(err, ctx.Err())\n    19\t\t\tcase <-time.After(time.Duration(i+1) * 50 * time.Millisecond):\n    20\t\t\t}\n    21\t\t}\n    22\t\treturn err\n    23\t}\n"}]},"session_id":"ce92f1d2-0000-4000-8000-000000000000"}`)},
}

func BenchmarkRedact(b *testing.B) {
	r := benchRedactor()
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

// TestRedactMoreShapes: credentials the first redactor let through.
func TestRedactMoreShapes(t *testing.T) {
	t.Parallel()
	r := NewRedactor(nil)
	for _, c := range []struct{ name, in, want string }{
		{"basic-auth", "curl -H 'Authorization: Basic dXNlcjpodW50ZXIy' x", "curl -H 'Authorization: Basic [REDACTED]' x"},
		{"proxy-auth", "Proxy-Authorization: Basic dXNlcjpodW50ZXIy", "Proxy-Authorization: Basic [REDACTED]"},
		{"auth-token-scheme", "authorization: token 0123abcd4567", "authorization: token [REDACTED]"},
		{"bearer-kept-once", "Authorization: Bearer abcdefgh12345678", "Authorization: Bearer [REDACTED]"},
		{"aws-ini", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [REDACTED]"},
		{"aws-env", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS_SECRET_ACCESS_KEY=[REDACTED]"},
		{"stripe-live", "key sk_live_4eC39HqLyjWDarjtT1zdp7dc ok", "key [REDACTED] ok"},
		{"stripe-test", "rk_test_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED]"},
		{"gitlab-pat", "glpat-xYz0123456789abcdefGH", "[REDACTED]"},
		{"slack", "xoxb-123456789012-abcdefghijkl", "[REDACTED]"},
		{"url-password", "git clone https://bob:hunter2pw@git.example.com/x.git", "git clone https://bob:[REDACTED]@git.example.com/x.git"},
		{"url-token-no-user", "postgres://:s3cr3t@db:5432/app", "postgres://:[REDACTED]@db:5432/app"},
		{"url-port-kept", "see https://example.com:8080/path and user@example.com", "see https://example.com:8080/path and user@example.com"},
		// "password" calls for the pair rule first; the header still gets its own.
		{"auth-after-pair", "password=hunter2pw; Authorization: Basic dXNlcjpodW50ZXIy", "password=[REDACTED]; Authorization: Basic [REDACTED]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, string(r.Redact([]byte(c.in))))
		})
	}
	// In JSON, with "/" escaped as some encoders do.
	out := r.Redact([]byte(`{"cmd":"git clone https:\/\/bob:hunter2pw@git.example.com\/x.git"}`))
	require.True(t, json.Valid(out), "%s", out)
	require.NotContains(t, string(out), "hunter2pw")
}

// TestRedactWithEnv: every value the user handed the agent is redacted
// by value, whatever its name, in text and inside JSON strings (escaped
// or not), and the line stays JSON.
func TestRedactWithEnv(t *testing.T) {
	t.Parallel()
	base := NewRedactor(nil)
	r := base.WithEnv([]string{"FOO=plain-value-1", "X_PASS=pw12", "QUOTE=a\"b<c>d", "DEBUG=1", "MODE=short"})
	for _, c := range []struct{ in, gone string }{
		{"using plain-value-1 now", "plain-value-1"},
		{`{"text":"the value is plain-value-1."}`, "plain-value-1"},
		{`{"text":"pw is pw12"}`, "pw12"},
		{`{"text":"q=a\"b\u003cc\u003ed"}`, `a\"b\u003cc\u003ed`},
		{`{"text":"q=a\"b<c>d"}`, `a\"b<c>d`},
		{`{"plain-value-1":1}`, "plain-value-1"},
	} {
		out := r.Redact([]byte(c.in))
		require.NotContains(t, string(out), c.gone, c.in)
		require.Contains(t, string(out), Redacted, c.in)
		if strings.HasPrefix(c.in, "{") {
			require.True(t, json.Valid(out), "%s", out)
		}
	}
	require.Equal(t, "DEBUG=1 MODE=short", string(r.Redact([]byte("DEBUG=1 MODE=short"))), "short values are kept")
	where := base.WithEnv([]string{"PWD=/tmp/work-dir", "HOME=/tmp/home-dir"})
	require.Equal(t, `{"cwd":"/tmp/work-dir","home":"/tmp/home-dir"}`, string(where.Redact([]byte(`{"cwd":"/tmp/work-dir","home":"/tmp/home-dir"}`))), "paths are not secrets")
	require.Equal(t, "using plain-value-1", string(base.Redact([]byte("using plain-value-1"))), "the base is unchanged")
}

// FuzzScanAgrees: the scan, which looks up every other byte only, finds
// what a check at every position finds.
func FuzzScanAgrees(f *testing.F) {
	f.Add("key")
	f.Add(`{"Authorization":"x","t":"tok-0123456789abcdef"}`)
	f.Add("xKEyPASSWD sk-aSIA :// :\\/\\/ correct-horse-battery")
	r := NewRedactor(testEnv).WithEnv([]string{"X_PASS=pw12", "FOO=ab\"c<d"})
	f.Fuzz(func(t *testing.T, s string) {
		line := []byte(s)
		var want rule
		for i := range line {
			want |= r.at(line, i, want)
		}
		if got := r.scan(line); got != want {
			t.Fatalf("%q: scan %b, every position %b", s, got, want)
		}
	})
}

// wordGoesOn reports whether line[j] is an ASCII letter or digit.
func wordGoesOn(line []byte, j int) bool {
	if j == len(line) {
		return false
	}
	c := line[j] | 0x20 // lower case for letters
	return 'a' <= c && c <= 'z' || '0' <= line[j] && line[j] <= '9'
}

// TestScanFindsEveryNeedle: the scan, which looks at every other pair of
// bytes, calls for the same rules as a look at every position for every
// trigger (in any case) and secret value, on lines made of needles, their
// pieces and noise, at every offset.
func TestScanFindsEveryNeedle(t *testing.T) {
	t.Parallel()
	r := NewRedactor(testEnv).WithEnv([]string{"X=abcd", "MY_KEY=q\"<z"})
	var pieces []string
	for _, tr := range baseTriggers {
		n := tr.needle
		pieces = append(pieces, n, strings.ToUpper(n), n[:len(n)-1], n[1:])
	}
	for _, v := range r.env {
		pieces = append(pieces, string(v), string(v[:len(v)-1]), string(v[1:]))
	}
	pieces = append(pieces, "y", "yy", "S", "9", "_", " ", `"`, "\\", "é", "\x00")
	naive := func(line []byte) rule {
		var rules rule
		for i := range line {
			for _, v := range r.env {
				if bytes.HasPrefix(line[i:], v) {
					rules |= ruleEnv
				}
			}
			for _, tr := range baseTriggers {
				if len(line)-i >= len(tr.needle) && asciiEqualFold(line[i:i+len(tr.needle)], tr.needle) &&
					!(tr.wordEnd && wordGoesOn(line, i+len(tr.needle))) {
					rules |= tr.rules
				}
			}
		}
		return rules
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b []byte
		for range rng.IntN(8) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		require.Equal(t, naive(b), r.scan(b), "%q", b)
	}
}

// TestRedactSeesThroughEscapes: a JSON encoder may escape any character
// ("\u0073" is "s"), so a secret whose raw bytes the scan cannot find is
// still redacted in a JSON line: token shapes, values by env, secret keys.
func TestRedactSeesThroughEscapes(t *testing.T) {
	t.Parallel()
	r := NewRedactor(testEnv).WithEnv([]string{"FOO=plain-value-1"})
	for in, gone := range map[string]string{
		`{"text":"use \u0073k-ant-api03-AbCdEf0123456789_xyz now"}`: "AbCdEf0123456789_xyz",
		`{"cmd":"echo pl\u0061in-value-1"}`:                         "in-value-1",
		`{"\u0074oken":"abcdefgh1234"}`:                             "abcdefgh1234",
		`[{"out":"tok-0123456789\u0061bcdef"}]`:                     "bcdef",
	} {
		out := r.Redact([]byte(in))
		require.True(t, json.Valid(out), "%s", out)
		require.NotContains(t, string(out), gone, in)
		require.Contains(t, string(out), Redacted, in)
	}
	for _, line := range []string{
		`{"text":"\u001b[1mbold\u001b[0m"}`,                // ANSI colours: decoded, nothing to redact
		`text with \u0073k-ant-api03-AbCdEf0123456789_xyz`, // not JSON: no escape to decode
	} {
		in := []byte(line)
		require.Equal(t, line, string(r.Redact(in)))
	}
}

// TestRedactLeavesUsageLinesAlone: keys that only contain a pair word
// ("input_tokens") are not secrets, and a line with nothing to redact is
// returned as is, not rewritten; a key that ends with one still is.
func TestRedactLeavesUsageLinesAlone(t *testing.T) {
	t.Parallel()
	r := NewRedactor(nil)
	for _, line := range []string{
		`{"type":"result","usage":{"input_tokens":240,"cache_read_input_tokens":0,"output_tokens":50}}`,
		`{"keyboard":"qwertyuiop","secrets_count":3,"passwords_rotated":true}`,
		`tokens=1234567890 keys: abcdefgh`,
	} {
		in := []byte(line)
		out := r.Redact(in)
		require.Equal(t, line, string(out))
		require.Same(t, &in[0], &out[0], "%s: returned as is", line)
	}
	for in, want := range map[string]string{
		`{"usage":{"input_tokens":240},"auth_token":"abcdefgh1234"}`: `{"usage":{"input_tokens":240},"auth_token":"[REDACTED]"}`,
		`{"api_key_":"abcdefgh1234"}`:                                `{"api_key_":"[REDACTED]"}`,
		`TOKEN=abcdefgh1234 tokens=5`:                                `TOKEN=[REDACTED] tokens=5`,
		`{"Secret": "abcdefgh1234"}`:                                 `{"Secret": "[REDACTED]"}`,
	} {
		require.Equal(t, want, string(r.Redact([]byte(in))), in)
	}
}

// TestRedactAfterATextEscape: a token right after a text escape ("\n",
// "\t" as two characters: a JSON document or a log quoted inside a
// string, or printed to stderr) is a token still, where \b sees no word
// start; the escape stays, and a JSON line stays valid.
func TestRedactAfterATextEscape(t *testing.T) {
	t.Parallel()
	r := NewRedactor(testEnv)
	cases := []struct{ name, in, want string }{
		{"stderr-json", `request failed: {"error":"invalid api credential\nsk-ant-api03-AbCdEf0123456789_xyz-QRSTUV"}`,
			`request failed: {"error":"invalid api credential\n[REDACTED]"}`},
		{"github-after-tab", `k\tghp_1234567890abcdefghijABCDEFGHIJ123456 end`, `k\t[REDACTED] end`},
		{"bearer", `hdrs\nBearer eyJhbGciOiJIUzI1NiJ9.payload.sig`, `hdrs\nBearer [REDACTED]`},
		{"authorization", `GET / HTTP/1.1\nAuthorization: Basic dXNlcjpwYXNzd29yZA==\n`, `GET / HTTP/1.1\nAuthorization: Basic [REDACTED]\n`},
		{"json-string-holding-an-escape", `{"t":"a\\tglpat-abcdefghij0123456789xyz"}`, `{"t":"a\\t[REDACTED]"}`},
		{"tool-result-of-a-json-file", `{"type":"user","content":"{\"note\": \"rotate this one:\\nsk-ant-api03-AbCdEf0123456789_xyz-QRSTUV\"}"}`,
			`{"type":"user","content":"{\"note\": \"rotate this one:\\n[REDACTED]\"}"}`},
		{"prose-after-an-escape", `see\nsk-learn-model-selection-guide`, `see\nsk-learn-model-selection-guide`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := r.Redact([]byte(c.in))
			require.Equal(t, c.want, string(got))
			require.Equal(t, json.Valid([]byte(c.in)), json.Valid(got), "a valid JSON line stays valid")
		})
	}
}

// TestRedactOtherEncodersForms: a value given to WithEnv is found as other
// JSON encoders write it in a raw line: "/" as "\/" (PHP), and characters
// past ASCII as \uXXXX, lower or upper case (Python's ensure_ascii, Java).
func TestRedactOtherEncodersForms(t *testing.T) {
	t.Parallel()
	r := NewRedactor(nil).WithEnv([]string{"S1=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLE", "S2=zz東京zz99", "S3=emoji-🔑-key"})
	for _, in := range []string{
		`{"text":"slash form: wJalrXUtnFEMI\/K7MDENG\/bPxRfiCYEXAMPLE"}`,
		`{"text":"cjk: zz\u6771\u4eaczz99"}`,
		`{"text":"cjk: zz\u6771\u4EACzz99"}`,
		`{"text":"astral: emoji-\ud83d\udd11-key"}`,
		`plain text: zz\u6771\u4eaczz99 and wJalrXUtnFEMI\/K7MDENG\/bPxRfiCYEXAMPLE`,
	} {
		got := string(r.Redact([]byte(in)))
		require.Contains(t, got, Redacted, in)
		for _, leak := range []string{"wJalr", "zz99", "\\u4eac", "\\u4EAC", "\\udd11"} {
			require.NotContains(t, got, leak, in)
		}
		require.Equal(t, json.Valid([]byte(in)), json.Valid([]byte(got)), in)
	}
}

// TestRedactOTLPHeaders: the values of OTEL_EXPORTER_OTLP_HEADERS (a
// collector's API key, which every agent inherits) are redacted by value
// as written and percent-decoded, as a secret-looking variable's are; an
// agent that printed its environment put them in the log whole.
func TestRedactOTLPHeaders(t *testing.T) {
	t.Parallel()
	r := NewRedactor([]string{"OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20hdrsecret-5566778899,x-tenant=acme",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS=api-key=k9Zq7Lm2Xv4Rt8Wn"})
	for _, line := range []string{
		"OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20hdrsecret-5566778899,x-tenant=acme",
		`{"env":"authorization=Bearer%20hdrsecret-5566778899"}`,
		"sending with hdrsecret-5566778899 as the key", // decoded, no "Bearer" before it
		"key k9Zq7Lm2Xv4Rt8Wn",
	} {
		got := string(r.Redact([]byte(line)))
		require.NotContains(t, got, "hdrsecret-5566778899", line)
		require.NotContains(t, got, "k9Zq7Lm2Xv4Rt8Wn", line)
		require.Contains(t, got, Redacted, line)
	}
	require.Equal(t, "x-tenant=acme", string(r.Redact([]byte("x-tenant=acme"))), "a value of 8 bytes or less is no secret")
}
