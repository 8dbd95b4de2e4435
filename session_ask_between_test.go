package harness_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
)

// TestLiveAskBetweenTurnsIdle: an approval the agent asks with no turn in
// progress waits for no turn of the caller's: it is refused at once, and
// the next turn, in which the agent then says nothing, is stopped at the
// idle budget, not held until that request's ask deadline.
func TestLiveAskBetweenTurnsIdle(t *testing.T) {
	t.Parallel()
	sc := script{Turns: [][]step{
		steps(t, `[{"message":"one"},{"end":"completed"},
			{"raw":{"method":"item/commandExecution/requestApproval","id":0,"params":{"itemId":"call_x","turnId":"turn-1","command":"ls"}}},
			{"raw":{"method":"warning","params":{"message":"between"}}}]`),
		{}, // the second turn: nothing more is said
	}}
	b := small()
	b.Idle, b.Hard = 1500*time.Millisecond, 10*time.Second
	s, rec := startScript(t, appServerScript, sc, harness.Ask, b, harness.SessionOptions{AskDeadline: time.Hour})
	require.NoError(t, s.Send("one"))
	require.Equal(t, "between", rec.waitFor(t, event.TypeWarning, 1).(*event.Warning).Message)
	require.NoError(t, s.Send("two"))
	res, err := s.Wait()
	require.ErrorIs(t, err, harness.ErrIdleTimeout)
	checkLive(t, rec)
	require.Equal(t, event.ResultTimeout, res.Status)
	require.Empty(t, rec.find(event.TypePermissionRequest), "no turn to ask in")
}
