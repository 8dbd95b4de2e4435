package acp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// TestSetupNotRead: a session/new, session/set_mode or (in a one-prompt
// run) session/prompt that an agent no longer reading its stdin cannot
// take ends the session at once with the protocol error of an agent
// that does not read, as every other write does. Their write errors were
// dropped: the session waited for the setup deadline (60 s), as for an
// agent that did not answer, or, for the prompt, for the idle watchdog.
func TestSetupNotRead(t *testing.T) {
	const (
		initialized = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`
		plain       = `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`
		modes       = `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1","modes":{"currentModeId":"default","availableModes":[{"id":"default"},{"id":"yolo"}]}}}`
		modeSet     = `{"jsonrpc":"2.0","id":3,"result":{}}`
	)
	for name, tc := range map[string]struct {
		took  int // the writes the agent's stdin takes
		lines []string
	}{
		"session/new":               {1, []string{initialized}},
		"session/set_mode":          {2, []string{initialized, modes}},
		"session/prompt":            {2, []string{initialized, plain}},
		"session/prompt-after-mode": {3, []string{initialized, modes, modeSet}},
	} {
		t.Run(name, func(t *testing.T) {
			c := NewParser()
			c.BoundSetup(time.Hour, func(...event.Body) { t.Error("a setup deadline, not the write, ended the session") })
			require.NoError(t, c.Begin(&adaptertest.FullStdin{N: tc.took}, adapters.Task{Prompt: "x", Cwd: t.TempDir()}))
			var out []event.Body
			for _, l := range tc.lines {
				out, _ = c.Parse(out, []byte(l))
			}
			require.True(t, c.Done(), "the session is over")
			e := lastFatal(t, out)
			require.Equal(t, event.ClassProtocol, e.Class)
			require.Contains(t, e.Message, "does not read")
		})
	}
}
