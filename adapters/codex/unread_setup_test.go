package codex

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// TestAppServerSetupNotRead: an initialized or thread/start that a Codex
// no longer reading its stdin cannot take ends the session at once with
// the protocol error of an agent that does not read, as every other
// write does, rather than at the setup deadline as a thread/start Codex
// did not answer.
func TestAppServerSetupNotRead(t *testing.T) {
	t.Parallel()
	for name, took := range map[string]int{"initialized": 1, "thread-start": 2} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := NewAppServer()
			c.Converse(false)
			c.BoundSetup(time.Hour, func(...event.Body) {})
			require.NoError(t, c.Begin(&adaptertest.FullStdin{N: took}, adapters.Task{Cwd: "/w"}))
			bodies, _ := exchange(c, initAnswer)
			require.True(t, c.Done(), "the session is over")
			require.GreaterOrEqual(t, len(bodies), 2, "%#v", bodies)
			e, ok := bodies[len(bodies)-2].(*event.Error)
			require.True(t, ok, "%#v", bodies)
			require.True(t, e.Fatal)
			require.Equal(t, event.ClassProtocol, e.Class)
			require.Contains(t, e.Message, "does not read")
			require.IsType(t, &event.Result{}, bodies[len(bodies)-1])
		})
	}
}
