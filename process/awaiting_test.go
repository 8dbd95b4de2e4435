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
