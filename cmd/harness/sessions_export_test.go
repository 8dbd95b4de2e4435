package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentharness/harness/event"
)

// loggedRun runs a fake with its session log in a fresh home and returns
// the home, the run's id and the path of its event log.
func loggedRun(t *testing.T) (home, run, path string) {
	t.Helper()
	home = isolate(t)
	res := runFake(t, "long-silent-tool", "--idle-timeout", "1m")
	evs, err := event.ReadAll(strings.NewReader(res.stdout))
	require.NoError(t, err)
	run = evs[0].Run
	return home, run, filepath.Join(home, ".local", "share", "harness", "sessions", run+".ndjson")
}

// TestSessionsExportCutLog: a session log whose last line was cut
// mid-write (the harness killed while writing it) is still exported, in
// both formats, from the lines before the cut; only a bad line that is
// not the last is an error.
func TestSessionsExportCutLog(t *testing.T) {
	_, run, path := loggedRun(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	last := strings.LastIndex(strings.TrimSuffix(string(data), "\n"), "\n") + 1
	require.NoError(t, os.WriteFile(path, data[:last+20], 0o600)) // the result line, cut

	atif := invoke(t, "", "sessions", "export", "--format", "atif", run)
	require.Zero(t, atif.code, atif.stderr)
	var tr struct{ Extra map[string]any }
	require.NoError(t, json.Unmarshal([]byte(atif.stdout), &tr))
	require.Equal(t, true, tr.Extra["log_cut"])

	otlp := invoke(t, "", "sessions", "export", "--format", "otlp-json", run)
	require.Zero(t, otlp.code, otlp.stderr)
	_, err = (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(otlp.stdout))
	require.NoError(t, err)

	// A bad line before the last is not a cut: exit 1, one line.
	require.NoError(t, os.WriteFile(path, append([]byte("{\n"), data...), 0o600))
	for _, format := range []string{"atif", "otlp-json"} {
		r := invoke(t, "", "sessions", "export", "--format", format, run)
		require.Equal(t, exitAgentFailed, r.code, format)
		require.Contains(t, r.stderr, "line 1", format)
	}
}

// An -o that is one of the run's own files (here its event log, by a
// link) is refused: the export would replace the log it reads.
func TestSessionsExportOutputIsTheRunsFile(t *testing.T) {
	home, run, path := loggedRun(t)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	link := filepath.Join(home, "out.ndjson")
	require.NoError(t, os.Symlink(path, link))
	for _, format := range []string{"tar.gz", "atif", "otlp-json"} {
		r := invoke(t, "", "sessions", "export", "--format", format, "-o", link, run)
		require.Equal(t, exitUsage, r.code, r.stderr)
		require.Equal(t, "harness: sessions export: -o "+link+" is a file of run "+run+": the export would replace it\n", r.stderr)
	}
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after))
}

// A failed export leaves -o as it was: a file that was there keeps its
// content, and what harness did not create (here /dev/full, by a link)
// is never removed.
func TestSessionsExportFailureKeepsOutput(t *testing.T) {
	home, run, path := loggedRun(t)
	t.Run("device", func(t *testing.T) {
		if _, err := os.Stat("/dev/full"); err != nil {
			t.Skip("no /dev/full")
		}
		link := filepath.Join(home, "full")
		require.NoError(t, os.Symlink("/dev/full", link))
		r := invoke(t, "", "sessions", "export", "-o", link, run)
		require.Equal(t, exitAgentFailed, r.code, r.stderr)
		require.Contains(t, r.stderr, "no space left on device")
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
		st, err := os.Lstat(link)
		require.NoError(t, err)
		require.Equal(t, os.ModeSymlink, st.Mode().Type())
		st, err = os.Stat("/dev/full")
		require.NoError(t, err)
		require.Equal(t, os.ModeDevice|os.ModeCharDevice, st.Mode().Type())
	})
	t.Run("old-file", func(t *testing.T) {
		out := filepath.Join(home, "traj.json")
		require.NoError(t, os.WriteFile(out, []byte("old"), 0o600))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append([]byte("{\n"), data...), 0o600)) // the export fails
		r := invoke(t, "", "sessions", "export", "--format", "atif", "-o", out, run)
		require.Equal(t, exitAgentFailed, r.code, r.stderr)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		require.Equal(t, "old", string(got))
		left, err := filepath.Glob(filepath.Join(home, ".traj.json.*"))
		require.NoError(t, err)
		require.Empty(t, left, "temporary file left behind")
	})
}
