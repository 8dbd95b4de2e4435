package mcpserver_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mcpserver"
)

// TestSessionBoundsFinishedRuns: without session logs, the events a
// session keeps of its finished runs stay within its budget, the oldest
// run's dropped first; that run keeps its summary, and run_status and
// run_events say its events are gone. Past the count of finished runs
// the oldest is forgotten. Every finished run kept its events until the
// session ended: a long session's memory grew with each run.
func TestSessionBoundsFinishedRuns(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *mcpserver.Options) { o.Settings = &harness.Settings{} })
	mcpserver.SetSessionBounds(f.srv, 1<<30, 3)
	run := func() string {
		t.Helper()
		res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "slow-drip"}, nil)
		require.False(t, res.IsError, harnesstest.MCPText(res))
		return harnesstest.MCPStructured(t, res).Get("run_id").String()
	}
	ids := []string{run()}
	one := mcpserver.KeptEventBytes(f.srv)
	require.Positive(t, one)
	budget := 2*one + one/2 // two runs of slow-drip, not three
	mcpserver.SetSessionBounds(f.srv, budget, 3)
	for range 2 {
		ids = append(ids, run())
		require.LessOrEqual(t, mcpserver.KeptEventBytes(f.srv), budget, "a session's finished runs keep at most its budget of events")
	}

	events := func(id string) (string, gjson.Result) {
		t.Helper()
		res := f.call(t, "run_events", map[string]any{"run_id": id}, nil)
		require.False(t, res.IsError, harnesstest.MCPText(res))
		return harnesstest.MCPText(res), harnesstest.MCPStructured(t, res)
	}
	text, p := events(ids[0])
	require.True(t, p.Get("events_dropped").Bool(), text)
	require.Empty(t, p.Get("events").Array())
	require.Positive(t, p.Get("last_seq").Int())
	require.Equal(t, p.Get("last_seq").Int(), p.Get("dropped").Int(), "every event of the run is gone")
	require.Equal(t, p.Get("last_seq").Int(), p.Get("next_after_seq").Int(), "none will come")
	require.False(t, p.Get("more").Bool())
	require.Contains(t, text, "no longer kept")
	st := f.call(t, "run_status", map[string]any{"run_id": ids[0]}, nil)
	require.False(t, st.IsError, harnesstest.MCPText(st))
	require.Equal(t, "success", harnesstest.MCPStructured(t, st).Get("state").String(), "the run keeps its summary")
	require.True(t, harnesstest.MCPStructured(t, st).Get("events_dropped").Bool())
	require.Contains(t, harnesstest.MCPText(st), "no longer kept")
	for _, id := range ids[1:] {
		text, p := events(id)
		require.False(t, p.Get("events_dropped").Bool(), text)
		require.Zero(t, p.Get("dropped").Int(), "the newest runs keep their events")
		require.NotEmpty(t, p.Get("events").Array())
	}

	ids = append(ids, run()) // a fourth: the first is forgotten
	require.LessOrEqual(t, mcpserver.KeptEventBytes(f.srv), budget)
	st = f.call(t, "run_status", map[string]any{"run_id": ids[0]}, nil)
	require.True(t, st.IsError, "a session remembers its 3 most recent finished runs")
	require.Contains(t, harnesstest.MCPText(st), "unknown run_id")
	require.Contains(t, harnesstest.MCPText(st), "at most its 3 most recent finished ones")
	st = f.call(t, "run_status", map[string]any{"run_id": ids[1]}, nil)
	require.False(t, st.IsError, harnesstest.MCPText(st))
	require.True(t, harnesstest.MCPStructured(t, st).Get("events_dropped").Bool())
}
