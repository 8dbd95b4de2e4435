package opencode

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters/adaptertest"
)

// TestGoldenDiffsApply applies every diff of the goldens with git apply to
// the files as the native tool part says they were before the call, and
// checks that it gives the files as they were after.
func TestGoldenDiffsApply(t *testing.T) {
	t.Parallel()
	goldens, err := filepath.Glob(filepath.Join(testdata, "*.golden.ndjson"))
	require.NoError(t, err)
	diffs := 0
	for _, g := range goldens {
		native := parts(t, strings.TrimSuffix(g, ".golden.ndjson")+".jsonl")
		for _, te := range adaptertest.GoldenDiffs(t, g) {
			diffs++
			dir := t.TempDir()
			before, after := contents(native[te.CallID])
			require.NotEmpty(t, after, "%s: no after content for %s", g, te.CallID)
			for path, text := range before {
				file := filepath.Join(dir, strings.TrimPrefix(path, "/"))
				require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
				require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
			}
			adaptertest.GitApply(t, dir, te.Diff)
			for path, text := range after {
				got, err := os.ReadFile(filepath.Join(dir, strings.TrimPrefix(path, "/")))
				require.NoError(t, err)
				require.Equal(t, text, string(got), "%s: %s after %s", g, path, te.CallID)
			}
		}
	}
	require.Positive(t, diffs)
}

// parts returns the native tool parts of a capture by call id.
func parts(t *testing.T, file string) map[string]gjson.Result {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	out := map[string]gjson.Result{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		l := gjson.ParseBytes(sc.Bytes())
		if l.Get("type").String() == "tool_use" {
			out[l.Get("part.callID").String()] = l.Get("part")
		}
	}
	return out
}

// contents returns the files before (those that existed) and after a
// file tool's call, from what OpenCode reported of it.
func contents(part gjson.Result) (before, after map[string]string) {
	before, after = map[string]string{}, map[string]string{}
	state := part.Get("state")
	switch part.Get("tool").String() {
	case "write":
		after[state.Get("input.filePath").String()] = state.Get("input.content").String()
	case "edit", "multiedit":
		fd := state.Get("metadata.filediff")
		before[fd.Get("file").String()] = fd.Get("before").String()
		after[fd.Get("file").String()] = fd.Get("after").String()
	case "patch", "apply_patch":
		for _, f := range state.Get("metadata.files").Array() {
			p := f.Get("filePath").String()
			if f.Get("type").String() != "add" {
				before[p] = f.Get("before").String()
			}
			if f.Get("type").String() != "delete" {
				to := p
				if mp := f.Get("movePath").String(); mp != "" {
					to = mp
				}
				after[to] = f.Get("after").String()
			}
		}
	}
	return before, after
}
