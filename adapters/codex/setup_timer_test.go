package codex

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// TestAppServerSetupTimerEndsWithTheAgent: a Codex that exits during
// the setup (initialize unanswered) ends the session (its stdout's end,
// then Flush): the setup deadline goes with it, rather than firing into a
// stream that has ended up to a minute later, the run held until then.
func TestAppServerSetupTimerEndsWithTheAgent(t *testing.T) {
	t.Parallel()
	c := NewAppServer()
	c.Converse(false)
	c.BoundSetup(time.Hour, func(...event.Body) {})
	require.NoError(t, c.Begin(&bytes.Buffer{}, adapters.Task{Cwd: "/w"}))
	require.NotNil(t, c.timer)
	c.Flush(nil)
	require.False(t, c.timer.Stop(), "the setup timer was stopped")
}

// TestAppServerSetupTimerFiredAsTheAgentEnds: a setup timer that fired
// as Codex's stdout ended, its callback waiting for the lock Flush held,
// finds the output ended and reports nothing (Stop is too late for it).
// It reported a missed step into a stream that had ended, as ACP's does
// not.
func TestAppServerSetupTimerFiredAsTheAgentEnds(t *testing.T) {
	t.Parallel()
	c := NewAppServer()
	c.Converse(false)
	c.BoundSetup(time.Hour, func(...event.Body) { t.Error("a missed step reported after the output ended") })
	require.NoError(t, c.Begin(&bytes.Buffer{}, adapters.Task{Cwd: "/w"}))
	c.Flush(nil)
	c.missed(asInit, "initialize") // the timer's callback, run as it got the lock after Flush
	require.False(t, c.Done(), "the session ended by a setup deadline after the output ended")
}
