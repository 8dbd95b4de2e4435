package claude

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// TestLiveSetupTimerEndsWithTheCLI: a CLI that exits before its first
// system/init ends the session (its stdout's end, then Flush): the setup
// deadline goes with it, rather than firing into a stream that has ended
// up to a minute later, the run held until then.
func TestLiveSetupTimerEndsWithTheCLI(t *testing.T) {
	t.Parallel()
	c := NewConversation()
	c.Converse(false)
	c.BoundSetup(time.Hour, func(...event.Body) {})
	require.NoError(t, c.Begin(&bytes.Buffer{}, adapters.Task{}))
	_, err := c.Prompt("p")
	require.NoError(t, err)
	require.NotNil(t, c.timer)
	c.Flush(nil)
	require.False(t, c.timer.Stop(), "the setup timer was stopped")
}

// TestLiveSetupTimerFiredAsTheCLIEnds: a setup timer that fired as the
// CLI's stdout ended, its callback waiting for the lock Flush held, finds
// the output ended and reports nothing (Stop is too late for it). It
// reported a missed start into a stream that had ended, as ACP's does
// not.
func TestLiveSetupTimerFiredAsTheCLIEnds(t *testing.T) {
	t.Parallel()
	c := NewConversation()
	c.Converse(false)
	c.BoundSetup(time.Hour, func(...event.Body) { t.Error("a missed start reported after the output ended") })
	require.NoError(t, c.Begin(&bytes.Buffer{}, adapters.Task{}))
	_, err := c.Prompt("p")
	require.NoError(t, err)
	c.Flush(nil)
	c.setupExpired() // the timer's callback, run as it got the lock after Flush
	require.False(t, c.Done(), "the session ended by a setup deadline after the output ended")
}
