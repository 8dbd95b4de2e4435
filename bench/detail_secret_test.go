package bench_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
)

// TestReportDetailRedacted: a run's detail, its fatal error's message,
// was copied from the event stream into the report as the agent wrote
// it, though the report is a file, serve shows it, and the session log
// beside it has the message redacted: an agent that failed with "API
// Error: 401 … KEY" put an --env value in report.json.
func TestReportDetailRedacted(t *testing.T) {
	const secret = "given-secret-value-0123456789"
	script := filepath.Join(t.TempDir(), "claude")
	require.NoError(t, os.WriteFile(script, []byte(`#!/bin/sh
echo '{"type":"system","subtype":"init","cwd":"/tmp","session_id":"s1","tools":[],"model":"m"}'
echo '{"type":"result","subtype":"error_during_execution","is_error":true,"result":"API Error: 401 invalid x-api-key '"$MY_SERVICE_VALUE"'","session_id":"s1","num_turns":1,"duration_ms":1,"usage":{"input_tokens":1,"output_tokens":1}}'
exit 1
`), 0o755))
	plan := bench.Plan{Tasks: []bench.Task{{Prompt: "p", Tree: source(t, false)}}, Agents: []string{"claude"}}
	rep, err := bench.Run(context.Background(), plan, bench.Options{Dir: t.TempDir(),
		Settings: &harness.Settings{LogDir: t.TempDir()},
		Setup: func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
			tk.Binary, tk.Budgets = script, small()
			tk.Env = []string{"MY_SERVICE_VALUE=" + secret}
			return tk, harness.Observer{}, nil
		}})
	require.NoError(t, err)
	r := rep.Runs[0]
	require.Contains(t, r.Detail, "API Error: 401", "%+v", r)
	out, err := json.Marshal(rep)
	require.NoError(t, err)
	require.NotContains(t, string(out), secret)
	log, err := os.ReadFile(r.Log)
	require.NoError(t, err)
	require.NotContains(t, string(log), secret, "the log redacts it")
}
