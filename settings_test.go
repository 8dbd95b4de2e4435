package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// TestSettingsStart: Settings.Start is the one assembly of a configured
// run: the configuration's agent, env and budgets fill what the task
// leaves unset, harness's secrets never reach the agent, the session log
// is written (with the configured values redacted) and every observer is
// closed once with the result.
func TestSettingsStart(t *testing.T) {
	argv, env := fakeagent.Command("echo-env")
	cfg := config.Defaults()
	cfg.Agent = "claude-code" // an alias: the library resolves it
	cfg.Linger, cfg.KillGrace = config.Duration(100*time.Millisecond), config.Duration(100*time.Millisecond)
	cfg.Agents = map[string]config.AgentConfig{"claude": {Env: map[string]string{
		fakeagent.EchoVars: "CFG_VAR,HARNESS_MCP_TOKEN", "CFG_VAR": "from-config-4d2f",
	}}}
	logDir := t.TempDir()
	s := &harness.Settings{Config: &cfg, Environ: append(env, "HARNESS_MCP_TOKEN=secret-0123456789"), LogDir: logDir}
	require.Equal(t, 100*time.Millisecond, s.Budgets().Linger)

	var text strings.Builder
	var closed []*event.Result
	run, err := s.Start(context.Background(), harness.Task{Prompt: "x", Binary: argv[0], Cwd: t.TempDir()}, harness.Options{
		OnEvent: func(ev event.Event) {
			if m, ok := ev.Body.(*event.Message); ok {
				text.WriteString(m.Text)
			}
		},
		Observers: []harness.Observer{{Close: func(res *event.Result) { closed = append(closed, res) }}},
	})
	require.NoError(t, err)
	res, err := run.Wait()
	require.NoError(t, err)
	require.Equal(t, event.ResultSuccess, res.Status)
	require.Contains(t, text.String(), "CFG_VAR=from-config-4d2f")
	require.Contains(t, text.String(), "HARNESS_MCP_TOKEN unset")
	require.Equal(t, []*event.Result{res}, closed)

	path, err := run.SessionLog()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(path, logDir+string(filepath.Separator)), "the log is in LogDir: %s", path)
	log, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(log), `"type":"result"`)
	require.NotContains(t, string(log), "from-config-4d2f", "config env values are redacted")
}

// TestSettingsStartBadTask: a task that cannot run is a *TaskError, and
// the observers are still closed (with nil), so what they hold is freed.
func TestSettingsStartBadTask(t *testing.T) {
	closed := 0
	_, err := (&harness.Settings{}).Start(context.Background(), harness.Task{Agent: "nope", Prompt: "x"},
		harness.Options{Observers: []harness.Observer{{Close: func(res *event.Result) {
			require.Nil(t, res)
			closed++
		}}}})
	var te *harness.TaskError
	require.ErrorAs(t, err, &te)
	require.Equal(t, 1, closed)
}
