package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCheckEnvPathElsewhere: a check's environment may set a PATH that
// is not the host's (a Harbor task's [verifier].env PATH for its
// container, where `podman exec` passes it on); sh is still the host's,
// found in harness's own PATH, as before checks ran through process.
// Before the fix: "sh is not installed: tried /nonexistent/sh".
func TestCheckEnvPathElsewhere(t *testing.T) {
	t.Parallel()
	c := runCheckEnv(t.Context(), "echo hi", t.TempDir(), 10*time.Second, []string{"PATH=/nonexistent"})
	require.Empty(t, c.Error)
	require.True(t, c.Passed, "%+v", c)
	require.Equal(t, "hi\n", c.Output)
}

// TestCheckGetsNoHarnessSecret: a check (a plan's --check, a task's
// check.sh) inherited harness's environment whole, the MCP token with
// it: harness's secrets are for harness alone, as for an agent.
func TestCheckGetsNoHarnessSecret(t *testing.T) {
	t.Setenv("HARNESS_MCP_TOKEN", "mcp-token-of-harness-0123456789")
	c := runCheck(t.Context(), `printenv HARNESS_MCP_TOKEN || echo none`, t.TempDir(), 10*time.Second)
	require.Empty(t, c.Error)
	require.Equal(t, "none\n", c.Output)
}
