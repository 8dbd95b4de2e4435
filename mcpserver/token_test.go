package mcpserver_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/mcpserver"
)

// TestTokenCharset: a token no Authorization header can carry (two
// lines, a control byte, a space, a non-ASCII byte) is refused, without
// the error quoting it; one of base64 or hex is taken. A token with a
// newline was taken, and refused every client.
func TestTokenCharset(t *testing.T) {
	t.Parallel()
	for name, tok := range map[string]string{
		"newline": "aaaaaaaaaaaaaaaaaaaa\nbbbbbbbbbbbbbbbbbbbbbbbb",
		"cr":      "aaaaaaaaaaaaaaaaaaaa\rbbbb",
		"tab":     "aaaaaaaaaaaaaaaaaaaa\tbbbb",
		"nul":     "aaaaaaaaaaaaaaaaaaaa\x00bbbb",
		"del":     "aaaaaaaaaaaaaaaaaaaa\x7fbbbb",
		"space":   "aaaaaaaaaaaaaaaaaaaa bbbb",
		"utf8":    "aaaaaaaaaaaaaaaaaaaaébbbb",
	} {
		err := mcpserver.CheckToken(tok)
		require.ErrorContains(t, err, "offset 20: a token is one line of visible ASCII", name)
		require.NotContains(t, err.Error(), "aaaa", name)
	}
	for _, tok := range []string{
		"K7gNU3sdo+OL0wNhqoVWhr3g6s1xYv72ol/pe/Unols=", // head -c 32 /dev/urandom | base64
		"0123456789abcdef0123456789abcdef",
		"test-token_0123.456~789",
		`!"#$%&'()*,:;<>?@[\]^{|}` + "`",
	} {
		require.NoError(t, mcpserver.CheckToken(tok), tok)
	}
}
