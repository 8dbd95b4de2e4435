package harness_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
)

// TestParseTimesToolsFromTheCapture: harness parse reports a tool's
// duration from the capture's own timestamps, not from how fast the
// capture is read, and the result's duration from the agent's.
func TestParseTimesToolsFromTheCapture(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/claude/edits.jsonl")
	require.NoError(t, err)
	defer f.Close()
	got := map[string]int64{}
	res, err := harness.Parse(context.Background(), f, "claude", func(ev event.Event) {
		if te, ok := ev.Body.(*event.ToolEnd); ok {
			got[te.CallID] = te.DurationMS
		}
	}, harness.ParseOptions{})
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"toolu_mock000002": 57, "toolu_mock000003": 70, "toolu_mock000005": 23,
		"toolu_mock000006": 40, "toolu_mock000008": 17}, got)
	require.Equal(t, int64(389), res.DurationMS)
}
