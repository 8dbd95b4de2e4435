package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestModelsResolvePrintsIDsSafely: resolve printed the id raw, so one
// with an escape sequence (from harness.toml, a models cache, or the
// alias given, which an unknown alias is) wrote it to the terminal. Such
// an id is Go-quoted; a printable one is as it was.
func TestModelsResolvePrintsIDsSafely(t *testing.T) {
	isolateWith(t, "[models.aliases.evil]\nclaude = \"x\\u001b]0;PWNED\\u0007y\"\n[models.aliases.plain]\nclaude = \"my-model v2\"\n")
	for alias, want := range map[string]string{
		"evil":      `"x\x1b]0;PWNED\ay"`,
		"plain":     "my-model v2",
		"q\x1b[2Jz": `"q\x1b[2Jz"`,
		"x\u202ey":  `"x\u202ey"`, // a right-to-left override
	} {
		r := invoke(t, "", "models", "resolve", alias, "-a", "claude")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, want+"\n", r.stdout, "%q", alias)
	}
}

// TestPrintableID: a lone byte of invalid UTF-8 is quoted too: \x9b is
// an 8-bit CSI to some terminals.
func TestPrintableID(t *testing.T) {
	for in, want := range map[string]string{
		"claude-sonnet-4-5": "claude-sonnet-4-5",
		"a\x9b2Jb":          `"a\x9b2Jb"`,
		"tab\tid":           `"tab\tid"`,
		"":                  "",
	} {
		require.Equal(t, want, printableID(in), "%q", in)
	}
}
