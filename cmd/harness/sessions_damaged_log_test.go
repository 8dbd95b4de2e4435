package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/logger"
)

// damagedStore is a session directory holding run_01OK: a meta, an event
// log of a session_start and a result, and a native log.
func damagedStore(t *testing.T) (dir, ss, result string) {
	t.Helper()
	dir = filepath.Join(isolate(t), "sessions")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	ss = `{"v":1,"type":"session_start","run":"run_01OK","seq":1,"ts":1000,"agent":"claude","model":"m-1"}`
	result = `{"v":1,"type":"result","run":"run_01OK","seq":2,"ts":2000,"status":"success","usage":{"input_tokens":1,"output_tokens":1}}`
	meta := `{"run":"run_01OK","agent":"claude","model":"m-1","prompt_preview":"hello","argv":["claude","-p","<prompt>"],"start":"2026-01-02T03:04:05Z","end":"2026-01-02T03:04:06Z","status":"success","permissions":"full-access"}`
	for ext, data := range map[string]string{
		logger.ExtMeta:   meta,
		logger.ExtEvents: ss + "\n" + result + "\n",
		logger.ExtNative: `{"type":"system","subtype":"init","session_id":"s"}` + "\n",
	} {
		require.NoError(t, os.WriteFile(logger.Path(dir, "run_01OK", ext), []byte(data), 0o600))
	}
	return dir, ss, result
}

// TestSessionsReplayCutLastLine: replay of a log whose harness was killed
// mid-write printed the cut line with a newline, as if whole (exit 0),
// and `| jq` failed on it. The line is left out, one line on stderr says
// so, and the exit stays 0: a cut log is readable, as the exports read it.
func TestSessionsReplayCutLastLine(t *testing.T) {
	dir, ss, result := damagedStore(t)
	events := logger.Path(dir, "run_01OK", logger.ExtEvents)
	require.NoError(t, os.WriteFile(events, []byte(ss+"\n"+result[:40]), 0o600))

	for _, speed := range []string{"0", "1000"} {
		r := invoke(t, "", "sessions", "--dir", dir, "replay", "--speed", speed, "run_01OK")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Equal(t, ss+"\n", r.stdout)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
		require.Contains(t, r.stderr, "harness: warning: sessions replay: run run_01OK: its log ends in a line cut short (40 bytes")
	}

	// A log that ends whole: nothing said.
	require.NoError(t, os.WriteFile(events, []byte(ss+"\n"+result+"\n"), 0o600))
	r := invoke(t, "", "sessions", "--dir", dir, "replay", "run_01OK")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, ss+"\n"+result+"\n", r.stdout)
	require.Empty(t, r.stderr)
}

// TestSessionsReplayBadSpeed: a negative --speed was refused by the
// logger (exit 1), after the run was looked up, and a run that does not
// exist got the same message; NaN and infinite speeds were taken. Each is
// a usage error (2), said before anything is read.
func TestSessionsReplayBadSpeed(t *testing.T) {
	dir, _, _ := damagedStore(t)
	for _, speed := range []string{"-1", "-0.5", "NaN", "Inf", "+Inf", "-Inf"} {
		for _, run := range []string{"run_01OK", "run_nope"} {
			r := invoke(t, "", "sessions", "--dir", dir, "replay", "--speed="+speed, run)
			require.Equal(t, exitUsage, r.code, "%s %s: %s", speed, run, r.stderr)
			require.Empty(t, r.stdout)
			require.Contains(t, r.stderr, "--speed ", "%s %s", speed, run)
			require.NotContains(t, r.stderr, "no such run")
			require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
		}
	}
	r := invoke(t, "", "sessions", "--dir", dir, "replay", "--speed=0.5", "run_01OK")
	require.Equal(t, exitOK, r.code, r.stderr)
}

// TestSessionsShowDamagedMeta: show of a run whose meta does not decode
// printed a meta rebuilt from its event log, without its prompt, argv or
// permissions, and said nothing. It still prints it (exit 0), with one
// warning line saying the meta does not decode and what is shown.
func TestSessionsShowDamagedMeta(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(path string) error
		why    string
	}{
		{"garbled", func(p string) error { return os.WriteFile(p, []byte(`{"run": garbage`), 0o600) }, "invalid character"},
		{"directory", func(p string) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Mkdir(p, 0o700)
		}, "not a regular file"},
		{"wrong-type", func(p string) error {
			return os.WriteFile(p, []byte(`{"run":"run_01OK","agent":"claude","start":12345}`), 0o600)
		}, "malformed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, _, _ := damagedStore(t)
			path := logger.Path(dir, "run_01OK", logger.ExtMeta)
			require.NoError(t, c.damage(path))
			r := invoke(t, "", "sessions", "--dir", dir, "show", "run_01OK")
			require.Equal(t, exitOK, r.code, r.stderr)
			var m logger.Meta
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &m), r.stdout)
			require.Equal(t, "claude", m.Agent)
			require.Equal(t, "success", m.Status) // the log's result
			require.Empty(t, m.PromptPreview)
			require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
			require.Contains(t, r.stderr, "harness: warning: sessions show: run run_01OK: its meta "+path+" does not decode (")
			require.Contains(t, r.stderr, c.why)
			require.Contains(t, r.stderr, "shown is a meta rebuilt from its event log")
		})
	}
	t.Run("intact", func(t *testing.T) {
		dir, _, _ := damagedStore(t)
		r := invoke(t, "", "sessions", "--dir", dir, "show", "run_01OK")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Contains(t, r.stdout, `"prompt_preview": "hello"`)
		require.Empty(t, r.stderr)
	})
}

// TestSessionsReparseMissingMeta: reparse of a run with only its native
// log said its meta was damaged; there is none.
func TestSessionsReparseMissingMeta(t *testing.T) {
	dir, _, _ := damagedStore(t)
	require.NoError(t, os.Remove(logger.Path(dir, "run_01OK", logger.ExtMeta)))
	require.NoError(t, os.Remove(logger.Path(dir, "run_01OK", logger.ExtEvents)))
	r := invoke(t, "", "sessions", "--dir", dir, "reparse", "run_01OK")
	require.Equal(t, exitAgentFailed, r.code, r.stderr)
	require.Equal(t, "harness: sessions reparse: run run_01OK: no meta names its agent ("+
		logger.Path(dir, "run_01OK", logger.ExtMeta)+" is missing)\n", r.stderr)

	// One that is there and does not decode is damaged.
	require.NoError(t, os.WriteFile(logger.Path(dir, "run_01OK", logger.ExtMeta), []byte("{garbage"), 0o600))
	r = invoke(t, "", "sessions", "--dir", dir, "reparse", "run_01OK")
	require.Equal(t, exitAgentFailed, r.code, r.stderr)
	require.Contains(t, r.stderr, "is damaged)")
}

// TestSessionsDirNotADirectory: a --dir that is a regular file gave exit
// 1 for list, prune and replay and 2 for show, reparse and export. It is
// the user's mistake: 2 for each, with one line naming it.
func TestSessionsDirNotADirectory(t *testing.T) {
	file := filepath.Join(isolate(t), "afile")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	for _, args := range [][]string{
		{"list"}, {"list", "--json"}, {"prune", "--older-than", "1h"}, {"prune", "--older-than", "1h", "--dry-run"},
		{"show", "x"}, {"replay", "x"}, {"reparse", "x"}, {"export", "x"}, {"export", "--format", "atif", "x"},
	} {
		r := invoke(t, "", append([]string{"sessions", "--dir", file}, args...)...)
		require.Equal(t, exitUsage, r.code, "%v: %s", args, r.stderr)
		require.Empty(t, r.stdout, "%v", args)
		require.Equal(t, "harness: sessions: "+file+" is not a directory\n", r.stderr, "%v", args)
	}
	// One that does not exist is a store with no runs, as before.
	r := invoke(t, "", "sessions", "--dir", filepath.Join(file+".none"), "list", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
}
