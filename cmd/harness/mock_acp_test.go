package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/mockmodel"
)

// --mock over ACP gives OpenCode no model: its ACP mode takes none and
// refuses one (acp.Adapter), and it reads the scripted model's from the
// config file the mock writes (OPENCODE_CONFIG). Before, the mock set
// the model whatever the protocol, and 'run -a opencode --protocol acp
// --mock edit' failed on a --model nobody gave. Its CLI mode still gets
// the model (-m), and a model the user gives over ACP is still refused.
func TestMockOpenCodeOverACPGivesNoModel(t *testing.T) {
	isolate(t)
	dry := func(args ...string) map[string]any {
		t.Helper()
		r := invoke(t, "", append([]string{"run", "-a", "opencode", "-p", "x", "--mock", "edit", "--no-log", "--dry-run"}, args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		var out map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
		return out
	}
	argv := func(out map[string]any) string {
		var s []string
		for _, a := range out["argv"].([]any) {
			s = append(s, a.(string))
		}
		return strings.Join(s, " ")
	}
	acpRun := dry("--protocol", "acp")
	require.Equal(t, "opencode acp", argv(acpRun))
	require.Contains(t, acpRun["env_keys"], "OPENCODE_CONFIG")
	require.Contains(t, argv(dry()), "-m mock/mock-model")

	r := invoke(t, "", "run", "-a", "opencode", "-p", "x", "--mock", "edit", "--no-log", "--dry-run", "--protocol", "acp", "-m", "m1")
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "opencode: no --model over ACP (")
}

// pointAt over ACP: OpenCode gets no model, and the config file the mock
// points it at names the mock's; an agent whose ACP side takes a model
// (Gemini's -m) gets the mock's as in its CLI mode.
func TestPointAtOverACP(t *testing.T) {
	isolate(t)
	m, err := mockmodel.StartMock("text", "")
	require.NoError(t, err)
	defer m.Close()

	oc := harness.Task{Agent: "opencode", Protocol: harness.ProtocolACP, Cwd: t.TempDir()}
	_, err = pointAt(m, &oc, false)
	require.NoError(t, err)
	require.Empty(t, oc.Model)
	var cfg string
	for _, kv := range oc.SetupEnv {
		if k, v, _ := strings.Cut(kv, "="); k == "OPENCODE_CONFIG" {
			cfg = v
		}
	}
	require.NotEmpty(t, cfg, oc.SetupEnv)
	b, err := os.ReadFile(cfg)
	require.NoError(t, err)
	var c struct{ Model string }
	require.NoError(t, json.Unmarshal(b, &c))
	require.Equal(t, "mock/mock-model", c.Model)

	cli := harness.Task{Agent: "opencode", Cwd: t.TempDir()}
	_, err = pointAt(m, &cli, false)
	require.NoError(t, err)
	require.Equal(t, "mock/mock-model", cli.Model)

	gem := harness.Task{Agent: "gemini", Protocol: harness.ProtocolACP, Cwd: t.TempDir()}
	_, err = pointAt(m, &gem, false)
	require.NoError(t, err)
	require.NotEmpty(t, gem.Model)
}
