package harness_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/logger"
)

// TestLiveAskHoldsIdle: while a permission request waits for the caller,
// the session waits on the caller, not on the agent: neither the idle
// budget nor the budget of the call asked for ends it (the ask deadline
// bounds that wait), and the agent's silence counts again from the
// answer, or from the denial at the deadline. The idle watchdog ended
// the session while the caller was still within its deadline.
func TestLiveAskHoldsIdle(t *testing.T) {
	t.Parallel()
	b := small()
	b.Idle, b.IdleWarning = 300*time.Millisecond, 100*time.Millisecond
	b.Tool = func(event.Kind) time.Duration { return 400 * time.Millisecond }
	t.Run("answered", func(t *testing.T) {
		t.Parallel()
		// The fake reports the edit (an open call: its budget holds the
		// idle watchdog off until 400 ms) and then asks for it.
		s, rec, dir := sendOne(t, "normal", harness.Ask, b, harness.SessionOptions{AskDeadline: time.Minute}, event.TypePermissionRequest)
		// The caller's pace is what is tested: it answers after five idle
		// budgets, well past the call's.
		<-time.After(5 * b.Idle)
		req := rec.find(event.TypePermissionRequest)[0].(*event.PermissionRequest)
		require.True(t, s.Answer(req.CallID, true), "the request is still waiting: %s", rec.stream())
		end := rec.waitFor(t, event.TypeTurnEnd, 1).(*event.TurnEnd)
		require.Equal(t, event.ResultSuccess, end.Status)
		closeLive(t, s, rec)
		_, err := os.Stat(filepath.Join(dir, fakeagent.ACPFile))
		require.NoError(t, err, "allowed: the call ran")
		for _, w := range rec.find(event.TypeWarning) {
			require.NotEqual(t, event.WarnIdle, w.(*event.Warning).Code, "an idle warning while the caller was asked")
			require.NotEqual(t, event.WarnToolStalled, w.(*event.Warning).Code, "a tool_stalled warning while the caller was asked")
		}
	})
	t.Run("denied-at-deadline", func(t *testing.T) {
		t.Parallel()
		const deadline = time.Second
		s, rec := startScript(t, acpScript, script{Turns: [][]step{steps(t, `[{"ask":"c1"},{"hang":true}]`)}},
			harness.Ask, b, harness.SessionOptions{AskDeadline: deadline})
		require.NoError(t, s.Send("one"))
		_, err := s.Wait() // the agent, denied, goes silent: the idle watchdog ends it
		require.ErrorIs(t, err, harness.ErrIdleTimeout)
		checkLive(t, rec)
		reqs := rec.find(event.TypePermissionRequest)
		require.Len(t, reqs, 1, "%s", rec.stream())
		req := reqs[0]
		var idle event.Body
		for _, e := range rec.find(event.TypeError) {
			if e.(*event.Error).Code == event.ErrIdleTimeout {
				idle = e
			}
		}
		require.NotNil(t, idle)
		waited := time.Duration(rec.ts(t, idle)-rec.ts(t, req)) * time.Millisecond
		require.GreaterOrEqual(t, waited, deadline+b.Idle-time.Millisecond, "the idle timeout came %s after the request", waited)
	})
}

// turnError is the one error event of the session's stream, which must
// be an agent_error that is not fatal.
func turnError(t *testing.T, rec *liveRec) *event.Error {
	t.Helper()
	errs := rec.find(event.TypeError)
	require.Len(t, errs, 1, "%s", rec.stream())
	e := errs[0].(*event.Error)
	require.Equal(t, event.ErrAgentError, e.Code)
	require.False(t, e.Fatal, "the turn's error: the session goes on")
	return e
}

// TestLiveTurnGivenUp: a turn the agent ends cancelled though nobody
// asked it to (codex-acp after a permission it was refused; Codex's
// turn/completed interrupted) failed: turn_end error after an agent_error
// that says so, not fatal, and the session goes on. It was a turn_end
// cancelled with no error, where a one-prompt run fails with that error.
func TestLiveTurnGivenUp(t *testing.T) {
	t.Parallel()
	t.Run("acp", func(t *testing.T) {
		t.Parallel()
		s, rec, _ := startLive(t, "give-up", "", small(), harness.SessionOptions{})
		sendTwo(t, s)
		closeLive(t, s, rec)
		ends := rec.find(event.TypeTurnEnd)
		require.Len(t, ends, 2)
		for _, b := range ends {
			require.Equal(t, event.ResultError, b.(*event.TurnEnd).Status)
		}
		require.Len(t, rec.find(event.TypeError), 2)
		for _, b := range rec.find(event.TypeError) {
			e := b.(*event.Error)
			require.Equal(t, event.ErrAgentError, e.Code)
			require.False(t, e.Fatal)
			require.Contains(t, e.Message, "did not ask")
		}
	})
	t.Run("app-server", func(t *testing.T) {
		t.Parallel()
		s, rec := startScript(t, appServerScript, script{Turns: [][]step{
			steps(t, `[{"message":"Partial."},{"end":"interrupted"}]`),
			steps(t, `[{"message":"Done."},{"end":"completed"}]`),
		}}, "", small(), harness.SessionOptions{})
		sendTwo(t, s)
		res := closeLive(t, s, rec)
		ends := rec.find(event.TypeTurnEnd)
		require.Len(t, ends, 2)
		first := ends[0].(*event.TurnEnd)
		require.Equal(t, event.ResultError, first.Status)
		require.Equal(t, "Partial.", first.Text, "its answer, by the rules of a run's (whose result has it)")
		require.Equal(t, event.ResultSuccess, ends[1].(*event.TurnEnd).Status)
		require.Equal(t, "Done.", res.Text)
		require.Contains(t, turnError(t, rec).Message, "did not ask")
	})
}

// TestLiveTurnInterruptedEndsCancelled: a turn the caller interrupted
// ends cancelled, with no answer, also when the agent finishes it
// (end_turn) as the cancel reaches it, as a run so interrupted ends
// cancelled; its usage counts. It ended success, with the answer.
func TestLiveTurnInterruptedEndsCancelled(t *testing.T) {
	t.Parallel()
	s, rec := startScript(t, acpScript, script{Turns: [][]step{
		steps(t, `[{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"partial answer"}}},
			{"waitcancel":true},
			{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":" finished anyway"}}},
			{"end":"end_turn","usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15}}]`),
		steps(t, `[{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"two"}}},{"end":"end_turn"}]`),
	}}, "", small(), harness.SessionOptions{})
	require.NoError(t, s.Send("one"))
	rec.waitFor(t, event.TypeTextDelta, 1)
	s.Interrupt()
	first := rec.waitFor(t, event.TypeTurnEnd, 1).(*event.TurnEnd)
	require.Equal(t, event.ResultCancelled, first.Status)
	require.False(t, first.Synthetic, "the agent ended it")
	require.Empty(t, first.Text)
	require.Equal(t, event.Usage{InputTokens: 10, OutputTokens: 5}, first.Usage)
	require.NoError(t, s.Send("two"))
	res := closeLive(t, s, rec)
	require.Equal(t, event.ResultSuccess, rec.find(event.TypeTurnEnd)[1].(*event.TurnEnd).Status)
	require.Equal(t, "two", res.Text)
	require.Empty(t, rec.find(event.TypeError))

	// Its log reparses to the same stream: the interrupted turn cancelled
	// there too, though its lines say end_turn.
	m, err := logger.Load(rec.logs, s.RunID())
	require.NoError(t, err)
	recorded := rec.stream()
	require.Equal(t, harnesstest.ReparseParts(t, recorded), harnesstest.ReparseParts(t, reparse(t, rec.logs, m, nil)))
}

// TestLiveTurnTimeoutLateAnswer: a turn over its timeout whose agent
// ignores the cancel is stopped, and what the agent says as it answers
// the signal (a last text, its end of the turn, cancelled, with the
// tokens the model spent) is the turn's: the usage counts in the turn and
// the session, and the text is inside the turn. The turn was closed
// before the agent was stopped, and its late usage was dropped.
func TestLiveTurnTimeoutLateAnswer(t *testing.T) {
	t.Parallel()
	s, rec := startScript(t, acpScript, script{
		Turns: [][]step{steps(t, `[{"update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"sleep","kind":"execute",
			"status":"in_progress","rawInput":{"command":"sleep 100"}}},{"waitcancel":true},{"hang":true}]`)},
		OnSignal: steps(t, `[{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"bye"}}},
			{"end":"cancelled","usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15}}]`),
	}, "", small(), harness.SessionOptions{TurnTimeout: 100 * time.Millisecond})
	require.NoError(t, s.Send("one"))
	res, err := s.Wait()
	require.ErrorIs(t, err, harness.ErrTurnTimeout)
	checkLive(t, rec)
	require.Equal(t, event.ResultTimeout, res.Status)
	end := rec.find(event.TypeTurnEnd)[0].(*event.TurnEnd)
	require.Equal(t, event.ResultTimeout, end.Status)
	require.Empty(t, end.Text)
	want := event.Usage{InputTokens: 10, OutputTokens: 5}
	require.Equal(t, want, end.Usage, "the tokens of the agent's late answer: %s", rec.stream())
	require.Equal(t, want.InputTokens, res.Usage.InputTokens)
	require.Equal(t, want.OutputTokens, res.Usage.OutputTokens)
	require.Less(t, rec.seq(t, rec.find(event.TypeTextDelta)[0]), rec.seq(t, end), "the late text is the turn's")
	require.Equal(t, event.StatusTimeout, rec.find(event.TypeToolEnd)[0].(*event.ToolEnd).Status)
}

// seq is the seq of the event of body b.
func (l *liveRec) seq(t *testing.T, b event.Body) int64 {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range l.evs {
		if ev.Body == b {
			return ev.Seq
		}
	}
	t.Fatalf("no such event: %#v", b)
	return 0
}
