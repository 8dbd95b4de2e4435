package bench_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/harnesstest"
)

// TestHarborLinksOutNotFollowed: what a sandboxed verifier or agent
// leaves are links to the host's files and directories, which it cannot
// reach itself: a reward.txt linked to a host file, /logs/artifacts/app
// linked to a host directory (where the artifact /app/real is copied),
// and artifacts that are links to a host file. harness reads and writes
// none of them for it: the secret is nowhere in the report or the kept
// artifacts, the host directory stays empty, and each refusal is said.
// Before, the reward's detail quoted the host file, the artifact was
// written into the host directory and the linked file was copied out.
func TestHarborLinksOutNotFollowed(t *testing.T) {
	secretText := "HARNESS-LINK-SECRET-" + strings.ReplaceAll(t.Name(), "/", "-")
	secret := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte(secretText+"\n"), 0o600))
	t.Setenv("HARNESS_LINK_SECRET", secret)
	for _, engine := range []string{"bwrap", "podman"} {
		t.Run(engine, func(t *testing.T) {
			victim := t.TempDir()
			t.Setenv("HARNESS_LINK_VICTIM", victim)
			tasks, err := bench.LoadTasks("testdata/harbor-links")
			require.NoError(t, err)
			runs, logs := t.TempDir(), t.TempDir()
			t.Cleanup(func() {
				require.Empty(t, harnesstest.ContainersUnder(t, runs), "containers left behind")
			})
			grace := harness.DefaultBudgets()
			grace.KillGrace = 500 * time.Millisecond
			rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"oracle"}, Isolate: engine}, bench.Options{
				Dir: runs, Parallel: 3, Settings: &harness.Settings{LogDir: logs},
				Setup: func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
					tk.Budgets = &grace
					return tk, harness.Observer{}, nil
				},
			})
			require.NoError(t, err)
			require.Len(t, rep.Runs, 3)
			byTask := map[string]bench.RunReport{}
			for _, r := range rep.Runs {
				require.NotNil(t, r.Check, "%s: %s", r.Task, r.Error)
				byTask[r.Task] = r
			}

			c := byTask["reward-link"].Check
			require.Equal(t, bench.OutcomeVerifierError, c.Outcome, c.Detail)
			require.Contains(t, c.Detail, "not followed")

			r := byTask["artifact-into-link"]
			require.True(t, r.Check.Passed, r.Check.Output)
			require.Contains(t, joinWarnings(r), "artifact /app/real: ")
			require.Contains(t, joinWarnings(r), "not followed")
			left, err := os.ReadDir(victim)
			require.NoError(t, err)
			require.Empty(t, left, "the artifact was written into the host's directory")

			r = byTask["artifact-link"]
			require.True(t, r.Check.Passed, r.Check.Output)
			require.Contains(t, joinWarnings(r), "artifact /app/link: ")
			require.NotEmpty(t, r.Artifacts)
			kept, err := os.ReadFile(filepath.Join(r.Artifacts, "app", "dir", "kept.txt"))
			require.NoError(t, err, "the directory's other files are kept")
			require.Equal(t, "kept\n", string(kept))
			agent, err := os.ReadFile(filepath.Join(r.Artifacts, "agent.txt"))
			require.NoError(t, err, "what the agent left in /logs/artifacts is kept")
			require.Equal(t, "from-the-agent\n", string(agent))

			all, err := json.Marshal(rep)
			require.NoError(t, err)
			require.NotContains(t, string(all), secretText)
			require.NoError(t, filepath.WalkDir(logs, func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return err
				}
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				require.NotContains(t, string(b), secretText, p)
				return nil
			}))
		})
	}
}
