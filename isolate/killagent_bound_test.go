package isolate

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/execfile"
)

// KillAgent whose exec never ends (a wedged engine) ends within
// stopTimeout, saying so. Before, it held the run until its context
// ended: the bench's, at its interrupt.
func TestKillAgentBounded(t *testing.T) {
	dir := t.TempDir()
	pids, fake := filepath.Join(dir, "pids"), filepath.Join(dir, "podman")
	require.NoError(t, execfile.Write(fake, []byte(`#!/bin/sh
case "$1" in
run) echo ready; exec cat >/dev/null ;;
exec) echo $$ >>`+pids+`; exec sleep 3600 ;;
container) exit 1 ;;
esac
`), 0o755))
	killListed(t, pids)
	stopBounds(t, 300*time.Millisecond, 50*time.Millisecond)
	e := &Engine{Name: Podman, Bin: fake}
	r, err := e.Start(t.Context(), Container{Name: "harness-test-killagent", Image: "img"}, os.Environ())
	require.NoError(t, err)
	t.Cleanup(func() { r.Stop() })
	killed := make(chan error, 1)
	go func() { killed <- r.KillAgent(t.Context()) }()
	select {
	case err = <-killed:
	case <-time.After(time.Minute): // a watchdog: the bound here is 300 ms
		t.Fatal("KillAgent still waits for an exec that never ends")
	}
	require.EqualError(t, err, "isolate podman exec: not done within 300ms")
}
