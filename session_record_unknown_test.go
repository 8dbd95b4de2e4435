package harness_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
)

// TestReadSessionRecordSkipsUnknownTypes: a line of an event type this
// harness does not know (a later harness's, which docs/events.md lets
// readers ignore) is no damage: the turns after it are still the record's.
func TestReadSessionRecordSkipsUnknownTypes(t *testing.T) {
	recorded, err := os.ReadFile("adapters/claude/testdata/live/two-turns.golden.ndjson")
	require.NoError(t, err)
	j := bytes.LastIndex(recorded, []byte(`{"v":1,"type":"turn_start"`))
	require.Positive(t, j)
	future := []byte(`{"v":1,"type":"future_thing","run":"run_01HARNESSTEST0000000000000","seq":1,"ts":1,"x":{}}` + "\n")
	withFuture := append(append(append([]byte{}, recorded[:j]...), future...), recorded[j:]...)
	want, err := harness.ReadSessionRecord(bytes.NewReader(recorded))
	require.NoError(t, err)
	got, err := harness.ReadSessionRecord(bytes.NewReader(withFuture))
	require.NoError(t, err)
	require.Len(t, got.Turns, 2)
	require.Equal(t, want, got)
}
