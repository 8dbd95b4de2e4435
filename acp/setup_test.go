package acp

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// TestSetupDeadlineStopsWhenTheOutputEnds: an agent that exits during the
// setup (its stdout ends: Flush) can answer nothing more, so the setup
// step's deadline stops there. It was kept running for up to 60 s, and
// told the harness of a missed deadline after the run had ended.
func TestSetupDeadlineStopsWhenTheOutputEnds(t *testing.T) {
	for name, answered := range map[string][]string{
		"initialize":  nil,
		"session/new": {`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`},
		"session/set_mode": {`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1","modes":{"currentModeId":"default","availableModes":[{"id":"default"},{"id":"yolo"}]}}}`},
	} {
		t.Run(name, func(t *testing.T) {
			c := NewParser()
			c.BoundSetup(time.Hour, func(...event.Body) { t.Error("a deadline missed after the output ended") })
			var w bytes.Buffer
			require.NoError(t, c.Begin(&w, adapters.Task{Prompt: "x", Cwd: t.TempDir()}))
			adaptertest.ParseLines(c, answered...)
			require.NotEqual(t, phasePrompt, c.phase, "still in the setup")
			c.Flush(nil)
			c.mu.Lock()
			defer c.mu.Unlock()
			require.False(t, c.timer.Stop(), "the setup deadline still runs after the output ended")
		})
	}
}
