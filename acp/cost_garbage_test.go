package acp

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestUsageUpdateGarbageCost: a usage_update cost that is negative, or
// past float64's range, counts as 0 with a usage_mismatch warning
// (docs/events.md, usage), as a negative count in the prompt's answer
// does and a garbage cost over the CLI does. A negative one was dropped
// without a word, and one past the range made the line unparsed; -0 is
// 0.
func TestUsageUpdateGarbageCost(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/claude-tool.jsonl")
	require.NoError(t, err)
	const real = `"cost":{"amount":0.001575,`
	require.Equal(t, 1, strings.Count(string(data), real))
	for _, c := range []struct {
		amount string
		warned bool
		cost   float64
	}{
		{"0.001575", false, 0.001575},
		{"0", false, 0},
		{"-0.5", true, 0},
		{"-0", false, 0},
		{"1e999", true, 0},
		{"-1e999", true, 0},
	} {
		t.Run(c.amount, func(t *testing.T) {
			t.Parallel()
			file := t.TempDir() + "/capture.jsonl"
			capture := strings.Replace(string(data), real, `"cost":{"amount":`+c.amount+`,`, 1)
			require.NoError(t, os.WriteFile(file, []byte(capture), 0o600))
			evs := normalized(t, file)
			var mismatches int
			for _, w := range bodiesOf[*event.Warning](evs) {
				if w.Code == event.WarnUsageMismatch {
					mismatches++
				}
			}
			if c.warned {
				require.Equal(t, 1, mismatches)
			} else {
				require.Zero(t, mismatches)
			}
			res := resultOf(evs)
			require.Zero(t, res.Stats.UnparsedLines)
			require.NotNil(t, res.CostUSD)
			require.Equal(t, c.cost, *res.CostUSD)
			require.False(t, math.Signbit(*res.CostUSD), "-0 is printed \"cost_usd\":-0")
		})
	}
}
