package acp_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
)

// TestOptionsACPCannotPassAreRefused: a task option the ACP session
// cannot pass to the agent is a task error (exit status 2, invalid
// params) that names the agent, the option and ACP, and nothing starts.
// It used to be dropped: opencode over ACP ran with --max-turns,
// --system-prompt and --model ignored, and its run recorded the model.
// The model is refused only where a built-in agent's ACP side takes none
// (opencode and cursor read it from their configuration); claude, codex
// and gemini still get it, and an ACP agent harness does not know (given
// by its command) runs without it: its command chooses its model, and
// the task's stays the run's label, as before.
func TestOptionsACPCannotPassAreRefused(t *testing.T) {
	t.Parallel()
	fake := []string{"my-acp-agent", "serve"}
	type opt struct {
		flag string
		set  func(*harness.Task)
	}
	turns := opt{"--max-turns", func(t *harness.Task) { t.MaxTurns = 3 }}
	system := opt{"--system-prompt", func(t *harness.Task) { t.SystemPrompt = "be terse" }}
	appended := opt{"--append-system-prompt", func(t *harness.Task) { t.AppendSystemPrompt = "be terse" }}
	model := opt{"--model", func(t *harness.Task) { t.Model = "m1" }}
	for _, c := range []struct {
		agent   string
		command []string
		refused []opt
		noModel bool // the model is not refused, and not passed either
	}{
		{agent: "claude", refused: []opt{turns, system, appended}},
		{agent: "codex", refused: []opt{turns, system, appended}},
		{agent: "gemini", refused: []opt{turns, system, appended}},
		{agent: "opencode", refused: []opt{turns, system, appended, model}},
		{agent: "cursor", refused: []opt{turns, system, appended, model}},
		// A known agent's own command keeps its way of choosing a model, or none.
		{agent: "gemini", command: fake, refused: []opt{turns, system, appended}},
		{agent: "opencode", command: fake, refused: []opt{turns, system, appended, model}},
		{agent: "my-acp", command: fake, refused: []opt{turns, system, appended}, noModel: true},
	} {
		task := func() harness.Task {
			return harness.Task{Agent: c.agent, Protocol: harness.ProtocolACP, Command: c.command,
				Prompt: "hi", BaseEnv: []string{}}
		}
		for _, o := range []opt{turns, system, appended, model} {
			tk := task()
			o.set(&tk)
			cmd, err := harness.Prepare(tk)
			name := c.agent + " " + o.flag
			if len(c.command) > 0 {
				name += " (its command)"
			}
			refused := false
			for _, r := range c.refused {
				refused = refused || r.flag == o.flag
			}
			if !refused {
				require.NoError(t, err, name)
				given := strings.Join(append(cmd.Argv, cmd.AddedEnv...), " ")
				if c.noModel {
					require.NotContains(t, given, "m1", "%s: the model is not passed", name)
				} else {
					require.Contains(t, given, "m1", "%s: the model reaches the agent", name)
				}
				continue
			}
			require.Nil(t, cmd, name)
			var te *harness.TaskError
			require.True(t, errors.As(err, &te), "%s: %v is a task error", name, err)
			require.ErrorContains(t, err, c.agent+": no "+o.flag+" over ACP (", name)
		}
		// None of them, and the same agent runs.
		_, err := harness.Prepare(task())
		require.NoError(t, err, c.agent)
	}
}
