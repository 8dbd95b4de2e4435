package harness_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// startAppServer starts a live session of the fake codex app-server in
// mode, as --protocol app-server runs the real one.
func startAppServer(t *testing.T, mode string) (*harness.Session, *liveRec) {
	t.Helper()
	b := small()
	return startFakeLive(t, harness.Task{Agent: "codex", Protocol: harness.ProtocolAppServer, Budgets: &b},
		fakeagent.CodexAppServer, fakeagent.AppServerMode+"="+mode)
}

// TestAppServerSession: two prompts over Codex's app-server are two turns
// of one process, each with the usage its thread total grew by; the
// session ends cleanly at Close.
func TestAppServerSession(t *testing.T) {
	t.Parallel()
	s, rec := startAppServer(t, "normal")
	sendTwo(t, s)
	res := closeLive(t, s, rec)
	ends := rec.find(event.TypeTurnEnd)
	require.Len(t, ends, 2)
	for _, b := range ends {
		e := b.(*event.TurnEnd)
		require.Equal(t, event.ResultSuccess, e.Status)
		require.Equal(t, "Done.", e.Text)
	}
	require.Equal(t, event.Usage{InputTokens: 10, OutputTokens: 5}, ends[0].(*event.TurnEnd).Usage)
	require.Equal(t, event.Usage{InputTokens: 10, OutputTokens: 5}, ends[1].(*event.TurnEnd).Usage, "the second turn: the total's growth, 20 less 10")
	require.Equal(t, int64(20), res.Usage.InputTokens)
	require.Equal(t, "thread-1", res.SessionID)
}

// TestAppServerAgentDiesMidTurn: codex exits during a turn; the turn is
// closed (error, synthetic, no half answer), the session fails, and no
// process is left.
func TestAppServerAgentDiesMidTurn(t *testing.T) {
	t.Parallel()
	s, rec := startAppServer(t, "die-mid-turn")
	sendTwo(t, s)
	res := requireDiedInTurnTwo(t, s, rec)
	require.Equal(t, int64(10), res.Usage.InputTokens, "the first turn's usage only")
	require.ErrorIs(t, s.Send("three"), harness.ErrSessionOver)
}

// TestAppServerLateNotification: an item of the first turn that Codex
// completes after that turn's end, when the second turn/start is sent
// but not answered, is not the second turn's: that turn gets its own
// message, usage and end (it was taken for the late turn's, and the
// session died of idleness).
func TestAppServerLateNotification(t *testing.T) {
	t.Parallel()
	s, rec := startAppServer(t, "late")
	sendTwo(t, s)
	rec.waitFor(t, event.TypeTurnEnd, 2)
	closeLive(t, s, rec)
	ends := rec.find(event.TypeTurnEnd)
	for _, b := range ends {
		require.Equal(t, event.ResultSuccess, b.(*event.TurnEnd).Status)
		require.Equal(t, "Done.", b.(*event.TurnEnd).Text)
	}
	require.Equal(t, event.Usage{InputTokens: 10, OutputTokens: 5}, ends[1].(*event.TurnEnd).Usage)
	require.Empty(t, rec.find(event.TypeToolStart), "the late command is no turn's")
}
