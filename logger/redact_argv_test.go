package logger

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRedactArgv: the value of a flag that names a secret is replaced in
// both its forms, whatever the dashes and case; the program, the prompt,
// other flags and a following flag are kept.
func TestRedactArgv(t *testing.T) {
	const R = Redacted
	for _, tc := range []struct {
		in, want []string
		prompt   int
	}{
		{[]string{"claude", "--api-key", "hunter2hunter2hunter2", "--token=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "-p", "--", "hi"},
			[]string{"claude", "--api-key", R, "--token=" + R, "-p", "--", "hi"}, 6},
		{[]string{"a", "-token", "t0k", "-password=p w", "--Client-Secret", "s", "--auth", "u:p", "--proxy_auth=u:p"},
			[]string{"a", "-token", R, "-password=" + R, "--Client-Secret", R, "--auth", R, "--proxy_auth=" + R}, -1},
		{[]string{"a", "--auth-token", "x", "--access-token", "-starts-with-dash", "--credentials", "c"},
			[]string{"a", "--auth-token", R, "--access-token", R, "--credentials", R}, -1},
		// NAME=VALUE arguments: an env prefix, codex's -c overrides.
		{[]string{"env", "OPENAI_API_KEY=k", "codex", "-c", "model_providers.x.api_key=\"k\"", "-c", "model=\"o3\""},
			[]string{"env", "OPENAI_API_KEY=" + R, "codex", "-c", "model_providers.x.api_key=" + R, "-c", "model=\"o3\""}, -1},
		// Not values: a flag, the end of options, the prompt, nothing.
		{[]string{"a", "--token", "--model", "m", "--secret", "--", "p"}, []string{"a", "--token", "--model", "m", "--secret", "--", "p"}, 6},
		{[]string{"a", "--token", "--token=secret words that look like a flag"}, []string{"a", "--token", "--token=secret words that look like a flag"}, 2},
		{[]string{"a", "--token"}, []string{"a", "--token"}, -1},
		{[]string{"a", "--token=", "--token=" + R}, []string{"a", "--token=", "--token=" + R}, -1},
		// Not secret names.
		{[]string{"a", "--max-tokens", "100", "--token-file", "/f", "--key", "k", "--author", "me", "--secrets", "s", "token", "x"},
			[]string{"a", "--max-tokens", "100", "--token-file", "/f", "--key", "k", "--author", "me", "--secrets", "s", "token", "x"}, -1},
		// The program is kept.
		{[]string{"/opt/api_key=1/bin/agent", "x"}, []string{"/opt/api_key=1/bin/agent", "x"}, -1},
	} {
		in := append([]string(nil), tc.in...)
		require.Equal(t, tc.want, RedactArgv(in, tc.prompt), "%q", tc.in)
		require.Equal(t, tc.in, in, "argv itself is not changed")
	}
}

// TestSecretFlagSharesTheKeyList: a flag is secret by the names a JSON
// key is (secretKey), plus "auth".
func TestSecretFlagSharesTheKeyList(t *testing.T) {
	for _, suf := range secretKeySuffixes {
		require.True(t, SecretFlag("x-"+suf), suf)
		require.True(t, secretKey([]byte("x-"+suf)), suf)
	}
	require.True(t, SecretFlag("auth"))
	require.False(t, SecretFlag(""))
	require.False(t, SecretFlag("model"))
}
