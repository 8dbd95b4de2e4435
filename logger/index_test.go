package logger

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

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

// TestSettledFromLog: a run whose meta does not say how it ended
// (running, with its harness gone or still there; no meta at all) but
// whose event log ends with the result reads as the result says: its
// status, end, exit, usage and cost, as List, Load and an Index (serve's
// run list, which reads the stream) all say. It read lost, running or
// unknown while serve said the stream's status. A log without its result
// (or one cut in its last line) keeps the meta's word.
func TestSettledFromLog(t *testing.T) {
	t.Parallel()
	me := self()
	require.NotNil(t, me, "this test needs /proc")
	gone := &Process{PID: me.PID, Start: me.Start + 1, NS: me.NS}
	const (
		start  = `{"v":1,"type":"session_start","run":"%s","seq":1,"ts":1796000000000,"agent":"codex","model":"gpt-5.5","cwd":"/w","pty":false,"argv":[]}`
		result = `{"v":1,"type":"result","run":"%s","seq":2,"ts":1796000005000,"status":"error","text":"","session_id":"s-1","duration_ms":5000,"usage":{"input_tokens":7},"cost_usd":0.5,"exit_code":3,"stats":{"native_lines":1,"unparsed_lines":0,"events":2,"tool_calls":0}}`
	)
	dir := t.TempDir()
	x := NewIndex(dir)
	write := func(run string, harness *Process, lines ...string) *Session {
		t.Helper()
		s := openTest(t, dir, run, Meta{Agent: "codex", Harness: harness, Start: t0})
		for _, l := range lines {
			require.NoError(t, s.WriteEvent(fmt.Appendf(nil, l, run)))
		}
		require.NoError(t, s.Flush())
		t.Cleanup(func() { s.Close(Meta{}) })
		return s
	}
	check := func(run string) Meta {
		t.Helper()
		m, err := Load(dir, run)
		require.NoError(t, err)
		all, err := List(dir)
		require.NoError(t, err)
		indexed, err := x.List()
		require.NoError(t, err)
		require.Equal(t, all, indexed)
		for _, o := range all {
			if o.Run == run {
				require.Equal(t, m, o)
			}
		}
		return m
	}
	ended := func(m Meta) {
		t.Helper()
		require.Equal(t, "error", m.Status)
		require.Equal(t, time.UnixMilli(1796000005000), m.End)
		require.Equal(t, 3, *m.ExitCode)
		require.EqualValues(t, 7, m.Usage.InputTokens)
		require.Equal(t, 0.5, *m.CostUSD)
		require.Equal(t, "s-1", m.SessionID)
	}

	write("run_killed", gone, start, result) // SIGKILLed between its result and Close
	ended(check("run_killed"))
	require.True(t, x.metas["run_killed"].final, "nobody is left to rewrite it")

	alive := write("run_closing", me, start, result) // between its result and Close
	ended(check("run_closing"))
	require.False(t, x.metas["run_closing"].final, "its Close is still to come")
	require.NoError(t, alive.Close(Meta{Status: "error", End: t0.Add(time.Hour)}))
	require.Equal(t, t0.Add(time.Hour), check("run_closing").End, "the meta Close wrote")

	write("run_nometa", me, start, result)
	require.NoError(t, os.Remove(filepath.Join(dir, "run_nometa"+ExtMeta)))
	m := check("run_nometa")
	ended(m)
	require.Equal(t, "gpt-5.5", m.Model, "from its session_start")
	require.Equal(t, "/w", m.Cwd)

	write("run_lost", gone, start)
	require.Equal(t, StatusLost, check("run_lost").Status, "no result: lost")
	write("run_torn", gone, start)
	f, err := os.OpenFile(filepath.Join(dir, "run_torn"+ExtEvents), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = fmt.Fprintf(f, result[:40], "run_torn")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Equal(t, StatusLost, check("run_torn").Status, "a result half written is none")
}
