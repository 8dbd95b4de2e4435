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
	stopTimeout, clientGrace = 10*time.Second, 50*time.Millisecond
	t.Cleanup(func() { stopTimeout, clientGrace = time.Minute, 5*time.Second })
	e := &Engine{Name: Podman, Bin: fake}
	r, err := e.Start(t.Context(), Container{Name: "harness-test-group", Image: "img"}, os.Environ())
	require.NoError(t, err)
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	helper, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	t.Cleanup(func() {
		if alive(helper) {
			syscall.Kill(helper, syscall.SIGKILL)
		}
	})
	require.NoError(t, r.Stop())
	require.Eventually(t, func() bool { return !alive(helper) }, 10*time.Second, 10*time.Millisecond,
		"the helper the wedged client started outlived Stop")
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
