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

// TestSessionsPruneDryRun: --dry-run names the runs prune would remove
// and removes nothing; --list names those it removed.
func TestSessionsPruneDryRun(t *testing.T) {
	home := isolate(t)
	dir := filepath.Join(home, "store", "sessions")
	old := time.Now().Add(-48 * time.Hour)
	for _, id := range []string{"run_b", "run_a", "run_new"} {
		l, err := logger.Open(dir, id, logger.Meta{Agent: "claude", Start: old})
		require.NoError(t, err)
		require.NoError(t, l.WriteEvent([]byte(`{"v":1,"type":"session_start","run":"`+id+`","seq":1,"ts":1}`)))
		end := old.Add(time.Minute)
		if id == "run_new" {
			end = time.Now()
		}
		require.NoError(t, l.Close(logger.Meta{Status: "success", End: end}))
	}
	files := func() []string {
		names, err := filepath.Glob(filepath.Join(dir, "*"))
		require.NoError(t, err)
		return names
	}
	before := files()

	r := invoke(t, "", "sessions", "--dir", dir, "prune", "--older-than", "24h", "--dry-run")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, "run_a\nrun_b\nwould remove 2 run(s)\n", r.stdout)
	require.Equal(t, before, files(), "a dry run removed files")

	r = invoke(t, "", "sessions", "--dir", dir, "prune", "--older-than", "24h", "--list")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, "run_a\nrun_b\nremoved 2 run(s)\n", r.stdout)
	_, err := logger.Load(dir, "run_new")
	require.NoError(t, err, "the newer run")
	_, err = logger.Load(dir, "run_a")
	require.Error(t, err, "run_a was kept")
}
