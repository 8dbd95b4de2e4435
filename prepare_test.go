package harness_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
)

// TestPrepareRefusesWhatCannotBeExeced: a task the agent could not be
// started with is a TaskError (exit 2) that names its part at fault, not
// a spawn failure of harness's own binary ("fork/exec /proc/self/exe:
// invalid argument", exit 1); a resume id that would be read as a flag
// or a model id that would be read as a flag is refused.
func TestPrepareRefusesWhatCannotBeExeced(t *testing.T) {
	bin := "/bin/true"
	big := strings.Repeat("x", 200<<10)
	for name, tc := range map[string]struct {
		task harness.Task
		want string
	}{
		"NUL in the prompt":        {harness.Task{Agent: "claude", Prompt: "a\x00b"}, "the prompt holds a NUL byte"},
		"NUL in an argument":       {harness.Task{Agent: "claude", Prompt: "p", ExtraArgs: []string{"a\x00b"}}, "of the agent's command line holds a NUL byte"},
		"NUL in the environment":   {harness.Task{Agent: "claude", Prompt: "p", Env: []string{"K=a\x00b"}}, "environment variable K holds a NUL byte"},
		"over-long variable":       {harness.Task{Agent: "claude", Prompt: "p", Env: []string{"BIG=" + big}}, "environment variable BIG is 204804 bytes"},
		"over-long argument":       {harness.Task{Agent: "codex", Prompt: "p", Model: big}, "over the 131071 the system takes in one argument"},
		"resume read as a flag":    {harness.Task{Agent: "codex", Prompt: "p", Resume: "--dangerously-bypass-approvals-and-sandbox"}, `resume "--dangerously-bypass-approvals-and-sandbox": a session id does not start with '-'`},
		"resume of cursor as flag": {harness.Task{Agent: "cursor", Prompt: "p", Resume: "-f"}, "a session id does not start with '-'"},
		"model read as a flag":     {harness.Task{Agent: "opencode", Prompt: "p", Permissions: "read-only", Model: "--dangerously-skip-permissions"}, `model "--dangerously-skip-permissions": a model id does not start with '-'`},
	} {
		t.Run(name, func(t *testing.T) {
			tc.task.Binary = bin
			_, err := harness.Prepare(tc.task)
			var te *harness.TaskError
			require.True(t, errors.As(err, &te), "a TaskError: %v", err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
	// A long prompt goes on stdin: no limit of an argument's applies.
	c, err := harness.Prepare(harness.Task{Agent: "claude", Prompt: big, Binary: bin})
	require.NoError(t, err)
	require.Equal(t, big, c.Stdin)
}
