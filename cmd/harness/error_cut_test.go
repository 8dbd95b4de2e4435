package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestErrorLineCutsALongValue: an error naming an over-long value (a
// 200 KB agent in harness.toml, a 200 KB flag) shows the value's start,
// not all of it: the line stays short, a quoted value keeps its closing
// quote, a word its colon. Before, the whole value was printed on the
// one line.
func TestErrorLineCutsALongValue(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	for _, tc := range []struct {
		name, toml string
		args       []string
		prefix     string
		cut        string
	}{
		{"toml-agent", "agent = \"" + long + "\"\n", []string{"run", "-p", "x", "--dry-run"},
			`harness: harness.toml: agent: "xxx`, `xx…" is not a known agent`},
		{"toml-agent-controls", "agent = \"" + strings.Repeat(`\u0001`, 1000) + "\"\n", []string{"run", "-p", "x", "--dry-run"},
			`harness: harness.toml: agent: "\x01`, `\x01…" is not a known agent`},
		{"flag-agent", "", []string{"run", "--agent", long, "-p", "x", "--dry-run"},
			`harness: unknown agent "xxx`, `xx…" (known:`},
		{"flag-cwd", "", []string{"run", "--agent", "nop", "--cwd", "/" + long, "-p", "x", "--dry-run"},
			`harness: --cwd: stat /xxx`, `xx…: file name too long`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := isolate(t)
			if tc.toml != "" {
				require.NoError(t, os.WriteFile(filepath.Join(home, "harness.toml"), []byte(tc.toml), 0o600))
			}
			r := invoke(t, "", tc.args...)
			require.Equal(t, exitUsage, r.code)
			require.Less(t, len(r.stderr), 2048, "the line holds the whole value")
			require.True(t, strings.HasPrefix(r.stderr, tc.prefix), r.stderr)
			require.Contains(t, r.stderr, tc.cut)
			require.Equal(t, 1, strings.Count(r.stderr, "\n"))
		})
	}
}
