package bench_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/isolate"
)

// TestHarborBwrapHidesTheBenchsOwn: under bwrap neither the agent nor
// the verifier reads the bench's own files, wherever they lie: its
// --results (the earlier runs' rows and copies of their session logs and
// trajectories), the session logs, the events' file (every run's stream),
// the stored reports and the report's file. Before, a second repeat's
// agent found the first's answer in all of the first three. They lie
// under /var/tmp here, which the sandbox's own /tmp and HOME do not hide.
func TestHarborBwrapHidesTheBenchsOwn(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "harness-bwrap-own-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	task := filepath.Join(base, "suite", "peek")
	res, logs, events, report := filepath.Join(base, "res"), filepath.Join(base, "sessions"),
		filepath.Join(base, "events.ndjson"), filepath.Join(base, "report.json")
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "data"))
	store := bench.StoreDir()
	require.NoError(t, os.MkdirAll(store, 0o755))
	const marker = "THE_ANSWER_IS_42" // what the solution prints, as 6*7
	for _, old := range []string{filepath.Join(store, "earlier.json"), report} {
		require.NoError(t, os.WriteFile(old, []byte(marker+"\n"), 0o600)) // an earlier bench's
	}
	copyDir(t, filepath.Join(harborSuite, "create-file"), task)
	peek := `found=$(grep -rl "THE_ANSWER_IS_$((6*7))" ` + base + ` 2>/dev/null)`
	require.NoError(t, os.WriteFile(filepath.Join(task, "solution", "solve.sh"), []byte(`#!/bin/bash
echo "THE_ANSWER_IS_$((6*7))"
`+peek+`
echo "$found" > /app/peek.txt
echo 'Hello, world!' > /app/hello.txt
`), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(task, "tests", "test.sh"), []byte(`#!/bin/bash
`+peek+`
echo "verifier found: [$found]"
echo 1 > /logs/verifier/reward.txt
`), 0o755))
	tasks, err := bench.LoadTasks(task)
	require.NoError(t, err)
	ev, err := os.OpenFile(events, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	require.NoError(t, err)
	defer ev.Close()
	rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"oracle"}, Repeat: 2, Isolate: isolate.Bwrap}, bench.Options{
		Dir: filepath.Join(base, "runs"), Keep: true, Parallel: 1, Results: res,
		Settings: &harness.Settings{LogDir: logs}, Hide: []string{events, report},
		Setup: func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
			return tk, harness.Observer{OnLine: func(line []byte) { ev.Write(line) }}, nil
		},
	})
	require.NoError(t, err)
	require.Len(t, rep.Runs, 2)
	for _, r := range rep.Runs {
		seen, err := os.ReadFile(filepath.Join(r.Tree, "peek.txt"))
		require.NoError(t, err)
		require.Equal(t, "\n", string(seen), "repeat %d found the answer", r.Repeat)
		require.NotNil(t, r.Check, r.Error)
		require.True(t, r.Check.Passed, r.Check.Output)
		require.Contains(t, r.Check.Output, "verifier found: []")
	}
	// The answer is there on the host, where the second repeat looked.
	out, _ := exec.Command("grep", "-rl", marker, base).Output()
	for _, p := range []string{res + "/logs/000000.ndjson", res + "/logs/000000.trajectory.json", logs + "/", events, report, store} {
		require.Contains(t, string(out), p)
	}
	require.False(t, strings.Contains(string(out), filepath.Join(base, "suite")), "the task holds no answer: %s", out)
}

// TestHarborBwrapNoCapabilities: under bwrap neither the agent nor the
// verifier (the same sandbox) has a capability when harness runs as
// root. Before, both had all of root's (CapEff 000001fffeffffff): the
// agent remounted the host's /var (a read-only bind of the sandbox's
// root) writable and changed a host file, mounted a tmpfs, and
// unmounted the tmpfs over its hidden task directory to read the
// solution.
func TestHarborBwrapNoCapabilities(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "harness-bwrap-caps-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	task, hostFile := filepath.Join(base, "suite", "remount"), filepath.Join(base, "hostfile")
	require.NoError(t, os.WriteFile(hostFile, []byte("host\n"), 0o644))
	copyDir(t, filepath.Join(harborSuite, "create-file"), task)
	escape := strings.NewReplacer("HOSTFILE", hostFile, "BASE", base, "TASK", task).Replace(`
grep CapEff /proc/self/status
mount -o remount,bind,rw /var && echo REMOUNTED
echo changed > HOSTFILE && echo WROTE
mount -t tmpfs x BASE && echo MOUNTED
umount TASK && echo UNMOUNTED
cat TASK/solution/solve.sh > /dev/null && echo SAW-SOLUTION
`)
	require.NoError(t, execfile.Write(filepath.Join(task, "solution", "solve.sh"), []byte("#!/bin/bash\n{"+escape+"} > /app/escape.txt 2>&1\necho 'Hello, world!' > /app/hello.txt\n"), 0o755))
	require.NoError(t, execfile.Write(filepath.Join(task, "tests", "test.sh"), []byte("#!/bin/bash\n"+escape+"\necho 1 > /logs/verifier/reward.txt\n"), 0o755))
	tasks, err := bench.LoadTasks(task)
	require.NoError(t, err)
	rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"oracle"}, Isolate: isolate.Bwrap},
		bench.Options{Dir: t.TempDir(), Keep: true, Parallel: 1})
	require.NoError(t, err)
	r := rep.Runs[0]
	require.NotNil(t, r.Check, r.Error)
	require.True(t, r.Check.Passed, r.Check.Output)
	agent, err := os.ReadFile(filepath.Join(r.Tree, "escape.txt"))
	require.NoError(t, err)
	for phase, out := range map[string]string{"agent": string(agent), "verifier": r.Check.Output} {
		require.Contains(t, out, "CapEff:\t0000000000000000\n", phase)
		for _, w := range []string{"REMOUNTED", "WROTE", "MOUNTED"} {
			require.NotContains(t, out, w, phase)
		}
	}
	require.NotContains(t, string(agent), "SAW-SOLUTION", "the verifier's sandbox does not hide the task")
	b, _ := os.ReadFile(hostFile)
	require.Equal(t, "host\n", string(b), "the host's file changed")
}
