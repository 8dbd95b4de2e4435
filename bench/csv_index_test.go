package bench_test

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// The CSV's index column is the run's index as the JSON report, a
// results directory's row names and a merge's missing list give it
// (from 0); before, it was the table's "#" (from 1) under the same name.
func TestCSVIndexIsJSONIndex(t *testing.T) {
	rep := sampleReport()
	var out bytes.Buffer
	require.NoError(t, rep.Write(&out, "csv"))
	rows, err := csv.NewReader(&out).ReadAll()
	require.NoError(t, err)
	require.Equal(t, "index", rows[0][0])
	require.Len(t, rows, 1+len(rep.Runs))
	for i, r := range rep.Runs {
		require.Equal(t, strconv.Itoa(r.Index), rows[1+i][0], "run %d", i)
	}
}
