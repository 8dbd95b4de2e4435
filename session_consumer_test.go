package harness_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/process"
)

// TestSessionConsumerHoldsUpNoStop: a consumer that takes no event (its
// OnEvent blocked, as a stdout nobody reads blocks harness session)
// holds up the events, never an interrupt or the turn timeout: the agent
// is stopped all the same, as one that ignored the request to end its
// turn (the request goes over the session, which the blocked callback
// holds). Before, Interrupt and the turn timeout waited for the consumer.
func TestSessionConsumerHoldsUpNoStop(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		mode        string
		turnTimeout time.Duration
		interrupt   bool
		errIs       error
	}{
		"interrupt":    {mode: "hang", interrupt: true, errIs: harness.ErrInterrupted},
		"turn-timeout": {mode: "deaf", turnTimeout: 300 * time.Millisecond, errIs: harness.ErrTurnTimeout},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			argv, env := fakeagent.Command(fakeagent.ClaudeStream)
			b := small()
			b.Linger = 10 * time.Second
			b.Idle, b.IdleWarning, b.Hard = 0, 0, 0 // only the stop asked ends it
			release, blocked := make(chan struct{}), make(chan struct{})
			var pid atomic.Int64
			so := harness.SessionOptions{TurnTimeout: c.turnTimeout}
			so.OnEvent = func(ev event.Event) {
				switch v := ev.Body.(type) {
				case *event.SessionStart:
					pid.Store(int64(v.PID))
				case *event.Message:
					close(blocked)
					<-release
				}
			}
			var st harness.Settings
			s, err := st.StartSession(context.Background(), harness.Task{Agent: "claude", Protocol: harness.ProtocolStreamJSON,
				Binary: argv[0], BaseEnv: append(env, fakeagent.ClaudeStreamMode+"="+c.mode), Cwd: t.TempDir(), Budgets: &b}, so)
			require.NoError(t, err)
			require.NoError(t, s.Send("one"))
			<-blocked
			require.NotZero(t, pid.Load())
			if c.interrupt {
				go s.Interrupt()
			}
			deadline := time.Now().Add(20 * time.Second)
			for process.Alive(int(pid.Load())) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond) // polling a condition, not sleeping for it
			}
			require.False(t, process.Alive(int(pid.Load())), "the agent outlived the stop while the consumer was blocked")
			close(release)
			_, err = s.Wait()
			require.ErrorIs(t, err, c.errIs)
		})
	}
}
