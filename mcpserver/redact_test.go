package mcpserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mcpserver"
)

// TestRunErrorRedacted: run_agent answered a failed run's error message,
// its stderr and stdout tails and the error's log notification as the
// agent wrote them, though the MCP client is often another agent's model
// and the session log beside them has them redacted: a key given in the
// configuration's [agents.claude].env went into the client's context.
func TestRunErrorRedacted(t *testing.T) {
	t.Parallel()
	const secret = "config-secret-value-0123456789"
	script := filepath.Join(t.TempDir(), "claude")
	require.NoError(t, os.WriteFile(script, []byte(`#!/bin/sh
echo "auth with $MY_SERVICE_VALUE refused" >&2
echo '{"type":"system","subtype":"init","cwd":"/tmp","session_id":"s1","tools":[],"model":"m"}'
echo '{"type":"result","subtype":"error_during_execution","is_error":true,"result":"API Error: 401 invalid x-api-key '"$MY_SERVICE_VALUE"'","session_id":"s1","num_turns":1,"duration_ms":1,"usage":{"input_tokens":1,"output_tokens":1}}'
exit 1
`), 0o755))
	cfg := config.Defaults()
	cfg.Agents["claude"] = config.AgentConfig{Env: map[string]string{"MY_SERVICE_VALUE": secret}}
	f := newFixture(t, func(o *mcpserver.Options) {
		o.Settings.Config = &cfg
		o.Setup = func(tk *harness.Task) (harness.Observer, error) {
			tk.Binary = script
			tk.Budgets.Linger, tk.Budgets.KillGrace = 100*time.Millisecond, 100*time.Millisecond
			return harness.Observer{}, nil
		}
	})
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "p"}, nil)
	require.True(t, res.IsError, harnesstest.MCPText(res))
	s := harnesstest.MCPStructured(t, res)
	require.Contains(t, s.Get("error.message").String(), "API Error: 401", s.Raw)
	require.Contains(t, s.Get("error.partial.stderr_tail").String(), "refused", s.Raw)
	log, err := os.ReadFile(s.Get("summary.session_log").String())
	require.NoError(t, err)
	require.NotContains(t, string(log), secret, "the log redacts it")
	require.NotContains(t, s.Raw, secret, "the structured answer")
	require.NotContains(t, harnesstest.MCPText(res), secret, "the text answer")
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, l := range f.logs {
			if l.Level == "error" {
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range f.logs {
		d, _ := json.Marshal(l.Data)
		require.NotContains(t, string(d), secret, "a log notification")
	}
}
