package harness_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// cutCallLines are Claude Code lines with partial messages: an init
// naming the model, a model call that completes (its usage at its
// message_stop), then one the output ends in (no message_stop, no
// result), whose usage the parser gives only at its Flush.
var cutCallLines = []string{
	`{"type":"system","subtype":"init","cwd":"/tmp/w","session_id":"s-cut","model":"m-cut","tools":[]}`,
	`{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_a","usage":{"input_tokens":20,"cache_read_input_tokens":200,"cache_creation_input_tokens":0,"output_tokens":1}}},"parent_tool_use_id":null}`,
	`{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}},"parent_tool_use_id":null}`,
	`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Looking."}},"parent_tool_use_id":null}`,
	`{"type":"stream_event","event":{"type":"content_block_stop","index":0},"parent_tool_use_id":null}`,
	`{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}},"parent_tool_use_id":null}`,
	`{"type":"stream_event","event":{"type":"message_stop"},"parent_tool_use_id":null}`,
	`{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_b","usage":{"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":5,"output_tokens":1}}},"parent_tool_use_id":null}`,
	`{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}},"parent_tool_use_id":null}`,
	`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}},"parent_tool_use_id":null}`,
}

// cutOnly is cutCallLines without the complete call.
func cutOnly() []string { return append(cutCallLines[:1:1], cutCallLines[7:]...) }

// The two calls' usage, as docs/events.md counts them.
var (
	completeCall = event.Usage{InputTokens: 20, CacheReadTokens: 200, OutputTokens: 7}
	cutCall      = event.Usage{InputTokens: 10, CacheReadTokens: 100, CacheWriteTokens: 5}
)

const claudeCallCut = "claude-call-cut"

func init() {
	fakeagent.Register(claudeCallCut, func(args []string) int {
		lines := cutCallLines
		if len(args) > 0 && args[len(args)-1] == "cut-only" { // the prompt
			lines = cutOnly()
		}
		for _, l := range lines {
			fakeagent.Line(l)
		}
		return 1 // it died mid-call
	})
}

// cutPrice is an EstimateCost that prices every token at 1/1000 USD for
// the model the init names, and counts its calls.
func cutPrice(t *testing.T, calls *int) func(string, event.Usage) (float64, bool) {
	return func(model string, u event.Usage) (float64, bool) {
		*calls++
		if model != "m-cut" {
			t.Errorf("priced for model %q, want m-cut", model)
		}
		return cutCallPrice(u), true
	}
}

// cutCallPrice is cutPrice's price of u.
func cutCallPrice(u event.Usage) float64 {
	return float64(u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens+u.OutputTokens) / 1000
}

// TestUsageOfCallCutIsPriced: the usage of a Claude call the output ends
// in, which the parser gives at its Flush (docs/events.md: counted after
// the last line), is priced by EstimateCost as every other usage the
// agent reported without a cost, in harness parse and in a live run, so
// the run's cost holds it. It was left unpriced: a run whose only call
// was cut had no cost at all, and one with a complete call before it the
// complete call's cost only.
func TestUsageOfCallCutIsPriced(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		calls []event.Usage
	}{
		{"cut-only", []event.Usage{cutCall}},
		{"after-a-complete-call", []event.Usage{completeCall, cutCall}},
	} {
		check := func(t *testing.T, evs []event.Event, res *event.Result, priced int) {
			t.Helper()
			var usages []event.Usage
			for _, ev := range evs {
				if u, ok := ev.Body.(*event.Usage); ok {
					usages = append(usages, *u)
				}
			}
			require.Len(t, usages, len(tc.calls))
			want := 0.0
			for i, u := range usages {
				p := cutCallPrice(tc.calls[i])
				require.True(t, u.CostEstimated, "usage %d: %+v", i, u)
				require.InDelta(t, p, u.CostUSD, 1e-12, "usage %d", i)
				want += p
			}
			require.Equal(t, len(tc.calls), priced, "EstimateCost called once a usage")
			require.NotNil(t, res.CostUSD, "the run's cost")
			require.InDelta(t, want, *res.CostUSD, 1e-12)
			require.True(t, res.CostEstimated)
		}
		t.Run(tc.name+"/parse", func(t *testing.T) {
			t.Parallel()
			lines := cutCallLines
			if tc.name == "cut-only" {
				lines = cutOnly()
			}
			var evs []event.Event
			priced := 0
			res, err := harness.Parse(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"), "claude",
				func(ev event.Event) { evs = append(evs, ev) }, harness.ParseOptions{EstimateCost: cutPrice(t, &priced)})
			require.NoError(t, err)
			require.Equal(t, event.ResultError, res.Status)
			check(t, evs, res, priced)
		})
		t.Run(tc.name+"/run", func(t *testing.T) {
			t.Parallel()
			argv, env := fakeagent.Command(claudeCallCut)
			b := small()
			var evs []event.Event
			priced := 0
			run, err := harness.Start(context.Background(), harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env,
				Prompt: tc.name, Cwd: t.TempDir(), Budgets: &b}, // the prompt, its last argument, picks its stream
				harness.Options{OnEvent: func(ev event.Event) { evs = append(evs, ev) }, EstimateCost: cutPrice(t, &priced)})
			require.NoError(t, err)
			res, _ := run.Wait()
			require.NotNil(t, res)
			require.Equal(t, event.ResultError, res.Status)
			check(t, evs, res, priced)
		})
	}
}
