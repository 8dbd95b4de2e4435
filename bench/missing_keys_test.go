package bench_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

// A merge of reports alone knows only the index of a run none holds: its
// missing entry says that much and no more (before, it said agent "" and
// repeat 0, which no run of a plan has).
func TestMissingRunsOfReportsKnowTheirIndexOnly(t *testing.T) {
	m, err := bench.Merge([]string{writeJSONFile(t, craftedReport(3, run(0)))})
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, m.Write(&out, "json"))
	var got struct{ Missing []map[string]any }
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	require.Equal(t, []map[string]any{{"index": 1.0}, {"index": 2.0}}, got.Missing)
}
