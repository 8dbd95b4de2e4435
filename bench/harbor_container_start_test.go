package bench_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/isolate"
)

// A run's container that never says it started (a podman run blocked
// before its first process: a storage lock, a wedged engine) ends the
// run's setup after [environment].build_timeout_sec, as Harbor bounds
// its environment's start, and the bench goes on. Before, the run
// waited for it until the bench was interrupted.
func TestHarborContainerStartBounded(t *testing.T) {
	bin := t.TempDir()
	require.NoError(t, execfile.Write(filepath.Join(bin, "podman"), []byte(`#!/bin/sh
case "$1" in
run) exec cat ;; # never says ready; ends at its stdin's end
container) exit 1 ;;
esac
exit 0
`), 0o755))
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	task := filepath.Join(t.TempDir(), "create-file")
	copyDir(t, filepath.Join(harborSuite, "create-file"), task)
	toml, err := os.ReadFile(filepath.Join(task, "task.toml"))
	require.NoError(t, err)
	toml = []byte(strings.Replace(string(toml), "build_timeout_sec = 600.0", "build_timeout_sec = 0.2", 1))
	require.NoError(t, os.WriteFile(filepath.Join(task, "task.toml"), toml, 0o644))
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
	case <-time.After(30 * time.Second): // a watchdog: the bound here is 0.2 s
		t.Fatal("the run still waits for a container that never started")
	}
	require.NoError(t, r.err)
	run := r.rep.Runs[0]
	require.Equal(t, bench.ReasonSetup, run.Reason, run.Error)
	require.Contains(t, run.Error, "not started within [environment].build_timeout_sec (200ms)")
}
