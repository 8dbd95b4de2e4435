package gemini

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
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
		dir := t.TempDir()
		n := 0
		for _, te := range adaptertest.GoldenDiffs(t, g) {
			n++
			adaptertest.GitApply(t, dir, te.Diff)
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
