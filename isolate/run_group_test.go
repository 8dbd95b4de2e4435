package isolate

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/execfile"
)

// A cancelled engine command whose client does not end on SIGINT within
// the grace is killed with its process group: what it started there would
// outlive it. Before, only the client was killed.
func TestRunKillsStuckClientsGroup(t *testing.T) {
	dir := t.TempDir()
	fake, pidFifo := filepath.Join(dir, "podman"), filepath.Join(dir, "helper.pid")
	// The client ignores SIGINT and starts a helper in its group that
	// does too (an async command of a non-interactive sh).
	require.NoError(t, execfile.Write(fake, []byte(`#!/bin/sh
trap '' INT
sleep 3601 </dev/null >/dev/null 2>&1 &
echo $! >"$2"
exec sleep 3602 </dev/null >/dev/null 2>&1
`), 0o755))
	require.NoError(t, syscall.Mkfifo(pidFifo, 0o600))
	runGrace = 50 * time.Millisecond
	t.Cleanup(func() { runGrace = 10 * time.Second })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := Run(ctx, []string{fake, "exec", pidFifo}); done <- err }()
	helper := helperPID(t, pidFifo) // once the fake has started it
	cancel()
	require.Error(t, <-done)
	require.Eventually(t, func() bool { return !alive(helper) }, 10*time.Second, 10*time.Millisecond,
		"the helper the stuck client started outlived Run")
}
