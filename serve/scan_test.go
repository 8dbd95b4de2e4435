package serve

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
