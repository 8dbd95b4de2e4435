package atif_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/atif"
	"github.com/agentharness/harness/logger"
)

// TestLoadForgedMeta: a meta whose "run" names a file outside the store
// does not make Load read that file, nor WriteLog write beside it: the
// trajectory is of the run its files name. Load read the events of the
// meta's "run" ("../outside"), and WriteLog wrote ../outside.trajectory.json.
func TestLoadForgedMeta(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sessions")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	outside := filepath.Join(root, "outside")
	golden, err := os.ReadFile("../testdata/opencode/multi_step_reasoning.golden.ndjson")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(outside+logger.ExtEvents, golden, 0o600))
	const run = "run_forged"
	require.NoError(t, os.WriteFile(logger.Path(dir, run, logger.ExtMeta), []byte(`{"run":"../outside","agent":"opencode","status":"success"}`), 0o600))
	require.NoError(t, os.WriteFile(logger.Path(dir, run, logger.ExtEvents), nil, 0o600))

	tr, err := atif.Load(dir, run, "")
	require.NoError(t, err)
	require.Equal(t, run, tr.TrajectoryID)
	require.Len(t, tr.Steps, 1, "the run's own (empty) log, not the outside one")
	require.Equal(t, "system", tr.Steps[0].Source, "the note of a stream with no step")

	path, err := atif.WriteLog(dir, run, "")
	require.NoError(t, err)
	require.Equal(t, logger.Path(dir, run, logger.ExtTrajectory), path)
	_, err = os.Stat(outside + logger.ExtTrajectory)
	require.ErrorIs(t, err, fs.ErrNotExist)
}
