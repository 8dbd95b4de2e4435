//go:build linux

package process

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestAwaitingHoldsIdle: while a live session waits for its caller the
// idle watchdog holds, however long; once a turn begins, the silence
// counts from then, not from the agent's last output.
func TestAwaitingHoldsIdle(t *testing.T) {
	t.Parallel()
	// A kill grace of an hour: the timeout escalates no further than a
	// SIGTERM, which a Proc with no process behind it never sends.
	p := newIdleProc(Options{Idle: time.Minute, KillGrace: time.Hour})
	var s supervisor
	p.Awaiting(true)
	p.watch(&s, time.Now().Add(time.Hour))
	require.NoError(t, s.reason, "waiting for the caller is no silence")
	p.Awaiting(false)
	turn := time.Now()
	p.watch(&s, turn.Add(30*time.Second))
	require.NoError(t, s.reason, "the turn's silence counts from its start")
	p.watch(&s, turn.Add(2*time.Minute))
	require.ErrorIs(t, s.reason, ErrIdleTimeout)
}

// TestPendingOutputIsNoSilence: output waiting unread in a pipe is not the
// agent's silence but the reader's delay: a harness stopped with Ctrl-Z
// and resumed ran its watchdog before its reader as often as not, and an
// agent that had printed all along got an idle timeout.
func TestPendingOutputIsNoSilence(t *testing.T) {
	t.Parallel()
	var warnings []*event.Warning
	p := newIdleProc(Options{Idle: time.Minute, IdleWarning: 10 * time.Second, KillGrace: time.Hour,
		OnWarning: func(w *event.Warning) { warnings = append(warnings, w) }})
	for _, stream := range []**os.File{&p.stdoutR, &p.stderrR} {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		t.Cleanup(func() { r.Close(); w.Close() })
		*stream = r
		_, err = w.WriteString("{\"type\":\"assistant\"}\n")
		require.NoError(t, err)
		var s supervisor
		p.watch(&s, time.Now().Add(time.Hour))
		p.warns.wait()
		require.NoError(t, s.reason, "output waits unread")
		require.Empty(t, warnings)
		_, err = r.Read(make([]byte, 64))
		require.NoError(t, err)
		*stream = nil
	}
	var s supervisor
	p.watch(&s, time.Now().Add(time.Hour))
	require.ErrorIs(t, s.reason, ErrIdleTimeout, "a silence once the pipes are read")
}

// TestAwaitingHoldsToolBudget: while a live session waits for its caller
// (a permission request waiting for the answer) the budget of each open
// tool call stands still, as the idle watchdog holds: no tool_stalled
// warning during the wait, however long, and each call's budget resumes
// where it stood once the agent owes an answer again. The warning came
// while the caller was still within its ask deadline.
func TestAwaitingHoldsToolBudget(t *testing.T) {
	t.Parallel()
	var warned []*event.Warning
	p := newIdleProc(Options{Idle: 24 * time.Hour, KillGrace: time.Hour,
		ToolBudget: func(event.Kind) time.Duration { return time.Minute },
		OnWarning:  func(w *event.Warning) { warned = append(warned, w) }})
	var s supervisor
	watch := func(now time.Time) time.Time { next := p.watch(&s, now); p.warns.wait(); return next }
	t0 := time.Now()
	p.toolStarted("c1", "Edit", event.KindEdit, t0)
	p.awaitingAt(true, t0.Add(10*time.Second)) // asked, 10 s into c1's minute
	p.toolStarted("c2", "Read", event.KindRead, t0.Add(30*time.Minute))
	watch(t0.Add(time.Hour))
	require.Empty(t, warned, "the caller's wait is not the tools'")
	answered := t0.Add(time.Hour)
	p.awaitingAt(false, answered)
	next := watch(answered.Add(49 * time.Second))
	require.Empty(t, warned)
	require.Equal(t, answered.Add(50*time.Second), next, "c1 has the 50 s of its budget it had left")
	watch(answered.Add(50 * time.Second))
	require.Len(t, warned, 1)
	require.Equal(t, "c1", warned[0].CallID)
	require.Equal(t, (time.Hour + 50*time.Second).Milliseconds(), warned[0].ElapsedMS, "its time since it started")
	watch(answered.Add(time.Minute))
	require.Len(t, warned, 2, "c2, opened during the wait, has its minute from the answer")
	require.Equal(t, "c2", warned[1].CallID)
	require.NoError(t, s.reason)
}
