package bench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/config"
)

// TestConfiguredEnvOneRead: givenEnv and harborAgent take the agent's
// [agents.NAME].env from one read (configuredEnv) and agree on it: a
// key task.toml writes that the configuration sets for the agent goes
// in Env (over the configuration's, redacted) and is a name givenEnv
// passes; one it does not set goes in SetupEnv. Without a configuration,
// or with only another agent's table, nothing is configured.
func TestConfiguredEnvOneRead(t *testing.T) {
	withTables := &harness.Settings{Config: &config.Config{Agents: map[string]config.AgentConfig{
		"gemini": {Env: map[string]string{"GREETING": "from-config"}},
		"claude": {Env: map[string]string{"OTHER": "from-config"}},
	}}}
	for name, c := range map[string]struct {
		settings   *harness.Settings
		overConfig []string // what goes in Env, over the configuration's
		shown      []string // what goes in SetupEnv
		given      map[string]bool
	}{
		"no-settings":      {nil, nil, []string{"GREETING=task", "OTHER=task"}, map[string]bool{"KEEP": true}},
		"no-configuration": {&harness.Settings{}, nil, []string{"GREETING=task", "OTHER=task"}, map[string]bool{"KEEP": true}},
		"agent-table": {withTables, []string{"GREETING=task"}, []string{"OTHER=task"},
			map[string]bool{"KEEP": true, "GREETING": true}},
	} {
		t.Run(name, func(t *testing.T) {
			b := &bencher{opts: Options{Settings: c.settings}}
			r := &harborRun{h: &HarborTask{}, env: taskEnv{written: []string{"GREETING=task", "OTHER=task"}}}
			task := harness.Task{Agent: "gemini", Env: []string{"KEEP=caller"}, Budgets: &harness.Budgets{}}
			require.Equal(t, c.given, givenEnv(task, c.settings), "before harborAgent")
			b.harborAgent(&task, r, false)
			require.Equal(t, c.shown, task.SetupEnv)
			require.Equal(t, append([]string{"KEEP=caller"}, c.overConfig...), task.Env)
			for _, kv := range c.overConfig {
				k, _, _ := strings.Cut(kv, "=")
				require.True(t, givenEnv(harness.Task{Agent: "gemini"}, c.settings)[k], "%s is the configuration's in both", k)
			}
		})
	}
}
