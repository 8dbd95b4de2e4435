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
	"github.com/agentharness/harness/config"
)

// TestReportRedactsConfigEnv: the report redacted a run's detail, its
// check's output and its trajectory's prompt with the task's Env only,
// not with what harness.toml's [agents.X].env adds as the run starts,
// though the session log beside them is redacted of it: a key given
// only in the configuration showed in report.json.
func TestReportRedactsConfigEnv(t *testing.T) {
	const secret = "config-secret-value-0123456789"
	script := filepath.Join(t.TempDir(), "claude")
	require.NoError(t, os.WriteFile(script, []byte(`#!/bin/sh
echo '{"type":"system","subtype":"init","cwd":"/tmp","session_id":"s1","tools":[],"model":"m"}'
echo '{"type":"result","subtype":"error_during_execution","is_error":true,"result":"API Error: 401 invalid x-api-key '"$MY_SERVICE_VALUE"'","session_id":"s1","num_turns":1,"duration_ms":1,"usage":{"input_tokens":1,"output_tokens":1}}'
exit 1
`), 0o755))
	cfg := config.Defaults()
	cfg.Agents["claude"] = config.AgentConfig{Env: map[string]string{"MY_SERVICE_VALUE": secret}}
	plan := bench.Plan{Tasks: []bench.Task{{Prompt: "use " + secret, Tree: source(t, false), Check: "printf 'checked %s%s\\n' config-secret-value- 0123456789"}},
		Agents: []string{"claude"}}
	rep, err := bench.Run(context.Background(), plan, bench.Options{Dir: t.TempDir(),
		Settings: &harness.Settings{Config: &cfg, LogDir: t.TempDir()},
		Setup: func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
			tk.Binary, tk.Budgets = script, small()
			return tk, harness.Observer{}, nil
		}})
	require.NoError(t, err)
	r := rep.Runs[0]
	require.Contains(t, r.Detail, "API Error: 401", "%+v", r)
	require.NotNil(t, r.Check, "%+v", r)
	require.Contains(t, r.Check.Output, "checked", "%+v", r)
	require.NotEmpty(t, r.Trajectory, "%+v", r)
	log, err := os.ReadFile(r.Log)
	require.NoError(t, err)
	require.NotContains(t, string(log), secret, "the log redacts it")
	out, err := json.Marshal(rep)
	require.NoError(t, err)
	require.NotContains(t, string(out), secret, "the report")
	traj, err := os.ReadFile(r.Trajectory)
	require.NoError(t, err)
	require.NotContains(t, string(traj), secret, "the trajectory")
}
