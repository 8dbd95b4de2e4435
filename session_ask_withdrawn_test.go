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

// TestClaudeLiveWithdrawnAskIdle: a permission request the CLI withdrew
// (control_cancel_request) waits for nobody: the idle watchdog runs
// again, and a CLI silent after it is stopped at the idle budget, not
// held until the ask deadline.
func TestClaudeLiveWithdrawnAskIdle(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command(fakeagent.ClaudeStream)
	rec, b := &liveRec{}, small()
	b.Idle, b.Hard = 1500*time.Millisecond, 10*time.Second
	b.Tool = func(event.Kind) time.Duration { return time.Second } // the Bash call asked for stays open
	var st harness.Settings
	s, err := st.StartSession(context.Background(), harness.Task{
		Agent: "claude", Protocol: harness.ProtocolStreamJSON, Binary: argv[0], Permissions: harness.Ask,
		BaseEnv: append(env, fakeagent.ClaudeStreamMode+"=ask-withdraw"), Cwd: t.TempDir(), Budgets: &b,
	}, harness.SessionOptions{Options: rec.options(), AskDeadline: time.Hour})
	require.NoError(t, err)
	require.NoError(t, s.Send("one"))
	rec.waitFor(t, event.TypePermissionRequest, 1)
	res, err := s.Wait()
	require.ErrorIs(t, err, harness.ErrIdleTimeout)
	checkLive(t, rec)
	require.Equal(t, event.ResultTimeout, res.Status)
	require.False(t, s.Answer("call-1", true), "a withdrawn request has no answer")
}
