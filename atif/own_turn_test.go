package atif

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestAgentOwnTurnHasNoUserStep: a turn the agent began by itself
// (turn_start origin agent: Claude Code answering the end of a background
// command) has no prompt, so no user step; its answer is an agent step of
// its own, between the caller's two turns.
func TestAgentOwnTurnHasNoUserStep(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "adapters", "claude", "testdata", "live", "bg-notice.golden.ndjson"))
	require.NoError(t, err)
	data, _, _ = bytes.Cut(data, []byte("--- stdin")) // the golden's stream, without what the test wrote to the agent
	evs, err := event.ReadAll(bytes.NewReader(data))
	require.NoError(t, err)
	tr := FromEvents(evs, Meta{})
	require.NoError(t, Check(tr, evs))
	var users, agents []string
	for _, s := range tr.Steps {
		switch s.Source {
		case "user":
			users = append(users, s.Message)
		case "agent":
			agents = append(agents, s.Message)
		}
	}
	require.Equal(t, []string{"Run the job in the background.", "Then say hello (second-mark)."}, users)
	require.Contains(t, agents, "The job is done.") // agent_1's answer
}
