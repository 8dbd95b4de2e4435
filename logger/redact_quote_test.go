package logger

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRedactPairQuoteClosesNoValue: a quote right after a secret key's
// ":" or "=" that closes the key's own string (a search pattern, a label
// in source code, JSON quoted in a string) opens no value: what lies
// between it and the next string's quote is no secret, and rewriting it
// breaks the JSON a tool call's arguments string holds (what `harness
// sessions reparse` reads back). Nor is a backslash that escapes a quote
// a value. A quoted value followed by a separator is still redacted.
func TestRedactPairQuoteClosesNoValue(t *testing.T) {
	t.Parallel()
	r := NewRedactor(nil)
	for _, in := range []string{
		`{"arguments":"{\"pattern\":\"token=\",\"path\":\"src\"}"}`,
		`{"arguments":"{\"pattern\": \"password:\", \"path\": \"src\"}"}`,
		`{"arguments":"{\"cmd\":\"curl -d '{\\\"token\\\":\\\"\\\"}' x\"}"}`,
		`{"arguments":"{\"cmd\":\"grep -rn \\\"api_key:\\\" src\"}"}`,
		`{"content":"print(\"token:\", token, \"expires:\", exp)"}`,
		`{"command":"grep -rn \"api_key:\" src/ \"other\""}`,
	} {
		out := r.Redact([]byte(in))
		require.Equal(t, in, string(out))
	}
	// The inner JSON stays JSON where a value is redacted.
	in := `{"arguments":"{\"cmd\":\"export TOKEN=abc\\\"def\"}"}`
	var outer struct{ Arguments string }
	require.NoError(t, json.Unmarshal(r.Redact([]byte(in)), &outer))
	require.Equal(t, `{"cmd":"export TOKEN=[REDACTED]\"def"}`, outer.Arguments)
	require.True(t, json.Valid([]byte(outer.Arguments)))
	for in, want := range map[string]string{
		`password="a b c".`:               `password="[REDACTED]".`,
		`sh -c "mysql --password='a b'"`:  `sh -c "mysql --password='[REDACTED]'"`,
		`{"password":"a b","user":"x"}x`:  `{"password":"[REDACTED]","user":"x"}x`,
		`token=C:\keys\k1 next`:           `token=[REDACTED] next`,
		`token="a b"x`:                    `token="[REDACTED] b"x`, // no closing: its first word
		`api_key: "a b" # the key`:        `api_key: "[REDACTED]" # the key`,
		"secret='x y'\nnext":              "secret='[REDACTED]'\nnext",
		`{\"token\": \"a b\"}`:            `{\"token\": \"[REDACTED]\"}`,
		`token=\"a b\"x \"token=\",\"p\"`: `token=\"[REDACTED] b\"x \"token=\",\"p\"`,
	} {
		require.Equal(t, want, r.RedactString(in), in)
	}
}
