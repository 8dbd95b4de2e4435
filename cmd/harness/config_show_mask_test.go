package main

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/urlmask"
)

// TestConfigShowMasksOTLPCredentials: config show prints an otlp endpoint
// (from HARNESS_OTLP or harness.toml) with its user, password and query
// values masked, as package otlp's messages do: it printed them in clear.
func TestConfigShowMasksOTLPCredentials(t *testing.T) {
	const url = "https://alice:s3cret@collector.example:4318/otlp?api_key=k3y-v4lue&tok"
	const shown = "https://***@collector.example:4318/otlp?api_key=***&***"
	check := func(t *testing.T, from string) {
		r := invoke(t, "", "config", "show")
		require.Equal(t, 0, r.code, r.stderr)
		require.Regexp(t, `(?m)^otlp\s+`+regexp.QuoteMeta(shown)+`\s+`+regexp.QuoteMeta(from), r.stdout)
		for _, secret := range []string{"alice", "s3cret", "k3y-v4lue", "tok"} {
			require.NotContains(t, r.stdout, secret)
		}
	}
	t.Run("env", func(t *testing.T) {
		isolate(t)
		t.Setenv("HARNESS_OTLP", url)
		check(t, "env HARNESS_OTLP")
	})
	t.Run("toml", func(t *testing.T) {
		isolateWith(t, `otlp = "`+url+`"`+"\n")
		check(t, "harness.toml")
	})
}

func TestShownEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "",
		"http://127.0.0.1:4318":  "http://127.0.0.1:4318",
		"http://u:p@h:4318/v1":   "http://***@h:4318/v1",
		"http://u:p/w@h:4318/v1": "http://***@h:4318/v1", // a "/" in the password
		"http://u:p?w@h:4318":    "http://***",           // a "?" in the password
		"http://h?a=1&b=&c":      "http://h?a=***&b=***&***",
		"http://h/?key=v#frag":   "http://h/?key=***#***",
		"u:p@h:4318":             "***@h:4318",
		"http://h?k=a@b&t=s3":    "http://***", // or an "@" in the query
	} {
		require.Equal(t, want, urlmask.Mask(in), in)
	}
}
