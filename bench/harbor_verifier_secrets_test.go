package bench_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
)

// TestHarborVerifierGetsNoHostSecrets: a task's tests/test.sh, run on the
// host (none) or in bwrap, inherited harness's whole environment: the
// MCP token that starts full-access runs and every agent's API key,
// which a container's verifier (given the task's names only) never sees.
// It now gets neither; a key the task's [verifier.env] names it still
// gets, as in a container.
func TestHarborVerifierGetsNoHostSecrets(t *testing.T) {
	t.Setenv("HARNESS_MCP_TOKEN", "mcp-token-of-harness-0123456789")
	t.Setenv("ANTHROPIC_API_KEY", "not-a-real-anthropic-key-0123")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Basic%20not-a-real-one")
	t.Setenv("HARNESS_TEST_JUDGE_KEY", "judge-key-the-task-names-0123")
	for _, engine := range []string{"none", "bwrap"} {
		t.Run(engine, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "task")
			copyDir(t, filepath.Join(harborSuite, "create-file"), dir)
			appendTo := func(name, text string) {
				f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = f.WriteString(text)
				require.NoError(t, err)
				require.NoError(t, f.Close())
			}
			appendTo("task.toml", "\n[verifier.env]\nHARNESS_TEST_JUDGE_KEY = \"${HARNESS_TEST_JUDGE_KEY}\"\n")
			appendTo("tests/test.sh", "\n"+
				`for v in HARNESS_MCP_TOKEN ANTHROPIC_API_KEY OTEL_EXPORTER_OTLP_HEADERS HARNESS_TEST_JUDGE_KEY; do`+"\n"+
				`  if printenv "$v" >/dev/null; then echo "verifier has $v"; fi`+"\n"+
				"done\n")
			tasks, err := bench.LoadTasks(dir)
			require.NoError(t, err)
			rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"oracle"}, Isolate: engine},
				bench.Options{Settings: &harness.Settings{LogDir: t.TempDir()}})
			require.NoError(t, err)
			r := rep.Runs[0]
			require.NotNil(t, r.Check, r.Error)
			require.True(t, r.Check.Passed, r.Check.Output)
			require.Contains(t, r.Check.Output, "verifier has HARNESS_TEST_JUDGE_KEY", "a key the task names is given")
			for _, v := range []string{"HARNESS_MCP_TOKEN", "ANTHROPIC_API_KEY", "OTEL_EXPORTER_OTLP_HEADERS"} {
				require.NotContains(t, r.Check.Output, "verifier has "+v+"\n")
			}
		})
	}
}
