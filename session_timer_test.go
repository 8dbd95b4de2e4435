package harness

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// TestTurnTimerStopped: the TurnTimeout timer of a turn is stopped at
// the turn's end, and at the session's end for a turn that never ended:
// left running, it held the whole session until it fired.
func TestTurnTimerStopped(t *testing.T) {
	t.Parallel()
	for name, mode := range map[string]string{"turn end": "", "session end": "hang"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			argv, env := fakeagent.Command(fakeagent.ClaudeStream)
			b := Budgets{Idle: 5 * time.Second, Hard: 20 * time.Second, Linger: 10 * time.Second, KillGrace: 100 * time.Millisecond}
			var s *Session
			timer := make(chan *time.Timer, 1)
			ended := make(chan struct{}, 1)
			var st Settings
			s, err := st.StartSession(context.Background(), Task{Agent: "claude", Protocol: ProtocolStreamJSON, Binary: argv[0],
				BaseEnv: append(env, fakeagent.ClaudeStreamMode+"="+mode), Cwd: t.TempDir(), Budgets: &b},
				SessionOptions{TurnTimeout: time.Hour, Options: Options{OnEvent: func(ev event.Event) {
					switch ev.Type {
					case event.TypeMessage: // in the turn, the session's lock held
						select {
						case timer <- s.turnTimer:
						default:
						}
					case event.TypeTurnEnd:
						ended <- struct{}{}
					}
				}}})
			require.NoError(t, err)
			require.NoError(t, s.Send("one"))
			tm := <-timer
			require.NotNil(t, tm)
			if mode == "" {
				<-ended
				// The turn_end is sent under the session's lock, and the
				// timer stopped after it in the same hold: wait it out.
				s.mu.Lock()
				s.mu.Unlock()
				require.False(t, tm.Stop(), "the timer outlived its turn")
				_, err = s.Close()
				require.NoError(t, err)
				return
			}
			s.Stop()
			_, _ = s.Wait()
			require.False(t, tm.Stop(), "the timer outlived its session")
		})
	}
}
