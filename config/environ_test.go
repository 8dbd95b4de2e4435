package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAgentEnviron(t *testing.T) {
	t.Parallel()
	in := []string{"PATH=/bin", "HARNESS_MCP_TOKEN=0123456789abcdef", "HARNESS_AGENTS_DIR=/a",
		"HARNESS_API_KEY=k", "harness_mcp_token=x", "ANTHROPIC_API_KEY=sk", "HARNESS_FAKE_AGENT=hang", "HARNESS_RUN_TOKEN_X=1"}
	require.Equal(t, []string{"PATH=/bin", "HARNESS_AGENTS_DIR=/a", "ANTHROPIC_API_KEY=sk", "HARNESS_FAKE_AGENT=hang"}, AgentEnviron(in))
	require.Nil(t, AgentEnviron(nil))
}
