package harness_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// TestSessionEstimateCostOneAtATime: a live session prices what its agent
// reports without a cost with Options.EstimateCost, over several turns,
// where harness reads the agent's usage (Claude's stream-json: each call's
// usage and the rest of its result's) and where the stream makes the
// turn's usage itself at the turn's end (ACP: the prompt's answer has the
// turn's usage, no usage event does). The callback keeps unlocked state:
// it is called one at a time, as every callback of Options is (go test
// -race), for the run's model, and every usage comes out estimated.
func TestSessionEstimateCostOneAtATime(t *testing.T) {
	t.Parallel()
	const turns = 4
	b := small()
	b.Linger = 10 * time.Second // the fakes exit at EOF
	claudeArgv, claudeEnv := fakeagent.Command(fakeagent.ClaudeStream)
	acpArgv, acpEnv := fakeagent.Command("acp-agent", "no-cost")
	for _, tc := range []struct {
		name  string
		task  harness.Task
		model string
	}{
		{name: "stream-json", model: "fake-model", task: harness.Task{Agent: "claude", Protocol: harness.ProtocolStreamJSON,
			Binary: claudeArgv[0], BaseEnv: append(claudeEnv, fakeagent.ClaudeStreamMode+"=")}},
		{name: "acp", model: "", task: harness.Task{Agent: "fake-acp", Protocol: harness.ProtocolACP, Command: acpArgv, BaseEnv: acpEnv}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			task := tc.task
			task.Budgets, task.Cwd = &b, t.TempDir()
			rec := &liveRec{}
			o := rec.options()
			calls, models := 0, map[string]int{} // unlocked: the callback is called one at a time
			o.EstimateCost = func(model string, u event.Usage) (float64, bool) {
				calls++
				models[model]++
				return float64(u.InputTokens+u.OutputTokens) / 1000, true
			}
			var st harness.Settings
			s, err := st.StartSession(context.Background(), task, harness.SessionOptions{Options: o})
			require.NoError(t, err)
			for i := 1; i <= turns; i++ {
				require.NoError(t, s.Send("prompt"))
				if i%2 == 0 {
					rec.waitFor(t, event.TypeTurnEnd, i) // the odd ones queue behind the turn in flight
				}
			}
			res, err := s.Close()
			require.NoError(t, err)
			require.Equal(t, event.ResultSuccess, res.Status)
			require.Len(t, rec.find(event.TypeTurnEnd), turns)
			usages := rec.find(event.TypeUsage)
			require.GreaterOrEqual(t, len(usages), turns)
			for _, u := range usages {
				u := u.(*event.Usage)
				require.True(t, u.CostEstimated, "%+v", u)
				require.InDelta(t, float64(u.InputTokens+u.OutputTokens)/1000, u.CostUSD, 1e-9)
			}
			require.Equal(t, len(usages), calls)
			require.Equal(t, map[string]int{tc.model: calls}, models)
		})
	}
}
