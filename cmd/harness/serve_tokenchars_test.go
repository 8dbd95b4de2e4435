package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestServeTokenFileTwoLines: a token file whose token no Authorization header
// can carry (two lines: the first line and the second read as one token
// with a newline in it) is refused, exit 2 with one line that does not
// quote it, by serve and by mcp alike. Serve took it, and then refused
// every client.
func TestServeTokenFileTwoLines(t *testing.T) {
	home := isolate(t)
	f := filepath.Join(home, "token")
	require.NoError(t, os.WriteFile(f, []byte("aaaaaaaaaaaaaaaaaaaa\nbbbbbbbbbbbbbbbbbbbbbbbb\n"), 0o600))
	for _, cmd := range []string{"serve", "mcp"} {
		t.Run(cmd, func(t *testing.T) {
			done := make(chan result, 1)
			go func() { done <- invoke(t, "", cmd, "--listen", "127.0.0.1:0", "--token-file", f) }()
			var r result
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s took the token and is serving", cmd)
			}
			require.Equal(t, exitUsage, r.code, r.stderr)
			require.Contains(t, r.stderr, "byte 0x0a at offset 20: a token is one line of visible ASCII")
			require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
			require.NotContains(t, r.stderr, "aaaa")
		})
	}
}
