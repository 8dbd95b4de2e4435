package atif_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/atif"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/logger"
)

// TestLoadCutLog: a log whose last line was cut mid-write (its harness
// killed, or the run still being written) gives the trajectory of the
// lines before it, saying so; a bad line that is not the last still
// fails (TestLoadBad).
func TestLoadCutLog(t *testing.T) {
	dir := t.TempDir()
	const golden = "../testdata/opencode/multi_step_reasoning.golden.ndjson"
	run := logRun(t, dir, golden, "count the files")
	path := logger.Path(dir, run, logger.ExtEvents)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	// Cut in the middle of the result, the last line.
	cut := data[:strings.LastIndex(string(data), `"usage"`)]
	require.NoError(t, os.WriteFile(path, cut, 0o600))

	tr, err := atif.Load(dir, run, "")
	require.NoError(t, err)
	out, err := atif.Marshal(tr)
	require.NoError(t, err)
	validate(t, out)
	evs := readEvents(t, golden)
	require.NoError(t, atif.Check(tr, evs[:len(evs)-1]), "every event before the cut line")
	require.Equal(t, true, tr.Extra["log_cut"])
	require.Equal(t, "incomplete", tr.Extra["status"])
	require.Contains(t, tr.Notes, "cut")
	// No result: the final metrics are the steps' sums, cost too.
	require.NotNil(t, tr.FinalMetrics.TotalCostUSD)
	require.InDelta(t, 0.0123+0.0031+0.0024, *tr.FinalMetrics.TotalCostUSD, 1e-12)

	// A line cut just before its newline is whole: nothing is left out.
	require.NoError(t, os.WriteFile(path, data[:len(data)-1], 0o600))
	tr, err = atif.Load(dir, run, "")
	require.NoError(t, err)
	require.NoError(t, atif.Check(tr, evs))
	require.Nil(t, tr.Extra["log_cut"])
}

// TestNoSteps: a run whose stream holds no step (an agent that said
// nothing, a prompt the caller does not know whole) still has one:
// Harbor's Trajectory requires at least one step (steps min_length=1).
func TestNoSteps(t *testing.T) {
	stream := `{"v":1,"type":"session_start","run":"run_1","seq":1,"ts":1,"agent":"nop","cwd":"/w","pty":false,"argv":[]}
{"v":1,"type":"result","run":"run_1","seq":2,"ts":2,"status":"success","text":"","duration_ms":1,"usage":{},"stats":{"native_lines":1,"unparsed_lines":0,"events":2,"tool_calls":0}}
`
	full, err := event.ReadAll(strings.NewReader(stream))
	require.NoError(t, err)
	for name, evs := range map[string][]event.Event{"nothing said": full, "empty log": nil} {
		t.Run(name, func(t *testing.T) {
			data, tr := export(t, evs, atif.Meta{Run: "run_1"})
			got := validate(t, data)
			require.NoError(t, atif.Check(got, evs))
			require.Len(t, tr.Steps, 1)
			require.Equal(t, "system", tr.Steps[0].Source)
			require.Equal(t, 1, tr.FinalMetrics.TotalSteps)
		})
	}
}
