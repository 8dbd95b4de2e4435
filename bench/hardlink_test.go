package bench_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/harnesstest"
)

// TestHardLinkedTaskFilesAreCopied: a task file that is a hard link to a
// host file outside the task (one inode, st_nlink 2) reaches a trial as
// a copy, never as that inode: the oracle and the verifier append to
// the workspace's file a Dockerfile COPY made of it and to their own
// /solution and /tests scripts, and a bench task's check appends to its
// tree's file, yet the host files keep their bytes and their link to
// the task. A hard link, unlike a symbolic one, cannot be told from the
// file it is, so the only safe way is what bench does: every file a
// trial may write is a new file written from the task's bytes.
func TestHardLinkedTaskFilesAreCopied(t *testing.T) {
	for _, engine := range []string{"none", "bwrap", "podman"} {
		t.Run(engine, func(t *testing.T) {
			outside := t.TempDir()
			suite := t.TempDir()
			host := map[string]string{ // host file → its text
				"data.txt": "original data\n",
				"solve.sh": "#!/bin/bash\necho oracle >> /app/data.txt\necho oracle >> /solution/solve.sh 2>/dev/null || true\n",
				"test.sh":  "#!/bin/bash\necho verifier >> /app/data.txt\necho verifier >> /tests/test.sh\necho 1 > /logs/verifier/reward.txt\n",
				"tree.txt": "original tree\n",
			}
			writeFiles(t, outside, host)
			writeFiles(t, filepath.Join(suite, "linked"), map[string]string{
				"instruction.md":         "Append to /app/data.txt.\n",
				"task.toml":              "[verifier]\ntimeout_sec = 30.0\n",
				"environment/Dockerfile": "FROM localhost/harness-base:bookworm-2\nWORKDIR /app\nCOPY data.txt /app/data.txt\n",
			})
			links := map[string]string{ // task file → host file
				"linked/environment/data.txt": "data.txt",
				"linked/solution/solve.sh":    "solve.sh",
				"linked/tests/test.sh":        "test.sh",
			}
			if engine == "none" { // only Harbor tasks run isolated
				writeFiles(t, filepath.Join(suite, "own"), map[string]string{
					"prompt.md": "Append to data.txt.\n",
					"check.sh":  "echo check >> data.txt && grep -q check data.txt\n",
				})
				links["own/tree/data.txt"] = "tree.txt"
			}
			for task, h := range links {
				p := filepath.Join(suite, filepath.FromSlash(task))
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.Link(filepath.Join(outside, h), p))
			}
			runs := t.TempDir()
			t.Cleanup(func() {
				require.Empty(t, harnesstest.ContainersUnder(t, runs), "containers left behind")
			})
			tasks, err := bench.LoadTasks(suite)
			require.NoError(t, err)
			rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"oracle", "nop"}, Isolate: engine}, bench.Options{
				Dir: runs, Settings: &harness.Settings{LogDir: t.TempDir()},
				Setup: func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
					tk.Budgets = small()
					return tk, harness.Observer{}, nil
				}})
			require.NoError(t, err)
			checked := 0
			for _, r := range rep.Runs {
				if r.Check == nil {
					continue // the oracle has no solution for a bench task
				}
				checked++
				require.True(t, r.Check.Passed, "%s %s: %s %s %s", r.Task, r.Agent, r.Error, r.Check.Detail, r.Check.Output)
			}
			want := 2 * len(tasks)
			if engine == "none" {
				want-- // the oracle's run of the bench task
			}
			require.Equal(t, want, checked, "every trial ran and wrote")
			for task, h := range links {
				p := filepath.Join(outside, h)
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				require.Equal(t, host[h], string(b), "%s (linked as %s) was written through", h, task)
				st, err := os.Stat(p)
				require.NoError(t, err)
				require.EqualValues(t, 2, st.Sys().(*syscall.Stat_t).Nlink, "%s is still the task's %s", h, task)
			}
		})
	}
}
