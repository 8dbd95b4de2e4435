package bench

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/config"
)

// What the caller hands the agent (Env, SetupEnv, the configuration's
// env table for its agent) is named whatever the name; another agent's
// table is not.
func TestGivenEnv(t *testing.T) {
	s := &harness.Settings{Config: &config.Config{Agents: map[string]config.AgentConfig{
		"gemini": {Env: map[string]string{"GOOGLE_CLOUD_PROJECT": "p"}},
		"claude": {Env: map[string]string{"OTHER": "o"}},
	}}}
	task := harness.Task{Agent: "gemini", Env: []string{"GOOGLE_API_KEY=k", "GOPATH=/g"},
		SetupEnv: []string{"GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:1", "HOME=/h"}}
	require.Equal(t, map[string]bool{"GOOGLE_API_KEY": true, "GOPATH": true, "GOOGLE_GEMINI_BASE_URL": true,
		"HOME": true, "GOOGLE_CLOUD_PROJECT": true}, givenEnv(task, s))
	require.Equal(t, map[string]bool{"GOOGLE_API_KEY": true}, givenEnv(harness.Task{Env: []string{"GOOGLE_API_KEY=k"}}, nil))
}
