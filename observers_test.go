package harness_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// TestTelemetryObserverPerRun: Settings.Telemetry's observer watches its
// own run, and is closed once, when two runs share one Options whose
// Observers has room to spare: appended in place, the second run's
// observer took the first's place, got both runs' events and was closed
// twice (and the race detector saw it).
func TestTelemetryObserverPerRun(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]map[string]int{} // a run's observer → the runs of the events it got
	closed := map[string]int{}
	s := &harness.Settings{Telemetry: func(_ context.Context, ri harness.RunInfo) (harness.Observer, []string) {
		me := ri.Run
		return harness.Observer{
			OnEvent: func(ev event.Event) {
				mu.Lock()
				defer mu.Unlock()
				if seen[me] == nil {
					seen[me] = map[string]int{}
				}
				seen[me][ev.Run]++
			},
			Close: func(*event.Result) { mu.Lock(); closed[me]++; mu.Unlock() },
		}, nil
	}}
	argv, env := fakeagent.Command("slow-drip", "5ms", "100ms")
	b := small()
	task := harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env, Prompt: "go", Cwd: t.TempDir(), Budgets: &b}
	o := harness.Options{Observers: make([]harness.Observer, 0, 4)}
	a, err := s.Start(context.Background(), task, o)
	require.NoError(t, err)
	c, err := s.Start(context.Background(), task, o)
	require.NoError(t, err)
	_, _ = a.Wait()
	_, _ = c.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, r := range []*harness.Run{a, c} {
		require.Len(t, seen[r.RunID()], 1, "the observer of %s saw another run's events", r.RunID())
		require.Positive(t, seen[r.RunID()][r.RunID()])
		require.Equal(t, 1, closed[r.RunID()], "closed once")
	}
}

// TestCannotAskClosesObservers: a session that cannot ask (an agent whose
// ACP adapter has no permission requests) closes the observers with nil,
// as Start does for any task that cannot run; it returned first.
func TestCannotAskClosesObservers(t *testing.T) {
	t.Parallel()
	closes := 0
	o := harness.SessionOptions{Options: harness.Options{Observers: []harness.Observer{{Close: func(r *event.Result) {
		require.Nil(t, r)
		closes++
	}}}}}
	_, err := (&harness.Settings{}).StartSession(context.Background(),
		harness.Task{Agent: "opencode", Permissions: harness.Ask, Cwd: t.TempDir()}, o)
	var ca *harness.CannotAskError
	require.ErrorAs(t, err, &ca)
	require.Equal(t, 1, closes)
}
