package main

import (
	"bytes"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/process"
)

// TestConformHangupEndsTheRun: SIGHUP (the terminal closed) while a
// scenario plays ends conform as Ctrl-C does: the harness run it started
// is ended, its scratch directory removed, exit 130. Before, conform
// caught only SIGINT and SIGTERM: SIGHUP killed it at once, and the run
// played on with its directory left behind.
func TestConformHangupEndsTheRun(t *testing.T) {
	home := isolate(t)
	tmp := filepath.Join(home, "tmp")
	require.NoError(t, os.Mkdir(tmp, 0o755))
	t.Setenv("TMPDIR", tmp)
	// The signals this test sends itself must never reach the default
	// action, also before conform's handler is there.
	guard := make(chan os.Signal, 1)
	signal.Notify(guard, syscall.SIGHUP)
	defer signal.Stop(guard)
	t.Setenv(fakeagent.EnvVar, "hang-silent") // the harness conform runs (this test binary) hangs
	bin := filepath.Join(home, "claude")
	require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\necho 9.9.9\n"), 0o755))
	done := make(chan result, 1)
	go func() { done <- invoke(t, "", "conform", "--agent", "claude", "--binary", bin, "--scenario", "text") }()

	var pid int // the harness run conform started
	require.Eventually(t, func() bool { pid = runChild(); return pid != 0 }, 30*time.Second, 10*time.Millisecond, "conform started no run")
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	// The runtime folds a signal into one still pending: send until seen.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	bound := time.After(20 * time.Second)
	var r result
wait:
	for {
		select {
		case r = <-done:
			break wait
		case <-tick.C:
			require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
		case <-bound:
			t.Fatal("SIGHUP left conform playing")
		}
	}
	require.Equal(t, exitInterrupted, r.code, r.stderr)
	require.False(t, process.Alive(pid), "the run outlived conform")
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left, "conform's scratch directory is left")
}

// runChild is the pid of a child of this process that carries a conform
// run's marker (HARNESS_CONFORM_RUN) in its environment, 0 for none.
func runChild() int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		// pid (comm) state ppid …: comm may hold spaces, not ") ".
		i := bytes.LastIndex(stat, []byte(") "))
		if fields := bytes.Fields(stat[i+1:]); i < 0 || len(fields) < 2 || string(fields[1]) != strconv.Itoa(os.Getpid()) {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		if bytes.Contains(env, []byte("\x00HARNESS_CONFORM_RUN=")) || bytes.HasPrefix(env, []byte("HARNESS_CONFORM_RUN=")) {
			return pid
		}
	}
	return 0
}
