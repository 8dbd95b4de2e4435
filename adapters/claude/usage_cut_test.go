package claude

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// TestUsageOfCallCut: a model call the output ended in (message_start,
// and no message_stop: the agent was stopped by a watchdog or a kill, or
// died) is counted at Flush as its counts stood: message_start's input
// and cache, final there, and the output of its last message_delta (none:
// 0). The model read that input; the stream had no usage for it at all.
// A call the result came after is the result's, and counted once.
func TestUsageOfCallCut(t *testing.T) {
	t.Parallel()
	sum := func(bodies []event.Body) event.Usage {
		var u event.Usage
		for _, b := range only[*event.Usage](bodies) {
			u.Add(*b)
		}
		return u
	}
	for _, c := range []struct {
		name  string
		lines []string
		want  event.Usage
	}{
		{"started", []string{msgStart, textStart, delta1},
			event.Usage{InputTokens: 10, CacheReadTokens: 100, CacheWriteTokens: 5}},
		{"its-delta-came", []string{msgStart, textStart, delta1, textStop, msgDelta},
			event.Usage{InputTokens: 10, OutputTokens: 30, CacheReadTokens: 100, CacheWriteTokens: 5}},
		{"stopped-without-delta", []string{msgStart, textStart, delta1, textStop, msgStop},
			event.Usage{InputTokens: 10, CacheReadTokens: 100, CacheWriteTokens: 5}},
		{"result-after-it", []string{msgStart, textStart, delta1, textStop, msgStop,
			`{"type":"result","subtype":"success","is_error":false,"result":"Hello","usage":{"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":5,"output_tokens":30}}`},
			event.Usage{InputTokens: 10, OutputTokens: 30, CacheReadTokens: 100, CacheWriteTokens: 5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, tokens(sum(adaptertest.Bodies(newParser(), c.lines...))))
		})
	}
}
