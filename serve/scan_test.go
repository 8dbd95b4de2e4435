package serve

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/logger"
)

func TestCut(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", "abcdef": "abcd…", "ééé": "éé…", "aéé": "aé…"} {
		if got := cut(in, 4); got != want {
			t.Errorf("cut(%q, 4) = %q, want %q", in, got, want)
		}
	}
}

// TestScan: a run's summary is the event.Tally of its log; a line of a
// type this version does not know still counts as an event, and a fatal
// error's partial is not kept.
func TestScan(t *testing.T) {
	var sc scan
	for _, l := range []string{
		`{"v":1,"type":"session_start","run":"r","seq":1,"ts":10,"agent":"claude","model":"sonnet","cwd":"/w","pty":false,"argv":[]}`,
		`{"v":1,"type":"tool_start","run":"r","seq":2,"ts":11,"call_id":"c","name":"Bash","kind":"shell","input":{}}`,
		`{"v":1,"type":"tool_end","run":"r","seq":3,"ts":12,"call_id":"c","name":"Bash","kind":"shell","status":"error"}`,
		`{"v":1,"type":"usage","run":"r","seq":4,"ts":13,"input_tokens":5,"cost_usd":0.25,"cost_estimated":true}`,
		`{"v":1,"type":"error","run":"r","seq":5,"ts":14,"code":"idle_timeout","message":"m","fatal":true,"partial":{"stderr_tail":"x","last_events":[],"events":4,"last_activity_ms_ago":1}}`,
		`{"v":2,"type":"a_future_type","run":"r","seq":6,"ts":15}`,
	} {
		sc.add([]byte(l))
	}
	ta := sc.tally
	require.Equal(t, int64(6), ta.Events)
	require.Equal(t, int64(14), ta.LastTS)
	require.Equal(t, "sonnet", ta.Model)
	require.Equal(t, map[string]int{"shell": 1}, ta.ToolsByKind)
	require.Equal(t, 1, ta.ToolsFailed)
	require.Nil(t, ta.Fatal)
	usd, est := ta.Cost()
	require.Equal(t, 0.25, *usd)
	require.True(t, est)
	require.False(t, ta.Ended())
	long := strings.Repeat("é", 400)
	sc.add([]byte(`{"v":1,"type":"result","run":"r","seq":7,"ts":16,"status":"timeout","text":"` + long + `","duration_ms":9,"usage":{"input_tokens":6},"stats":{"native_lines":0,"unparsed_lines":0,"events":7,"tool_calls":1}}`))
	require.True(t, sc.tally.Ended())
	require.Equal(t, cut(long, resultPreview), sc.result)
	require.Equal(t, int64(6), sc.tally.Usage.InputTokens)
}

// TestSummaryLocksOneRun: while a run's log is being read (slow: a
// network file system, a FIFO before the store refused them), the other
// runs' summaries are read: the lock of all the summaries is not held
// across a read, only the run's own.
func TestSummaryLocksOneRun(t *testing.T) {
	ss := summaries{dir: t.TempDir()}
	ss.get("run_slow")
	su := ss.by["run_slow"]
	su.mu.Lock() // a read of run_slow's log in progress
	defer su.mu.Unlock()
	done := make(chan struct{})
	go func() {
		ss.get("run_other")
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a summary waited for another run's read")
	}
}

// TestSummariesForgetRemovedRuns: the summaries of runs removed from the
// store (sessions prune, a directory deleted by hand) were kept for the
// server's life, so a long-lived server's memory grew with every run it
// ever listed. A listing now forgets the runs it no longer finds once
// they outnumber the runs in the store.
func TestSummariesForgetRemovedRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	write := func(id string) {
		meta := `{"run":"` + id + `","agent":"claude","start":"2026-11-01T00:00:00Z","status":"running"}`
		require.NoError(t, os.WriteFile(logger.Path(dir, id, logger.ExtMeta), []byte(meta), 0o600))
		appendLog(t, dir, id, boundsLine(id, 1, "session_start", `,"agent":"claude","cwd":"/w","pty":false,"argv":[]`))
	}
	remove := func(id string) {
		for _, ext := range []string{logger.ExtMeta, logger.ExtEvents} {
			require.NoError(t, os.Remove(logger.Path(dir, id, ext)))
		}
	}
	s := New(Config{Dir: dir, Open: true})
	for i := range 50 {
		old := fmt.Sprintf("run_01GONE%018d", i)
		write(old)
		require.Len(t, getJSON(t, s, "/api/runs")["runs"], 1)
		remove(old)
	}
	const kept = "run_01KEPT0000000000000000000"
	write(kept)
	require.Len(t, getJSON(t, s, "/api/runs")["runs"], 1)
	s.summary.mu.Lock()
	defer s.summary.mu.Unlock()
	require.LessOrEqual(t, len(s.summary.by), 2, "summaries of removed runs are kept")
	require.Contains(t, s.summary.by, kept)
}

// TestSummaryLogRewritten: a run's log truncated or replaced after the
// list summarised it (rewritten shorter by hand, or by a tool) was read
// on from the old log's offset: nothing past the new end (the old
// figures kept for good), or the middle of a line of the new one. The
// summary now reads such a log again from its start.
func TestSummaryLogRewritten(t *testing.T) {
	const id = "run_01REWRITTEN0000000000000"
	start := boundsLine(id, 1, "session_start", `,"agent":"claude","cwd":"/w","pty":false,"argv":[]`)
	tool := boundsLine(id, 2, "tool_start", `,"call_id":"c","name":"Bash","kind":"shell","input":{}`)
	for _, tc := range []struct {
		name    string
		rewrite func(t *testing.T, path string)
		events  int
	}{
		{"truncated", func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, []byte(start), 0o600))
		}, 1},
		{"replaced", func(t *testing.T, path string) {
			long := boundsLine(id, 2, "message", `,"role":"assistant","text":"`+strings.Repeat("z", 400)+`"`)
			next := boundsLine(id, 3, "message", `,"role":"assistant","text":"hi"`)
			require.NoError(t, os.WriteFile(path+".new", []byte(start+long+next), 0o600))
			require.NoError(t, os.Rename(path+".new", path))
		}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sessions")
			require.NoError(t, os.MkdirAll(dir, 0o700))
			meta := `{"run":"` + id + `","agent":"claude","start":"2026-11-01T00:00:00Z","status":"running"}`
			require.NoError(t, os.WriteFile(logger.Path(dir, id, logger.ExtMeta), []byte(meta), 0o600))
			appendLog(t, dir, id, start+tool+boundsLine(id, 3, "usage", `,"input_tokens":7`))
			s := New(Config{Dir: dir, Open: true})
			r := getJSON(t, s, "/api/runs/"+id)
			require.EqualValues(t, 3, r["events"])
			require.EqualValues(t, 1, r["tool_calls"])
			require.EqualValues(t, 7, r["usage"].(map[string]any)["input_tokens"])

			tc.rewrite(t, logger.Path(dir, id, logger.ExtEvents))
			r = getJSON(t, s, "/api/runs/"+id)
			require.EqualValues(t, tc.events, r["events"])
			require.EqualValues(t, 0, r["tool_calls"], "the old log's figures")
			require.NotContains(t, r["usage"], "input_tokens")
		})
	}
}
