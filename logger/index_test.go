package logger

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLostHarness: a meta still saying running whose harness process is
// gone (no such pid, or the pid reused by another process) reads lost; a
// live one, one of another machine or pid namespace, and one naming no
// process read running.
func TestLostHarness(t *testing.T) {
	t.Parallel()
	me := self()
	require.NotNil(t, me, "this test needs /proc")
	require.Equal(t, os.Getpid(), me.PID)
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		harness *Process
		want    string
	}{
		"alive":         {me, StatusRunning},
		"pid-reused":    {&Process{PID: me.PID, Start: me.Start + 1, NS: me.NS}, StatusLost},
		"no-such-pid":   {&Process{PID: 1 << 30, Start: me.Start, NS: me.NS}, StatusLost},
		"other-machine": {&Process{PID: 1 << 30, Start: me.Start, NS: "another-boot/pid:[1]"}, StatusRunning},
		"names-no-proc": {nil, StatusRunning},
		"no-namespace":  {&Process{PID: 1 << 30, Start: 1}, StatusRunning},
	} {
		t.Run(name, func(t *testing.T) {
			run := "run_" + name
			s := openTest(t, dir, run, Meta{Agent: "claude", Harness: tc.harness})
			defer s.Close(Meta{})
			if tc.harness == nil {
				// Open names this process when the caller named none.
				require.Equal(t, me, readMeta(t, dir, run).Harness)
				writeMetaFile(t, dir, Meta{Run: run, Agent: "claude", Status: StatusRunning})
			}
			m, err := Load(dir, run)
			require.NoError(t, err)
			require.Equal(t, tc.want, m.Status)
		})
	}
}

func writeMetaFile(t *testing.T, dir string, m Meta) {
	t.Helper()
	s := &Session{dir: dir, run: m.Run, meta: m, red: NewRedactor(nil)}
	require.NoError(t, s.writeMeta())
}

// TestIndex: an Index lists what List does as runs come, end, are lost
// and are pruned; a final meta is not read again.
func TestIndex(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions")
	x := NewIndex(dir)
	got, err := x.List()
	require.NoError(t, err)
	require.Empty(t, got)
	check := func() []Meta {
		t.Helper()
		want, err := List(dir)
		require.NoError(t, err)
		got, err := x.List()
		require.NoError(t, err)
		require.Equal(t, want, got)
		return got
	}
	a := openTest(t, dir, "run_A", Meta{Agent: "claude"})
	check()
	b := openTest(t, dir, "run_B", Meta{Agent: "codex"})
	require.Len(t, check(), 2)
	require.NoError(t, a.Close(Meta{Status: "success"}))
	require.Equal(t, "success", check()[1].Status)
	me := self()
	writeMetaFile(t, dir, Meta{Run: "run_B", Agent: "codex", Status: StatusRunning, Start: check()[0].Start,
		Harness: &Process{PID: me.PID, Start: me.Start + 1, NS: me.NS}})
	require.Equal(t, StatusLost, check()[0].Status)
	require.NoError(t, b.Close(Meta{Status: "error"}))
	require.Equal(t, "error", check()[0].Status)

	// A final meta is kept: a torn rewrite of it (which harness never
	// does) is not seen.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run_A"+ExtMeta), []byte("{"), 0o600))
	got, err = x.List()
	require.NoError(t, err)
	require.Equal(t, "success", got[1].Status)

	removed, err := Prune(dir, 0, got[0].End.Add(1e9))
	require.NoError(t, err)
	require.Len(t, removed, 2)
	require.Empty(t, check())
}
