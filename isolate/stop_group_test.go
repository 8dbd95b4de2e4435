package isolate

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

// Stop ends what a wedged engine client started in its process group
// (rootless podman's re-executed self, a helper) with the client. Before,
// only the client was killed and the rest of its group lived on.
func TestStopKillsWedgedClientsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile, fake := filepath.Join(dir, "helper.pid"), filepath.Join(dir, "podman")
	// The client starts a helper in its group, says ready, and then
	// neither reads its stdin nor ends: the wedged client.
	require.NoError(t, execfile.Write(fake, []byte(`#!/bin/sh
case "$1" in
run) sleep 3601 </dev/null >/dev/null 2>&1 & echo $! >`+pidFile+`
	echo ready; exec sleep 3602 </dev/null >/dev/null 2>&1 ;;
container) exit 1 ;;
esac
`), 0o755))
	stopBounds(t, 10*time.Second, 50*time.Millisecond)
	e := &Engine{Name: Podman, Bin: fake}
	r, err := e.Start(t.Context(), Container{Name: "harness-test-group", Image: "img"}, os.Environ())
	require.NoError(t, err)
	helper := helperPID(t, pidFile)
	require.NoError(t, r.Stop())
	require.Eventually(t, func() bool { return !alive(helper) }, 10*time.Second, 10*time.Millisecond,
		"the helper the wedged client started outlived Stop")
}

// helperPID reads the pid a fake engine client wrote to file (a FIFO
// waits for it) and kills that process, if it lives, when t ends.
func helperPID(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	t.Cleanup(func() {
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return pid
}

// killListed kills, when t ends, every process whose pid a fake engine
// wrote to file, one a line: what it left hanging must not outlive t.
func killListed(t *testing.T, file string) {
	t.Cleanup(func() {
		b, _ := os.ReadFile(file)
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// stopBounds sets Stop's deadline and a wedged client's grace for t.
func stopBounds(t *testing.T, stop, grace time.Duration) {
	stopTimeout, clientGrace = stop, grace
	t.Cleanup(func() { stopTimeout, clientGrace = time.Minute, 5*time.Second })
}

// alive reports whether pid is a process that has not ended (a zombie
// has).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && len(b) > i+2 && b[i+2] != 'Z'
}
