package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestACPGlobalModelIsNoRequest: the configuration's global model is every
// agent's default, so OpenCode over ACP (which takes no model there) runs
// without it; a model its own [agents.opencode] table, the flag, or the
// configuration's protocol names is refused as the flag is.
func TestACPGlobalModelIsNoRequest(t *testing.T) {
	dryRun := func(toml string, args ...string) result {
		isolateWith(t, toml)
		return invoke(t, "", append([]string{"run", "-a", "opencode", "--binary", "/bin/true", "-p", "hi", "--dry-run"}, args...)...)
	}
	r := dryRun("model = \"sonnet\"\n", "--protocol", "acp")
	require.Equal(t, 0, r.code, r.stderr)
	var d struct{ Argv []string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
	require.Equal(t, []string{"/bin/true", "acp"}, d.Argv)

	r = dryRun("model = \"sonnet\"\n[agents.opencode]\nprotocol = \"acp\"\n")
	require.Equal(t, 0, r.code, "the protocol from the configuration: %s", r.stderr)

	r = dryRun("model = \"sonnet\"\n")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
	require.Contains(t, d.Argv, "-m", "over its CLI OpenCode takes the global model")

	r = dryRun("[agents.opencode]\nmodel = \"sonnet\"\n", "--protocol", "acp")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "opencode: no --model over ACP")

	r = dryRun("", "--protocol", "acp", "-m", "sonnet")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "opencode: no --model over ACP")
}
