package logger

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// TestRedactNumberUnderSecretKey: a number under a key that names a
// secret (a PIN, a numeric key) is replaced by the string Redacted, so the
// line stays JSON; true, false, null and the structure of an object or
// array under such a key are kept.
func TestRedactNumberUnderSecretKey(t *testing.T) {
	t.Parallel()
	r := NewRedactor(nil)
	for in, want := range map[string]string{
		`{"password":12345678901}`:                      `{"password":"[REDACTED]"}`,
		`{"api_key": 1234567890123, "n": 7}`:            `{"api_key": "[REDACTED]", "n": 7}`,
		`{"apiKey":-12.5e+3}`:                           `{"apiKey":"[REDACTED]"}`,
		`{"client_secret" :0}`:                          `{"client_secret" :"[REDACTED]"}`,
		`[{"x-api-key":987654,"pin":1}]`:                `[{"x-api-key":"[REDACTED]","pin":1}]`,
		`{"\u0074oken":4242}`:                           `{"\u0074oken":"[REDACTED]"}`,
		`{"token":true,"secret":null,"passwd":false}`:   `{"token":true,"secret":null,"passwd":false}`,
		`{"credentials":{"user":"a","pass":"b","n":1}}`: `{"credentials":{"user":"a","pass":"b","n":1}}`,
		`{"auth":{"token":31337},"password_len":12}`:    `{"auth":{"token":"[REDACTED]"},"password_len":12}`,
	} {
		out := r.Redact([]byte(in))
		require.Equal(t, want, string(out), in)
		require.True(t, json.Valid(out), "%s", out)
	}
}

// TestRedactQuotedPairValue: a value in quotes after a secret key is
// redacted whole, not its first word only, in text (stderr) and inside a
// JSON string (a command in a tool call, once or twice encoded).
func TestRedactQuotedPairValue(t *testing.T) {
	t.Parallel()
	r := NewRedactor(nil)
	for _, c := range []struct{ name, in, want string }{
		{"double", `password="a b c"`, `password="[REDACTED]"`},
		{"mysql", `mysql --password="my secret pw" db`, `mysql --password="[REDACTED]" db`},
		{"single", `export API_TOKEN='abc def' && run`, `export API_TOKEN='[REDACTED]' && run`},
		{"escaped-quote-inside", `secret="a \" b" x`, `secret="[REDACTED]" x`},
		{"spaces-around", `client_secret = "x y"; next`, `client_secret = "[REDACTED]"; next`},
		{"json-in-text", `config {"password": "a b c", "user": "bob"}`, `config {"password": "[REDACTED]", "user": "bob"}`},
		{"escaped-in-text", `stderr: mysql --password=\"my secret pw\" db`, `stderr: mysql --password=\"[REDACTED]\" db`},
		{"escaped-json-in-text", `{\"password\": \"a b\", \"user\": \"bob\"}`, `{\"password\": \"[REDACTED]\", \"user\": \"bob\"}`},
		{"unclosed-quote", `password="abc def`, `password="[REDACTED] def`},
		{"empty-kept", `password="" user=bob`, `password="" user=bob`},
		{"two-pairs", `token='a b' secret="c d"`, `token='[REDACTED]' secret="[REDACTED]"`},
		{"number", `password=12345678`, `password=[REDACTED]`},
		{"json-command", `{"command":"mysql --password=\"my secret pw\" db"}`, `{"command":"mysql --password=\"[REDACTED]\" db"}`},
		{"json-single", `{"command":"export API_TOKEN='abc def'"}`, `{"command":"export API_TOKEN='[REDACTED]'"}`},
		{"json-twice", `{"arguments":"{\"cmd\":\"mysql --password=\\\"my secret\\\" db\"}"}`,
			`{"arguments":"{\"cmd\":\"mysql --password=\\\"[REDACTED]\\\" db\"}"}`},
		{"json-key-value", `{"password": "a b c"}`, `{"password": "[REDACTED]"}`},
		{"quote-stops-at-line-end", "password=\"a\nb\" c", "password=\"[REDACTED]\nb\" c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := r.Redact([]byte(c.in))
			require.Equal(t, c.want, string(out))
			require.Equal(t, json.Valid([]byte(c.in)), json.Valid(out), "a valid JSON line stays valid")
		})
	}
	// The guards hold: a word that only contains a pair word is no key.
	for _, s := range []string{`input_tokens: "240 50"`, `keyboard="a b"`, `secrets='x y'`} {
		require.Equal(t, s, string(r.Redact([]byte(s))))
	}
}

// FuzzRedactQuotedPair: a value in double quotes after password= is
// redacted whole, in text and in a JSON string, whatever it holds.
func FuzzRedactQuotedPair(f *testing.F) {
	f.Add("my secret pw")
	f.Add("a ' b ; c } d & e")
	f.Add("token=x sk-ant-api03-AbCdEf0123456789_xyz")
	r := NewRedactor(testEnv)
	f.Fuzz(func(t *testing.T, v string) {
		if v == "" || !utf8.ValidString(v) || strings.ContainsAny(v, "\"\\\r\n") {
			return
		}
		text := `x --password="` + v + `" y`
		want := `x --password="[REDACTED]" y`
		require.Equal(t, want, string(r.Redact([]byte(text))))
		line, err := json.Marshal(map[string]string{"cmd": text})
		require.NoError(t, err)
		var got map[string]string
		require.NoError(t, json.Unmarshal(r.Redact(line), &got))
		require.Equal(t, want, got["cmd"])
	})
}

// TestRedactNumberInJSONInAString: inside a JSON document quoted in a
// string (a tool call's arguments), a number under a secret key becomes
// the string Redacted and null, true and false are kept, as in a line
// that is JSON itself: the document in the string stays JSON.
func TestRedactNumberInJSONInAString(t *testing.T) {
	t.Parallel()
	r := NewRedactor(nil)
	for in, want := range map[string]string{
		`{"arguments":"{\"password\":12345678}"}`:               `{"arguments":"{\"password\":\"[REDACTED]\"}"}`,
		`{"arguments":"{\"token\": -1.5e3, \"n\": 1}"}`:         `{"arguments":"{\"token\": \"[REDACTED]\", \"n\": 1}"}`,
		`{"arguments":"{\"password\":null,\"secret\":true}"}`:   `{"arguments":"{\"password\":null,\"secret\":true}"}`,
		`{"arguments":"{\"cmd\":\"{\\\"password\\\":1234}\"}"}`: `{"arguments":"{\"cmd\":\"{\\\"password\\\":\\\"[REDACTED]\\\"}\"}"}`,
	} {
		out := r.Redact([]byte(in))
		require.Equal(t, want, string(out), in)
		var outer, inner map[string]any
		require.NoError(t, json.Unmarshal(out, &outer))
		require.NoError(t, json.Unmarshal([]byte(outer["arguments"].(string)), &inner), "the arguments stay JSON: %s", out)
	}
	// In text that is no JSON, a value is redacted whatever it is.
	for in, want := range map[string]string{
		`password=null`:         `password=[REDACTED]`,
		`password: 1234`:        `password: [REDACTED]`,
		`{"a":"token=42 next"}`: `{"a":"token=[REDACTED] next"}`,
	} {
		require.Equal(t, want, string(r.Redact([]byte(in))), in)
	}
}
