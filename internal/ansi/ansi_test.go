package ansi

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStrip(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":                           "plain",
		"\x1b[31mred\x1b[0m":              "red",
		"\x1b[1;32mbold green\x1b[m done": "bold green done",
		"\x1b]0;title\x07after":           "after",
		"\u009b2Kcleared":                 "cleared",
		"a\x1b[2Jb\x1b[Hc":                "abc",
	} {
		require.Equal(t, want, Strip(in), "%q", in)
	}
}
