package mockmodel

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/registry"
)

// TestPointNoModel: an agent that calls no model (oracle, nop) and so has
// no wiring is given nothing, not refused; one that calls a model the mock
// cannot stand in for (Cursor) is refused. Before, both were refused.
func TestPointNoModel(t *testing.T) {
	m, err := StartMock("text", "")
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	for _, id := range []string{"oracle", "nop"} {
		a := builtin(t, id)
		require.Nil(t, a.Mock)
		model, env, err := m.Point(id, t.TempDir(), a.Mock)
		require.NoError(t, err, id)
		require.Empty(t, model, id)
		require.Empty(t, env, id, "no throwaway HOME: nothing reads one")
	}
	require.False(t, CallsNoModel(builtin(t, "cursor").Info))
	for _, id := range registry.AgentIDs() {
		if a := builtin(t, id); a.Mock != nil {
			require.False(t, CallsNoModel(a.Info), "%s has a model to point", id)
		}
	}
	_, _, err = m.Point("unregistered", t.TempDir(), nil)
	require.ErrorContains(t, err, "cannot run on the scripted model")
}
