package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMalformedEnvNamesItsPosition: an --env that is not KEY=VALUE (most
// often a bare secret that lost its KEY=) is refused by its position
// among the --env flags, its text never echoed: the error went to stderr,
// and so to terminals, CI logs and bug reports, with the whole value.
func TestMalformedEnvNamesItsPosition(t *testing.T) {
	const secret = "sk-ant-api03-XXXXsecretXXXX"
	for _, cmd := range [][]string{
		{"run", "-a", "claude", "-p", "hi"},
		{"session", "-a", "claude"},
	} {
		for _, bad := range []string{secret, "=" + secret} {
			t.Run(cmd[0]+"/"+bad[:1], func(t *testing.T) {
				isolate(t)
				args := append(append([]string(nil), cmd...), "--env", "OK=1", "--env", bad)
				r := invoke(t, "", args...)
				require.Equal(t, exitUsage, r.code, r.stderr)
				require.Equal(t, "harness: "+cmd[0]+": --env #2: want KEY=VALUE (its text is not shown: it may be a secret)\n", r.stderr)
				require.NotContains(t, r.stdout+r.stderr, "XXXXsecret")
			})
		}
	}
}
