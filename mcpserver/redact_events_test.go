package mcpserver_test

import (
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

// TestRunEventsRedacted: run_events read a run's events redacted from
// its session log, but without session logs (--no-log) it answered the
// events the server kept in memory as the agent wrote them: a key given
// in the configuration's [agents.claude].env, echoed by the agent, went
// into the client's context (often another agent's model).
func TestRunEventsRedacted(t *testing.T) {
	t.Parallel()
	const secret = "config-secret-value-0123456789"
	script := filepath.Join(t.TempDir(), "claude")
	require.NoError(t, os.WriteFile(script, []byte(`#!/bin/sh
echo '{"type":"system","subtype":"init","cwd":"/tmp","session_id":"s1","tools":[],"model":"m"}'
echo '{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"the key is '"$MY_SERVICE_VALUE"'"}],"usage":{"input_tokens":1,"output_tokens":1}},"session_id":"s1"}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s1","num_turns":1,"duration_ms":1,"usage":{"input_tokens":1,"output_tokens":1}}'
`), 0o755))
	for _, tc := range []struct {
		name string
		logs bool
	}{{"session-log", true}, {"no-log", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := config.Defaults()
			cfg.Agents["claude"] = config.AgentConfig{Env: map[string]string{"MY_SERVICE_VALUE": secret}}
			f := newFixture(t, func(o *mcpserver.Options) {
				o.Settings.Config = &cfg
				if !tc.logs {
					o.Settings.LogDir = ""
				}
				o.Setup = func(tk *harness.Task) (harness.Observer, error) {
					tk.Binary = script
					tk.Budgets.Linger, tk.Budgets.KillGrace = 100*time.Millisecond, 100*time.Millisecond
					return harness.Observer{}, nil
				}
			})
			res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "p"}, nil)
			require.False(t, res.IsError, harnesstest.MCPText(res))
			s := harnesstest.MCPStructured(t, res)
			require.Equal(t, tc.logs, s.Get("summary.session_log").String() != "", s.Raw)
			res = f.call(t, "run_events", map[string]any{"run_id": s.Get("run_id").String()}, nil)
			require.False(t, res.IsError, harnesstest.MCPText(res))
			p := harnesstest.MCPStructured(t, res)
			msg := p.Get(`events.#(type=="message")`)
			require.True(t, msg.Exists(), p.Raw)
			require.Equal(t, "the key is [REDACTED]", msg.Get("text").String(), "as the session log has it")
			require.NotContains(t, p.Raw, secret)
			require.NotContains(t, harnesstest.MCPText(res), secret)
		})
	}
}
