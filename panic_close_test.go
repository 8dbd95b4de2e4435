package harness_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// TestWaitAfterTwoPanicsAtTheEnd: a second callback that panics as the
// run ends (an observer's Close, after an OnEvent that panicked at the
// result) still leaves the run ended: every observer is closed once, the
// first panic is the one that goes up, and a later Wait returns the
// result with ErrCallbackPanic. The second panic skipped the closing of
// the observers after it and the setting of Wait's error (success, nil).
func TestWaitAfterTwoPanicsAtTheEnd(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		onResult bool   // OnEvent panics at the result
		first    string // what the first Wait panics with
	}{
		"OnEvent then Close": {onResult: true, first: "OnEvent"},
		"Close then Close":   {first: "Close 0"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			argv, env := fakeagent.Command("print-lines", "3")
			b := small()
			closes := make([]int, 3)
			var results []*event.Result
			closer := func(i int, fail bool) harness.Observer {
				return harness.Observer{Close: func(res *event.Result) {
					closes[i]++
					results = append(results, res)
					if fail {
						panic(fmt.Sprint("Close ", i))
					}
				}}
			}
			run, err := harness.Start(context.Background(), harness.Task{Agent: "claude", Prompt: "x", Binary: argv[0], BaseEnv: env,
				Cwd: t.TempDir(), Budgets: &b}, harness.Options{
				OnEvent: func(ev event.Event) {
					if tc.onResult && ev.Type == event.TypeResult {
						panic("OnEvent")
					}
				},
				Observers: []harness.Observer{closer(0, true), closer(1, true), closer(2, false)},
			})
			require.NoError(t, err)
			require.PanicsWithValue(t, tc.first, func() { _, _ = run.Wait() })
			require.Equal(t, []int{1, 1, 1}, closes, "each observer closed once")
			res, err := run.Wait()
			require.ErrorIs(t, err, harness.ErrCallbackPanic)
			require.NotNil(t, res)
			require.Equal(t, event.ResultSuccess, res.Status)
			for _, r := range results {
				require.Same(t, res, r, "closed with the run's result")
			}
		})
	}
}
