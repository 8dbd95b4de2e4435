package mcpserver_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mcpserver"
)

// The warnings of a run are spaced per code: a tool that stalls past its
// budget, then goes on silent until the idle watchdog is about to end the
// run, gives the client both warnings. One interval for all warnings
// dropped the idle one, the warning that a kill is coming.
func TestWarningsSpacedPerCode(t *testing.T) {
	t.Parallel()
	var f *fixture
	f = newFixture(t, func(o *mcpserver.Options) {
		graceOptions(&f, 100*time.Millisecond)(o)
		o.LogInterval = time.Minute
		setup := o.Setup
		o.Setup = func(tk *harness.Task) (harness.Observer, error) {
			tk.Budgets.Tool = func(event.Kind) time.Duration { return 200 * time.Millisecond }
			return setup(tk)
		}
	})
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "hang-in-tool", "idle_timeout_ms": 1500}, nil)
	require.True(t, res.IsError, harnesstest.MCPText(res))
	require.Equal(t, "EIDLE", harnesstest.MCPStructured(t, res).Get("error.code").String())
	var codes []string
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		codes = codes[:0]
		for _, l := range f.logs {
			if l.Level == "warning" {
				d, _ := json.Marshal(l.Data)
				codes = append(codes, gjson.GetBytes(d, "code").String())
			}
		}
		return len(codes) >= 2
	}, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, []string{"tool_stalled", "idle"}, codes)
	f.children.RequireGone(t)
}
