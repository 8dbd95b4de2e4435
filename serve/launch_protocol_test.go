package serve

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/config"
)

// TestRunRequestTakesConfiguredProtocol: a one-prompt run's task carries
// the configuration's [agents.NAME] protocol before AttachMock sees it,
// which gives the mock's model only where the protocol takes one: an
// agent configured over ACP that takes no model there (OpenCode) was given
// the mock's, and Start then refused it ("no --model over ACP").
func TestRunRequestTakesConfiguredProtocol(t *testing.T) {
	cfg := config.Defaults()
	cfg.Agents = map[string]config.AgentConfig{"opencode": {Protocol: harness.ProtocolACP}}
	l := Launcher{Settings: &harness.Settings{Config: &cfg}}
	task, so, err := l.task(RunRequest{Agent: "opencode", Prompt: "hi"})
	require.NoError(t, err)
	require.Nil(t, so)
	require.Equal(t, harness.ProtocolACP, task.Protocol)
	task, _, err = l.task(RunRequest{Agent: "claude", Prompt: "hi"})
	require.NoError(t, err)
	require.Empty(t, task.Protocol, "no protocol configured: the CLI's")
}
