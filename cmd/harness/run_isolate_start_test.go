package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/execfile"
)

// neverReadyPodman puts first on PATH a podman whose run never says its
// container started (a pull, a wedged engine): it writes its pid to
// pidFile and waits for its stdin's end. It returns the new PATH.
func neverReadyPodman(t *testing.T, pidFile string) string {
	t.Helper()
	bin := t.TempDir()
	require.NoError(t, execfile.Write(filepath.Join(bin, "podman"), []byte(`#!/bin/sh
case "$1" in
run) echo $$ >`+pidFile+`; exec cat ;;
container) exit 1 ;;
esac
exit 0
`), 0o755))
	path := bin + ":" + os.Getenv("PATH")
	t.Setenv("PATH", path)
	return path
}

// harness run --isolate podman whose container never says it started
// ends after the run's hard timeout, exit 124 and one line, before its
// budgets start. Before, it waited for ever.
func TestRunIsolateStartBounded(t *testing.T) {
	home := isolate(t)
	neverReadyPodman(t, filepath.Join(home, "run.pid"))
	done := make(chan result, 1)
	go func() {
		done <- invoke(t, "", "run", "--agent", "nop", "-p", "x", "--no-log", "--isolate", "podman", "--image", "img",
			"--timeout", "200ms")
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Minute): // a watchdog: the bound here is 200 ms
		t.Fatal("harness run still waits for a container that never started")
	}
	require.Equal(t, exitTimeout, r.code, r.stderr)
	require.Contains(t, r.stderr, "run: isolate podman run img: not started within 200ms (the run's hard timeout)")
	require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "one line: %s", r.stderr)
}

// SIGINT while the container starts ends harness run with exit 130 and
// removes what it started: the engine's client is gone. Before, harness
// died of the signal and left the client to itself.
func TestRunIsolateStartInterrupted(t *testing.T) {
	home := isolate(t)
	pidFile := filepath.Join(home, "run.pid")
	path := neverReadyPodman(t, pidFile)
	cmd, _, errb := harnessProc(t, []string{"PATH=" + path}, "run", "--agent", "nop", "-p", "x", "--no-log",
		"--isolate", "podman", "--image", "img")
	var client int
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(pidFile)
		client, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return client > 0
	}, time.Minute, 10*time.Millisecond, "the engine's client never started: %s", errb)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	require.Equal(t, exitInterrupted, cmd.ProcessState.ExitCode(), "%v: %s", err, errb)
	require.Contains(t, errb.String(), "run: isolate podman run img: interrupt signal received")
	require.ErrorIs(t, syscall.Kill(client, 0), syscall.ESRCH, "the engine's client outlived harness")
}
