package claude

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// interruptedCall is the live interrupt capture (testdata/live) with the
// first turn's call as the reviewer's scripted scenario served it: the
// model's message_start said input 700 and cache read 300, the caller
// interrupted after two text deltas, and Claude Code abandoned the call
// (its synthetic message_delta repeats the snapshot, output 1), then
// charged it: modelUsage and model_usage_since_last_result 700/2/300,
// total_cost_usd 0.00222, while its result.usage stays zero.
func interruptedCall(t *testing.T) []byte {
	t.Helper()
	native, err := os.ReadFile("testdata/live/interrupt.jsonl")
	require.NoError(t, err)
	lines := strings.Split(string(native), "\n")
	for i, l := range lines {
		switch {
		case strings.Contains(l, `"api_message_id":"msg_mock000001"`):
			l = strings.ReplaceAll(l, `"cache_read_input_tokens":0,"input_tokens":0`, `"cache_read_input_tokens":300,"input_tokens":700`)
		case strings.Contains(l, `"type":"result"`):
			l = strings.ReplaceAll(l, `"inputTokens":0,"outputTokens":4,"cacheReadInputTokens":0`, `"inputTokens":700,"outputTokens":2,"cacheReadInputTokens":300`)
			l = strings.ReplaceAll(l, `0.000059999999999999995`, `0.00222`)
		}
		lines[i] = l
	}
	out := strings.Join(lines, "\n")
	require.Equal(t, 2, strings.Count(out, `"cache_read_input_tokens":300,"input_tokens":700`), "message_start and message_delta")
	require.Equal(t, 2, strings.Count(out, `"total_cost_usd":0.00222`))
	return []byte(out)
}

// TestInterruptedCallCounts: an interrupted (abandoned) call Claude
// charged is counted: its usage event carries what message_start and the
// message_delta said, and the turn's and the session's usage hold it, so
// usage and cost agree. Claude's result.usage leaves the call out.
func TestInterruptedCallCounts(t *testing.T) {
	got, _ := liveRun(t, interruptedCall(t), false)
	adaptertest.CheckStream(t, got)
	evs, err := event.ReadAll(bytes.NewReader(got))
	require.NoError(t, err)
	call := event.Usage{InputTokens: 700, OutputTokens: 1, CacheReadTokens: 300}
	var turn1 []event.Usage
	var ends []*event.TurnEnd
	var res *event.Result
	for _, ev := range evs {
		switch b := ev.Body.(type) {
		case *event.Usage:
			if len(ends) == 0 {
				turn1 = append(turn1, *b)
			}
		case *event.TurnEnd:
			ends = append(ends, b)
		case *event.Result:
			res = b
		}
	}
	require.Equal(t, []event.Usage{call}, turn1, "one usage event for the interrupted call")
	require.Len(t, ends, 2)
	require.Equal(t, event.ResultCancelled, ends[0].Status)
	require.Equal(t, call, tokens(ends[0].Usage))
	require.NotNil(t, ends[0].CostUSD)
	require.Equal(t, 0.00222, *ends[0].CostUSD)
	require.Equal(t, event.Usage{}, tokens(ends[1].Usage))
	require.NotNil(t, res)
	require.Equal(t, call, tokens(res.Usage), "the session's usage holds the call it paid for")
	require.NotNil(t, res.CostUSD)
	require.Equal(t, 0.00222, *res.CostUSD)
}

// TestAbandonedCallInARun: a one-prompt run whose call Claude abandoned
// (the stream idle timeout of testdata/claude/abandoned-partial: message_start
// input 120, modelUsage 120/4 and a cost of 0.00042, result.usage zero)
// counts the call in result.usage, as its cost does.
func TestAbandonedCallInARun(t *testing.T) {
	t.Parallel()
	evs := normalized(t, "abandoned-partial")
	us := only[*event.Usage](evs)
	require.Len(t, us, 1)
	require.Equal(t, event.Usage{InputTokens: 120, OutputTokens: 1}, *us[0])
	r := only[*event.Result](evs)
	require.Len(t, r, 1)
	require.Equal(t, event.Usage{InputTokens: 120, OutputTokens: 1}, tokens(r[0].Usage))
	require.Equal(t, 0.00042, *r[0].CostUSD)
}
