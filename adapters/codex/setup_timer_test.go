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
