package harness_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/config"
)

// TestEnvOrder: the configuration's env is a default; the run's own setup
// (SetupEnv: the scripted model's wiring, a bench task's env) goes over
// it, and the caller's Env over both. A bench task's [environment].env
// lost to an [agents.NAME].env of the same key once it moved to SetupEnv.
func TestEnvOrder(t *testing.T) {
	t.Parallel()
	cfg := config.Defaults()
	cfg.Agents = map[string]config.AgentConfig{"claude": {Env: map[string]string{"A": "config", "B": "config", "C": "config"}}}
	s := &harness.Settings{Config: &cfg}
	c, err := s.Prepare(harness.Task{Agent: "claude", Binary: "/bin/true", Prompt: "go", Cwd: t.TempDir(),
		SetupEnv: []string{"B=setup", "C=setup"}, Env: []string{"C=caller"}})
	require.NoError(t, err)
	got := map[string]string{}
	for _, kv := range c.Env {
		for i := range len(kv) {
			if kv[i] == '=' {
				got[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	require.Equal(t, "config", got["A"])
	require.Equal(t, "setup", got["B"])
	require.Equal(t, "caller", got["C"])
}
