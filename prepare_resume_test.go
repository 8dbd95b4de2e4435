package harness_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
)

// TestPrepareRefusesABlankResume: a resume id of only white space is a
// TaskError (a usage error, exit 2), as a blank prompt is. Before, it was
// handed to the agent (claude's "--resume= ", codex's "resume ' '"),
// which failed the run with exit 1 after it had started.
func TestPrepareRefusesABlankResume(t *testing.T) {
	for _, agent := range []string{"claude", "codex", "cursor", "opencode", "gemini"} {
		for _, resume := range []string{" ", "\t\n"} {
			_, err := harness.Prepare(harness.Task{Agent: agent, Prompt: "p", Resume: resume, Binary: "/bin/true"})
			var te *harness.TaskError
			require.True(t, errors.As(err, &te), "%s %q: a TaskError: %v", agent, resume, err)
			require.ErrorContains(t, err, fmt.Sprintf("resume %q: a session id is not blank", resume))
		}
	}
	// No resume is a new session.
	_, err := harness.Prepare(harness.Task{Agent: "claude", Prompt: "p", Binary: "/bin/true"})
	require.NoError(t, err)
}
