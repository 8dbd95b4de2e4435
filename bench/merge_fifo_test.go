package bench_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/fifotest"
	"github.com/agentharness/harness/internal/regfile"
)

// TestMergeAndCompareRefuseAFIFO: a report input of merge or compare
// that is a FIFO is refused at once, as ReadReport and a results
// directory's rows refuse one. Before, merge and compare opened it with
// os.Open, which waited for a writer: with none, forever.
func TestMergeAndCompareRefuseAFIFO(t *testing.T) {
	fifo := fifotest.Make(t, filepath.Join(t.TempDir(), "r.json"))

	_, err := bench.Merge([]string{fifo})
	require.ErrorIs(t, err, regfile.ErrNotRegular)
	require.ErrorContains(t, err, "bench: merge: "+fifo+": not a regular file (a FIFO)")

	_, err = bench.ReadCompareInput(fifo)
	require.ErrorIs(t, err, regfile.ErrNotRegular)
	require.ErrorContains(t, err, "bench: compare: "+fifo+": not a regular file (a FIFO)")
}
