package bench_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/isolate"
)

// An engine command of a run that never ends (a wedged engine: podman
// with runc, "given PIDs did not die within timeout") ends at its
// phase's bound, and the run goes on with a reason saying so: the copy
// of WORKDIR out of the image by [environment].build_timeout_sec (the
// environment's start), the copy of tests/ in and an artifact's copy out
// by [verifier].timeout_sec (the copy of tests/ past it is a
// verifier_timeout, as the verifier running past it). Before, each held the run until the bench
// was interrupted.
func TestHarborEngineStepsBounded(t *testing.T) {
	for name, tc := range map[string]struct {
		hang  string // the fake engine's case that never ends
		check func(t *testing.T, run bench.RunReport)
	}{
		"seed-create": {`create) hang ;;`, func(t *testing.T, run bench.RunReport) {
			require.Equal(t, bench.ReasonSetup, run.Reason, run.Error)
			require.Contains(t, run.Error, "podman create: not done within [environment].build_timeout_sec (200ms)")
		}},
		"tests-rm": {`exec) case "$*" in *"rm -rf /tests"*) hang ;; esac ;;`, func(t *testing.T, run bench.RunReport) {
			require.NotNil(t, run.Check, run.Error)
			// As Harbor's verify(), whose upload of tests/ counts to
			// the verifier's timeout.
			require.Equal(t, bench.OutcomeVerifierTimeout, run.Check.Outcome, run.Check.Detail)
			require.True(t, run.Check.TimedOut)
			require.Equal(t, "copying tests/: podman exec: not done within [verifier].timeout_sec (200ms)", run.Check.Error)
		}},
		"artifact-cp": {`cp) case "$2" in harness-run-*) hang ;; esac ;;`, func(t *testing.T, run bench.RunReport) {
			require.Contains(t, strings.Join(run.Warnings, "\n"),
				"artifact /app/out: podman cp: not done within [verifier].timeout_sec (200ms)")
		}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			pids := filepath.Join(dir, "hung.pids")
			require.NoError(t, execfile.Write(filepath.Join(dir, "podman"), []byte(`#!/bin/sh
hang() { echo $$ >>`+pids+`; exec sleep 3600; }
case "$1" in
run) echo ready; exec cat ;;
container) exit 1 ;;
`+tc.hang+`
esac
exit 0
`), 0o755))
			t.Cleanup(func() {
				b, _ := os.ReadFile(pids)
				for _, f := range strings.Fields(string(b)) {
					if pid, err := strconv.Atoi(f); err == nil {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
			edit := strings.NewReplacer("build_timeout_sec = 600.0", "build_timeout_sec = 0.2",
				"[verifier]\ntimeout_sec = 60.0", "[verifier]\ntimeout_sec = 0.2",
				"artifacts = []", `artifacts = ["/app/out"]`)
			// 2 minutes is a watchdog: the bounds here are 200 ms.
			tc.check(t, runOracleInPodman(t, edit, 2*time.Minute, "an engine command that never ends"))
		})
	}
}

// runOracleInPodman runs the oracle on the fixture task create-file, its
// task.toml changed by edit, under --isolate podman (the podman on PATH:
// the test's fake), and returns its run. Past watchdog, the test fails:
// the run still waits for what waitsFor says.
func runOracleInPodman(t *testing.T, edit *strings.Replacer, watchdog time.Duration, waitsFor string) bench.RunReport {
	t.Helper()
	task := filepath.Join(t.TempDir(), "create-file")
	copyDir(t, filepath.Join(harborSuite, "create-file"), task)
	toml, err := os.ReadFile(filepath.Join(task, "task.toml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(task, "task.toml"), []byte(edit.Replace(string(toml))), 0o644))
	tasks, err := bench.LoadTasks(task)
	require.NoError(t, err)
	type result struct {
		rep *bench.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"oracle"}, Isolate: isolate.Podman},
			bench.Options{Dir: t.TempDir(), Parallel: 1})
		done <- result{rep, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(watchdog):
		t.Fatal("the run still waits for " + waitsFor)
	}
	require.NoError(t, r.err)
	return r.rep.Runs[0]
}
