package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/atif"
	"github.com/agentharness/harness/logger"
)

// TestSessionsExportATIFStreams: export --format atif writes, a few steps
// at a time, byte for byte what the trajectory Load holds whole gives:
// here a run whose two sub-agents work at once (a pass each), with large
// tool outputs, to stdout and to -o.
func TestSessionsExportATIFStreams(t *testing.T) {
	home := isolate(t)
	dir := filepath.Join(home, "sessions")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	const run = "run_atif"
	var log strings.Builder
	seq := 0
	line := func(body string) {
		seq++
		fmt.Fprintf(&log, `{"v":1,"run":%q,"seq":%d,"ts":%d,%s}`+"\n", run, seq, 1000+seq, body)
	}
	str := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	line(`"type":"session_start","agent":"claude","cwd":"/w","pty":false,"argv":[]`)
	for _, task := range []string{"task_a", "task_b"} {
		line(`"type":"tool_start","call_id":"` + task + `","name":"Task","kind":"task","input":{}`)
	}
	out := strings.Repeat("line <a> & \"b\"\n", 10_000)
	for i := range 6 {
		parent := []string{"task_a", "task_b"}[i%2]
		id := fmt.Sprint("call_", i)
		line(`"type":"message","role":"assistant","text":` + str(fmt.Sprint("step ", i)) + `,"parent_call_id":"` + parent + `"`)
		line(`"type":"tool_start","call_id":"` + id + `","name":"Bash","kind":"shell","input":{"command":"cat"},"parent_call_id":"` + parent + `"`)
		line(`"type":"tool_end","call_id":"` + id + `","name":"Bash","kind":"shell","status":"ok","output":` + str(out))
		line(`"type":"usage","input_tokens":10,"output_tokens":1`)
	}
	for _, task := range []string{"task_a", "task_b"} {
		line(`"type":"tool_end","call_id":"` + task + `","name":"Task","kind":"task","status":"ok","output":"done"`)
	}
	line(`"type":"message","role":"assistant","text":"Done."`)
	require.NoError(t, os.WriteFile(logger.Path(dir, run, logger.ExtEvents), []byte(log.String()), 0o600))
	require.NoError(t, os.WriteFile(logger.Path(dir, run, logger.ExtMeta), []byte(`{"run":"`+run+`","agent":"claude","prompt_preview":"go"}`), 0o600))

	tr, err := atif.Load(dir, run, "")
	require.NoError(t, err)
	want, err := atif.Marshal(tr)
	require.NoError(t, err)
	require.Len(t, tr.SubagentTrajectories, 2)

	r := invoke(t, "", "sessions", "--dir", dir, "export", "--format", "atif", run)
	require.Zero(t, r.code, r.stderr)
	require.Equal(t, string(want), r.stdout)

	path := filepath.Join(home, "traj.json")
	r = invoke(t, "", "sessions", "--dir", dir, "export", "--format", "atif", "-o", path, run)
	require.Zero(t, r.code, r.stderr)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}
