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
	// 30 s is a watchdog: the bound here is 0.2 s.
	run := runOracleInPodman(t, strings.NewReplacer("build_timeout_sec = 600.0", "build_timeout_sec = 0.2"),
		30*time.Second, "a container that never started")
	require.Equal(t, bench.ReasonSetup, run.Reason, run.Error)
	require.Contains(t, run.Error, "not started within [environment].build_timeout_sec (200ms)")
}
