package bench_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/isolate"
)

// A check the bench's cancel interrupted gives no verdict: under every
// engine its run is not recorded in --results, so the next bench runs it
// again (before, it was recorded as finished and resumed forever; under
// podman a cancel while tests/ was copied in was a verifier_error).
func TestCancelledCheckRunsAgain(t *testing.T) {
	harbor, err := bench.LoadTasks(filepath.Join(harborSuite, "create-file"))
	require.NoError(t, err)
	own := bench.Plan{Tasks: []bench.Task{{Name: "one", Prompt: "write"}}, Agents: []string{"claude"}, Check: "test -f out.txt"}
	for _, c := range []struct {
		name, engine string
		plan         bench.Plan
	}{
		{"check", "", own},
		{"harbor-none", isolate.None, bench.Plan{Tasks: harbor, Agents: []string{"oracle"}}},
		{"harbor-podman", isolate.Podman, bench.Plan{Tasks: harbor, Agents: []string{"oracle"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			results, runs := filepath.Join(t.TempDir(), "results"), t.TempDir()
			t.Cleanup(func() { require.Empty(t, harnesstest.ContainersUnder(t, runs), "containers left behind") })
			c.plan.Isolate = c.engine
			opts := bench.Options{Dir: runs, Results: results, Setup: fakes(writers)}
			if c.plan.Tasks[0].Harbor != nil {
				opts.Setup = nil
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			cancelling := opts
			var done *bench.Progress
			cancelling.Progress = func(p bench.Progress) {
				switch p.State {
				case bench.StateChecking:
					cancel() // the check starts with the bench cancelled
				case bench.StateDone:
					done = &p
				}
			}
			rep, err := bench.Run(ctx, c.plan, cancelling)
			require.NoError(t, err)
			require.True(t, rep.Cancelled)
			r := rep.Runs[0]
			require.Equal(t, "success", r.Status, r.Error)
			require.NotNil(t, r.Check)
			require.Equal(t, "cancelled", r.Check.Error, "%+v", r.Check)
			require.Empty(t, r.Check.Outcome, "no verdict: %s", r.Check.Detail)
			require.Zero(t, rep.Groups[0].Checked)
			require.NotNil(t, done)
			require.Nil(t, done.Passed, "the progress says no verdict, not \"check failed\"")
			rows, _ := filepath.Glob(filepath.Join(results, "runs", "*.json"))
			require.Empty(t, rows, "a run whose check was cancelled is not recorded")

			rep, err = bench.Run(t.Context(), c.plan, opts)
			require.NoError(t, err)
			r = rep.Runs[0]
			require.False(t, r.Resumed, "run again")
			require.NotNil(t, r.Check, r.Error)
			require.True(t, r.Check.Passed, "%+v", r.Check)
		})
	}
}

// A bench cancelled after a run's agent ended on its own but before its
// check started gives that run no verdict either: it is not recorded
// (before, its row had no check at all, and every resume kept it so).
func TestCancelBeforeCheckRunsAgain(t *testing.T) {
	results := filepath.Join(t.TempDir(), "results")
	plan := bench.Plan{Tasks: []bench.Task{{Name: "one", Prompt: "write"}}, Agents: []string{"claude"}, Check: "test -f out.txt"}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	setup := fakes(writers)
	rep, err := bench.Run(ctx, plan, bench.Options{Results: results, Setup: func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
		tk, obs, err := setup(s, tk)
		obs.Close = func(*event.Result) { cancel() } // the agent is over: cancel before the check
		return tk, obs, err
	}})
	require.NoError(t, err)
	require.True(t, rep.Cancelled)
	r := rep.Runs[0]
	require.Equal(t, "success", r.Status, r.Error)
	require.NotNil(t, r.Check, "the check the cancel kept from running")
	require.Equal(t, "cancelled", r.Check.Error)
	require.Equal(t, "test -f out.txt", r.Check.Command)
	rows, _ := filepath.Glob(filepath.Join(results, "runs", "*.json"))
	require.Empty(t, rows)

	rep, err = bench.Run(t.Context(), plan, bench.Options{Results: results, Setup: setup})
	require.NoError(t, err)
	require.False(t, rep.Runs[0].Resumed)
	require.True(t, rep.Runs[0].Check.Passed)
}

// A row an older bench recorded with a cancelled check is no verdict
// either: a merge of its directory lists the run missing.
func TestMergeCountsCancelledCheckMissing(t *testing.T) {
	dir := t.TempDir()
	_, err := bench.Run(t.Context(), resumePlan(), bench.Options{Results: dir, Setup: fakes(writers)})
	require.NoError(t, err)
	row := filepath.Join(dir, "runs", "000001.json")
	data, err := os.ReadFile(row)
	require.NoError(t, err)
	var rec map[string]any
	require.NoError(t, json.Unmarshal(data, &rec))
	rec["run"].(map[string]any)["check"] = map[string]any{"command": "test -f out.txt", "passed": false, "exit_code": -1, "error": "cancelled"}
	data, err = json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(row, data, 0o600))
	m, err := bench.Merge([]string{dir})
	require.NoError(t, err)
	require.Len(t, m.Missing, 1)
	require.Equal(t, 1, m.Missing[0].Index)
}

// A verifier or check that leaves a process in the background still
// gives its verdict (before: "exec: WaitDelay expired before I/O
// complete", no verdict, under --isolate none), and what it left is
// ended with it.
func TestCheckLeavingABackgroundProcess(t *testing.T) {
	t.Run("check", func(t *testing.T) {
		plan := bench.Plan{Tasks: []bench.Task{{Name: "one", Prompt: "write"}}, Agents: []string{"claude"},
			Check: "sleep 3141 & test -f out.txt"}
		rep, err := bench.Run(t.Context(), plan, bench.Options{Dir: t.TempDir(), Setup: fakes(writers)})
		require.NoError(t, err)
		c := rep.Runs[0].Check
		require.NotNil(t, c)
		require.Empty(t, c.Error)
		require.Zero(t, c.ExitCode)
		require.True(t, c.Passed, "%+v", c)
		require.Equal(t, 1, rep.Groups[0].Checked)
		requireGone(t, "sleep 3141")
	})
	t.Run("harbor-verifier", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "task")
		copyDir(t, filepath.Join(harborSuite, "create-file"), dir)
		test, err := os.ReadFile(filepath.Join(dir, "tests", "test.sh"))
		require.NoError(t, err)
		require.NoError(t, execfile.Write(filepath.Join(dir, "tests", "test.sh"), append([]byte("sleep 3142 &\n"), test...), 0o755))
		rep := runHarbor(t, dir, isolate.None, "oracle")
		c := rep.Runs[0].Check
		require.NotNil(t, c, rep.Runs[0].Error)
		require.Empty(t, c.Error)
		require.Equal(t, bench.OutcomeReward, c.Outcome)
		require.True(t, c.Passed, "%+v", c)
		requireGone(t, "sleep 3142")
	})
}

// requireGone fails unless no process runs cmdline, once the SIGKILL its
// group was sent has landed.
func requireGone(t *testing.T, cmdline string) {
	t.Helper()
	require.Eventually(t, func() bool { return len(harnesstest.ProcsNamed(cmdline)) == 0 }, 5*time.Second, 10*time.Millisecond,
		"%s outlived the check that started it", cmdline)
}

// TestCheckOutputIsRedacted: the report keeps a check's output, and serve
// shows it to any local reader: the secrets the session log would not
// hold are redacted from it too (token shapes, the run's --env values),
// though the check runs in harness's own environment.
func TestCheckOutputIsRedacted(t *testing.T) {
	const token, value = "sk-ant-api03-CHECKCHECKCHECKCHECK0123", "hunter2-env-value"
	setup := func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
		tk, obs, err := fakes(writers)(s, tk)
		tk.Env = append(tk.Env, "BENCH_PASSWORD="+value)
		return tk, obs, err
	}
	plan := bench.Plan{Tasks: []bench.Task{{Name: "one", Prompt: "write"}}, Agents: []string{"claude"},
		Check: "echo key " + token + " pw " + value + "; false"}
	rep, err := bench.Run(t.Context(), plan, bench.Options{Dir: t.TempDir(), Setup: setup})
	require.NoError(t, err)
	c := rep.Runs[0].Check
	require.NotNil(t, c)
	require.False(t, c.Passed)
	require.Equal(t, "key [REDACTED] pw [REDACTED]\n", c.Output)
}
