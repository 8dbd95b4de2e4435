package conform

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCheckProcessesFindsADaemonOutsideTheWorkdir: a process of the run
// that moved its working directory out of the run's (a daemon's cd /) is
// still the run's: the processes check fails on it. Before, only a
// working directory inside the run's was looked at, and it passed.
func TestCheckProcessesFindsADaemonOutsideTheWorkdir(t *testing.T) {
	t.Parallel()
	r := &Run{Workdir: t.TempDir(), marker: newMarker()}
	st, detail := r.checkProcesses()
	require.Equal(t, Pass, st, detail)

	other := exec.Command("sleep", "300")
	other.Dir = "/"
	other.Env = append(os.Environ(), newMarker()) // another run's
	startForTest(t, other)
	st, detail = r.checkProcesses()
	require.Equal(t, Pass, st, "another run's process is not this run's: %s", detail)

	daemon := exec.Command("sleep", "300")
	daemon.Dir = "/"
	daemon.Env = append(os.Environ(), r.marker)
	startForTest(t, daemon)
	st, detail = r.checkProcesses()
	require.Equal(t, Fail, st)
	require.Contains(t, detail, "process "+strconv.Itoa(daemon.Process.Pid)+" (sleep 300) of the run is still alive")
}

// TestPlayMarksEveryProcessOfTheRun: Play gives the harness it runs the
// run's marker, which a process the run leaves behind out of the work
// directory still carries: a harness (here a script) that leaves a
// daemon in / fails the processes check.
func TestPlayMarksEveryProcessOfTheRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pids, harness := filepath.Join(dir, "pids"), filepath.Join(dir, "harness")
	script := "#!/bin/sh\nsh -c 'cd /; exec sleep 300' </dev/null >/dev/null 2>&1 &\necho $! >" + pids + "\n"
	require.NoError(t, os.WriteFile(harness, []byte(script), 0o755))
	r, err := Play(context.Background(), Config{Harness: harness, Agent: "claude", Scratch: dir}, "text")
	require.NoError(t, err)
	data, err := os.ReadFile(pids)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // the daemon this test's script started
	c := r.Check(CheckProcesses)
	require.Equal(t, Fail, c.Status, c.Detail)
	require.Contains(t, c.Detail, "process "+strconv.Itoa(pid)+" ")
}

// TestPlayGoesOnPastAnOutputHolder: a harness that exits 0 leaving a
// process of the run that holds its stdout is that run's processes
// failure, not the end of conform: Play returned the pipe's error
// ("WaitDelay expired before I/O complete"), and conform printed no
// report at all. Not parallel: it shortens outputWait.
func TestPlayGoesOnPastAnOutputHolder(t *testing.T) {
	outputWait = 100 * time.Millisecond
	t.Cleanup(func() { outputWait = 30 * time.Second })
	dir := t.TempDir()
	pids, harness := filepath.Join(dir, "pids"), filepath.Join(dir, "harness")
	script := "#!/bin/sh\nsleep 300 &\necho $! >" + pids + "\n"
	require.NoError(t, os.WriteFile(harness, []byte(script), 0o755))
	r, err := Play(context.Background(), Config{Harness: harness, Agent: "claude", Scratch: dir}, "text")
	data, rerr := os.ReadFile(pids)
	require.NoError(t, rerr)
	pid, aerr := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, aerr)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // the holder this test's script started
	require.NoError(t, err)
	require.Equal(t, 0, r.Exit)
	c := r.Check(CheckProcesses)
	require.Equal(t, Fail, c.Status, c.Detail)
	require.Contains(t, c.Detail, "process "+strconv.Itoa(pid)+" ")
}

// startForTest starts cmd (Start returns once it exec'd: its environment
// and directory are the new ones) and ends it when the test does.
func startForTest(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
}
