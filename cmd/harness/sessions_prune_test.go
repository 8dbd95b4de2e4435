package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/logger"
)

// TestSessionsPruneKeepsARunningRun: 'sessions prune --older-than 1s'
// removed the logs of a run 3 s in, by its start, while its harness wrote
// them. A run whose harness is alive (here: this process) is kept,
// however long ago it started; one whose harness died goes by its last
// write.
func TestSessionsPruneKeepsARunningRun(t *testing.T) {
	home := isolate(t)
	dir := filepath.Join(home, "store", "sessions")
	started := time.Now().Add(-time.Hour)
	live, err := logger.Open(dir, "run_live", logger.Meta{Agent: "claude", Start: started})
	require.NoError(t, err)
	defer live.Close(logger.Meta{Status: "success"})
	require.NoError(t, live.WriteEvent([]byte(`{"v":1,"type":"session_start","run":"run_live","seq":1,"ts":1}`)))
	require.NoError(t, live.Flush())
	me, err := logger.Load(dir, "run_live")
	require.NoError(t, err)
	require.NotNil(t, me.Harness, "this test needs /proc")

	lost, err := logger.Open(dir, "run_lost", logger.Meta{Agent: "claude", Start: started,
		Harness: &logger.Process{PID: 1 << 30, Start: me.Harness.Start, NS: me.Harness.NS}})
	require.NoError(t, err)
	defer lost.Close(logger.Meta{})
	for _, ext := range []string{logger.ExtEvents, logger.ExtNative, logger.ExtMeta} {
		require.NoError(t, os.Chtimes(logger.Path(dir, "run_lost", ext), started, started))
	}

	r := invoke(t, "", "sessions", "--dir", dir, "prune", "--older-than", "1s")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, "removed 1 run(s)\n", r.stdout)
	for _, ext := range []string{logger.ExtEvents, logger.ExtNative, logger.ExtMeta} {
		_, err := os.Stat(logger.Path(dir, "run_live", ext))
		require.NoError(t, err, "the running run's %s", ext)
		_, err = os.Stat(logger.Path(dir, "run_lost", ext))
		require.ErrorIs(t, err, os.ErrNotExist, "the lost run's %s", ext)
	}
}
