package bench_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/config"
)

// TestHarborEnvShownOrRedacted: what a task's env tables write is public
// (the task file is) and shows in the check's output, the session log and
// the trajectory, as do the paths of the run's own temporary directory; a
// value a template took from the host's environment, and the user's
// --env, stay redacted everywhere. The task's value of a key wins over
// --env's, as before.
func TestHarborEnvShownOrRedacted(t *testing.T) {
	const (
		literal  = "literal-greeting-value"
		mode     = "thorough-mode-literal"
		hostVal  = "host-value-of-a-plain-name-0123"
		userVal  = "user-given-value-0123456"
		override = "user-override-value-0123"
	)
	// Not a secret-looking name: only the template makes it one.
	t.Setenv("HARNESS_TEST_HOST_VALUE", hostVal)
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
			appendTo("task.toml", "\n[environment.env]\nGREETING = \""+literal+"\"\nHOSTED = \"${HARNESS_TEST_HOST_VALUE}\"\n"+
				"[verifier.env]\nCHECK_MODE = \""+mode+"\"\nPREFIXED = \"at-${HARNESS_TEST_HOST_VALUE}\"\n")
			appendTo("instruction.md", "Greet with "+literal+".\n")
			appendTo("solution/solve.sh", "\necho \"agent: $GREETING $HOSTED $USER_GIVEN tmp=$TMP\"\n")
			appendTo("tests/test.sh", "\necho \"verifier: $CHECK_MODE $GREETING $HOSTED $PREFIXED tmp=$TMP\"\n")
			tasks, err := bench.LoadTasks(dir)
			require.NoError(t, err)
			logs := t.TempDir()
			rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"oracle"}, Isolate: engine}, bench.Options{
				Settings: &harness.Settings{LogDir: logs},
				Setup: func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
					tk.Env = append(tk.Env, "USER_GIVEN="+userVal, "GREETING="+override)
					return tk, harness.Observer{}, nil
				},
			})
			require.NoError(t, err)
			r := rep.Runs[0]
			require.NotNil(t, r.Check, r.Error)
			require.True(t, r.Check.Passed, r.Check.Output)
			out := r.Check.Output
			require.Contains(t, out, "verifier: "+mode+" "+literal+" [REDACTED] [REDACTED] tmp=", "written values show, the host's do not")
			if engine == "none" {
				require.Contains(t, out, "tmp="+filepath.Join(os.TempDir(), "harness-benchtmp-"), "the run's own temporary directory shows")
			}
			log, err := os.ReadFile(r.Log)
			require.NoError(t, err)
			require.Contains(t, string(log), "agent: "+literal+" [REDACTED] [REDACTED] tmp=", "the task's value wins over --env's")
			traj, err := os.ReadFile(r.Trajectory)
			require.NoError(t, err)
			require.Contains(t, string(traj), "Greet with "+literal)
			for what, text := range map[string]string{"check output": out, "session log": string(log), "trajectory": string(traj)} {
				for _, secret := range []string{hostVal, userVal, override} {
					require.NotContains(t, text, secret, "%s shows %s", what, secret)
				}
				require.NotContains(t, text, "Greet with [REDACTED]", what)
				require.False(t, strings.Contains(text, "tmp=[REDACTED]"), "%s: a path of harness's own redacted", what)
			}
		})
	}
}

// TestHarborEnvOverConfig: what task.toml writes goes over the agent's
// [agents.NAME].env of the same key, as it did before written values
// moved to SetupEnv (which the configuration's env goes over): such a
// key goes in Env, and is redacted with it.
func TestHarborEnvOverConfig(t *testing.T) {
	const literal = "literal-greeting-value"
	dir := filepath.Join(t.TempDir(), "task")
	copyDir(t, filepath.Join(harborSuite, "create-file"), dir)
	f, err := os.OpenFile(filepath.Join(dir, "task.toml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("\n[environment.env]\nGREETING = \"" + literal + "\"\nOTHER = \"other-written-value\"\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	f, err = os.OpenFile(filepath.Join(dir, "solution", "solve.sh"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("\nif [ \"$GREETING\" = " + literal + " ]; then echo greeting-of-the-task; else echo greeting-of-the-config; fi\necho \"other: $OTHER\"\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	tasks, err := bench.LoadTasks(dir)
	require.NoError(t, err)
	cfg := config.Defaults()
	cfg.Agents = map[string]config.AgentConfig{"oracle": {Env: map[string]string{"GREETING": "config-greeting-value"}}}
	rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"oracle"}, Isolate: "none"}, bench.Options{
		Settings: &harness.Settings{LogDir: t.TempDir(), Config: &cfg}})
	require.NoError(t, err)
	r := rep.Runs[0]
	require.NotNil(t, r.Check, r.Error)
	log, err := os.ReadFile(r.Log)
	require.NoError(t, err)
	require.Contains(t, string(log), "greeting-of-the-task")
	require.Contains(t, string(log), "other: other-written-value", "a written value the configuration does not set shows")
	require.NotContains(t, string(log), "config-greeting-value")
}
