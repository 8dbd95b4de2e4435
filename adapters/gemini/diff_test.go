package gemini

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestGoldenDiffsApply applies every diff of the goldens, in order, with
// git apply to the files as the calls before it left them (Gemini's
// stream shows no file it did not create, so each run starts from an
// empty directory), and checks the files the run ends with.
func TestGoldenDiffsApply(t *testing.T) {
	t.Parallel()
	want := map[string]map[string]string{
		"edit_write": {"tmp/work/NOTES.md": "# Notes\n\nFoo is now Bar.\n"},
		"write_replace": {
			"tmp/work/greet.go": "package main\n\nfunc hi() string {\n\treturn \"hi\"\n}\n\nfunc main() {\n\tprintln(hi())\n}\n",
			"tmp/work/NOTES.md": "hello is now hi\n",
		},
	}
	goldens, err := filepath.Glob(filepath.Join(testdata, "*.golden.ndjson"))
	require.NoError(t, err)
	for _, g := range goldens {
		name := strings.TrimSuffix(filepath.Base(g), ".golden.ndjson")
		data, err := os.ReadFile(g)
		require.NoError(t, err)
		evs, err := event.ReadAll(bytes.NewReader(data))
		require.NoError(t, err)
		dir := t.TempDir()
		n := 0
		for _, ev := range evs {
			te, ok := ev.Body.(*event.ToolEnd)
			if !ok || te.Diff == "" {
				continue
			}
			n++
			patch := filepath.Join(t.TempDir(), "p.diff")
			require.NoError(t, os.WriteFile(patch, []byte(te.Diff), 0o600))
			cmd := exec.Command("git", "apply", patch)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s: the diff of %s does not apply: %s\n%s", name, te.CallID, out, te.Diff)
		}
		files, ok := want[name]
		if n == 0 {
			require.False(t, ok, "%s: no diff in the golden", name)
			continue
		}
		require.True(t, ok, "%s has diffs: add the files it ends with", name)
		for path, text := range files {
			got, err := os.ReadFile(filepath.Join(dir, path))
			require.NoError(t, err)
			require.Equal(t, text, string(got), "%s: %s", name, path)
		}
	}
}
