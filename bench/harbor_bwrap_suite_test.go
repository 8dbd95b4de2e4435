package bench_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/isolate"
)

// TestHarborBwrapHidesOtherTasks: under bwrap the agent reads no other
// task of its suite (their tests/ and solution/ are those tasks'
// answers), whether the bench runs the whole suite or one task of it;
// nor does the verifier, which may run what the agent left (nor its own
// task's solution/). Before, only its own task's directory was hidden,
// and the verifier saw every task. The suite lies under
// /var/tmp, which the sandbox's own /tmp and HOME do not hide.
func TestHarborBwrapHidesOtherTasks(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "harness-bwrap-suite-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	suite := filepath.Join(base, "suite")
	peek, other := filepath.Join(suite, "peek"), filepath.Join(suite, "other")
	copyDir(t, filepath.Join(harborSuite, "create-file"), peek)
	copyDir(t, filepath.Join(harborSuite, "create-file"), other)
	require.NoError(t, os.WriteFile(filepath.Join(peek, "solution", "solve.sh"), []byte(`#!/bin/bash
{
  cat "$PEEK_OTHER/tests/test.sh" && echo SAW-OTHER-TESTS
  cat "$PEEK_OTHER/solution/solve.sh" && echo SAW-OTHER-SOLUTION
  cat "$PEEK_OTHER/task.toml" > /dev/null && echo SAW-OTHER-TASK
} > /app/peek.txt 2>&1
echo 'Hello, world!' > /app/hello.txt
`), 0o755))
	// The verifier looks too, at the other task and at its own task's
	// solution/ (podman's verifier has neither).
	require.NoError(t, os.WriteFile(filepath.Join(peek, "tests", "test.sh"), []byte(`#!/bin/bash
{
  cat '`+other+`/tests/test.sh' && echo SAW-OTHER-TESTS
  cat '`+other+`/solution/solve.sh' && echo SAW-OTHER-SOLUTION
  cat '`+peek+`/solution/solve.sh' > /dev/null && echo SAW-OWN-SOLUTION
} > /app/verifier-peek.txt 2>&1
if [ "$(cat /app/hello.txt 2>/dev/null)" = "Hello, world!" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
`), 0o755))
	for name, dir := range map[string]string{"suite": suite, "one-task": peek} {
		t.Run(name, func(t *testing.T) {
			tasks, err := bench.LoadTasks(dir)
			require.NoError(t, err)
			rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"oracle"}, Isolate: isolate.Bwrap}, bench.Options{
				Dir: t.TempDir(), Keep: true, Parallel: 1,
				Setup: func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
					tk.Env = append(tk.Env, "PEEK_OTHER="+other)
					return tk, harness.Observer{}, nil
				},
			})
			require.NoError(t, err)
			var r *bench.RunReport
			for i := range rep.Runs {
				if rep.Runs[i].Task == "peek" {
					r = &rep.Runs[i]
				}
			}
			require.NotNil(t, r)
			require.NotNil(t, r.Check, r.Error)
			require.True(t, r.Check.Passed, r.Check.Output)
			seen, err := os.ReadFile(filepath.Join(r.Tree, "peek.txt"))
			require.NoError(t, err)
			for _, leak := range []string{"SAW-OTHER-TESTS", "SAW-OTHER-SOLUTION", "SAW-OTHER-TASK"} {
				require.NotContains(t, string(seen), leak)
			}
			seen, err = os.ReadFile(filepath.Join(r.Tree, "verifier-peek.txt"))
			require.NoError(t, err)
			for _, leak := range []string{"SAW-OTHER-TESTS", "SAW-OTHER-SOLUTION", "SAW-OWN-SOLUTION"} {
				require.NotContains(t, string(seen), leak, "the verifier")
			}
		})
	}
}
