package mcpserver_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mcpserver"
)

// TestRunAgentResume: run_agent's resume reaches the run's task (the
// agent's own session to continue, as 'harness run --resume'), and one
// the library refuses is a tool error. The summary named a session id
// "to resume it", and nothing took one.
func TestRunAgentResume(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	f := newFixture(t, func(o *mcpserver.Options) {
		setup := o.Setup
		o.Setup = func(tk *harness.Task) (harness.Observer, error) {
			mu.Lock()
			got = append(got, tk.Resume)
			mu.Unlock()
			return setup(tk)
		}
	})
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "slow-drip", "resume": "sess-0123"}, nil)
	require.False(t, res.IsError, harnesstest.MCPText(res))
	mu.Lock()
	require.Equal(t, []string{"sess-0123"}, got)
	mu.Unlock()

	res = f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "slow-drip", "resume": "--dangerously-skip-permissions"}, nil)
	require.True(t, res.IsError)
	require.Contains(t, harnesstest.MCPText(res), "a session id does not start with '-'")
}
