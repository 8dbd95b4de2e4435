package main

import (
	"bufio"
	"errors"
	"fmt"
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

// TestBrokenStderrEndsTheRuns: a bench whose --progress reader leaves
// (2>&1 | head) dies of SIGPIPE at its next progress line, as a filter
// does, but ends its runs first. It died at once, and a daemon one run's
// agent had started lived on.
func TestBrokenStderrEndsTheRuns(t *testing.T) {
	home := isolate(t)
	pidFile, goFile := filepath.Join(home, "daemon.pid"), filepath.Join(home, "go")
	// One agent script for two tasks: "slow" starts a daemon (its own
	// session, nothing of the run in its environment) and hangs; "quick"
	// ends once the test says so, which makes bench write a progress line.
	agent := filepath.Join(home, "agent.sh")
	require.NoError(t, os.WriteFile(agent, []byte(fmt.Sprintf(`#!/bin/sh
case "$*" in
*slow*)
	( env -i setsid sh -c 'echo $$ > %[1]s.tmp; mv %[1]s.tmp %[1]s; exec sleep 300' </dev/null >/dev/null 2>&1 & )
	exec sleep 300 ;;
*)
	while [ ! -e %[2]s ]; do sleep 0.01; done
	echo '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s"}' ;;
esac
`, pidFile, goFile)), 0o755))
	tasks := filepath.Join(home, "tasks")
	require.NoError(t, os.Mkdir(tasks, 0o755))
	for _, name := range []string{"quick", "slow"} {
		require.NoError(t, os.WriteFile(filepath.Join(tasks, name+".toml"), []byte(fmt.Sprintf("prompt = %q\n", name)), 0o644))
	}

	r, w, err := os.Pipe()
	require.NoError(t, err)
	cmd := exec.Command(harnessBinary(t), "bench", "--agents", "claude", "--binary", "claude="+agent, "--tasks", tasks,
		"--parallel", "2", "--progress", "--timeout", "5m")
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	cmd.Stderr = w
	require.NoError(t, cmd.Start())
	w.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewReader(r)
	for running := 0; running < 2; {
		l, err := lines.ReadString('\n')
		require.NoError(t, err, "bench's progress")
		if strings.Contains(l, "running") {
			running++
		}
	}
	var daemon int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		daemon, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && daemon > 0
	}, 20*time.Second, 10*time.Millisecond, "the slow run's daemon started")
	t.Cleanup(func() { _ = syscall.Kill(daemon, syscall.SIGKILL) })
	r.Close() // the reader leaves
	require.NoError(t, os.WriteFile(goFile, nil, 0o644))

	err = cmd.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "bench ended: %v", err)
	ws := exit.Sys().(syscall.WaitStatus)
	require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGPIPE, "bench died of SIGPIPE, as before: %v", err)
	require.Eventually(t, func() bool { return !alive(daemon) }, 10*time.Second, 10*time.Millisecond,
		"the daemon a run started is gone with the bench")
}

// alive reports whether pid names a process that is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}
