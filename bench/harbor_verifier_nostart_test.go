package bench_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/isolate"
)

// TestHarborVerifierThatCannotStartFails: under --isolate none the agent
// works in the run's workspace on the host, and may remove it. The
// verifier, which runs in WORKDIR, then cannot start: that is a
// verifier_error, a failed check that the pass rate counts (docs/bench.md:
// every outcome but reward is a failed check). Before, the check had an
// error and no outcome, was counted as no verdict at all, and an agent
// that removed its workspace dropped out of its group's pass rate.
func TestHarborVerifierThatCannotStartFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "task")
	copyDir(t, filepath.Join(harborSuite, "create-file"), dir)
	require.NoError(t, execfile.Write(filepath.Join(dir, "solution", "solve.sh"),
		[]byte("#!/bin/bash\ncd /\nrm -rf /app\n"), 0o755))
	rep := runHarbor(t, dir, isolate.None, "oracle")
	c := rep.Runs[0].Check
	require.NotNil(t, c, rep.Runs[0].Error)
	require.Equal(t, bench.OutcomeVerifierError, c.Outcome, "%+v", c)
	require.NotEmpty(t, c.Detail)
	require.False(t, c.Passed)
	g := rep.Groups[0]
	require.Equal(t, 1, g.Checked, "a verifier that could not start is a failed check")
	require.Zero(t, g.Passed)
}
