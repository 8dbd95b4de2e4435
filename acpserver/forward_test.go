package acpserver

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestAnswerUsageCountsTokens: the answer's usage is the run's tokens, and
// a run that reported a cost and no token has none (it said 0 tokens next
// to the cost); the cost is in _meta.harness.
func TestAnswerUsageCountsTokens(t *testing.T) {
	cost := 0.25
	resp := (&forwarder{}).response(&event.Result{Status: event.ResultSuccess, Usage: event.Usage{CostUSD: cost}, CostUSD: &cost})
	require.Nil(t, resp.Usage)
	require.Equal(t, 0.25, resp.Meta["harness"].(map[string]any)["cost_usd"])

	resp = (&forwarder{}).response(&event.Result{Status: event.ResultSuccess, Usage: event.Usage{OutputTokens: 5, CostUSD: cost}, CostUSD: &cost})
	require.NotNil(t, resp.Usage)
	require.Equal(t, 5, resp.Usage.OutputTokens)
	require.Equal(t, 5, resp.Usage.TotalTokens)
}
