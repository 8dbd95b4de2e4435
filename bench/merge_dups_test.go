package bench_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

// A run recorded twice is checked as the run kept is: against the plan a
// results directory names, whichever input comes first (before, only
// the first copy was checked, so a mislabelled run after the directory
// was listed as a duplicate, exit 1), and without a directory, against
// the run kept at its index.
func TestMergeChecksDuplicates(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "results")
	rep, err := bench.Run(t.Context(), resumePlan(), bench.Options{Results: dir, Setup: fakes(writers)})
	require.NoError(t, err)
	write := func(name string, r *bench.Report) string {
		t.Helper()
		data, err := json.Marshal(r)
		require.NoError(t, err)
		path := filepath.Join(base, name)
		require.NoError(t, os.WriteFile(path, data, 0o600))
		return path
	}
	good := write("good.json", rep)
	bad := *rep
	bad.Runs = append([]bench.RunReport(nil), rep.Runs...)
	bad.Runs[0].Agent = "codex" // the plan's run #1 is claude's
	mislabelled := write("bad.json", &bad)

	for name, inputs := range map[string][]string{
		"report-then-dir": {mislabelled, dir},
		"dir-then-report": {dir, mislabelled},
		"good-dir-bad":    {good, dir, mislabelled},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := bench.Merge(inputs)
			require.EqualError(t, err, "bench: merge: run #1 is not the run "+dir+"'s plan has at that index")
		})
	}
	t.Run("reports-disagree", func(t *testing.T) {
		for _, inputs := range [][]string{{good, mislabelled}, {mislabelled, good}} {
			_, err := bench.Merge(inputs)
			require.ErrorContains(t, err, "bench: merge: run #1 is recorded as two different runs (")
			require.ErrorContains(t, err, "): an input was not written by bench for this plan")
		}
	})
	t.Run("same-runs-twice", func(t *testing.T) {
		for _, inputs := range [][]string{{good, good}, {dir, good}, {good, dir}} {
			m, err := bench.Merge(inputs)
			require.NoError(t, err)
			require.Len(t, m.Duplicates, 4, "the same runs twice are duplicates, as before")
			require.Empty(t, m.Missing)
		}
	})
}

// A report's permissions and turn limit are checked, not believed, as
// its other counts are: a merged report holds none bench does not make.
func TestMergeRefusesCraftedPermissions(t *testing.T) {
	for name, tweak := range map[string]func(*bench.Report){
		"permissions": func(r *bench.Report) { r.Permissions = "yolo" },
		"max-turns":   func(r *bench.Report) { r.MaxTurns = -3 },
	} {
		t.Run(name, func(t *testing.T) {
			r := craftedReport(2, run(0))
			tweak(r)
			_, err := bench.Merge([]string{writeJSONFile(t, r)})
			require.ErrorContains(t, err, ": not a plan bench makes")
		})
	}
}
