package claude

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
)

func TestCommand(t *testing.T) {
	t.Parallel()
	base := []string{"/usr/bin/claude", "-p", "--output-format", "stream-json", "--verbose"}
	with := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }
	cases := []struct {
		name string
		task adapters.Task
		root bool
		argv []string
		env  []string
	}{
		{name: "defaults-full-access", task: adapters.Task{Prompt: "hi"},
			argv: with("--include-partial-messages", "--dangerously-skip-permissions", "--", "hi")},
		{name: "full-access-as-root-sets-IS_SANDBOX", task: adapters.Task{Prompt: "hi", Permissions: adapters.FullAccess}, root: true,
			argv: with("--include-partial-messages", "--dangerously-skip-permissions", "--", "hi"),
			env:  []string{"IS_SANDBOX=1"}},
		{name: "read-only-denies-writing-tools", task: adapters.Task{Prompt: "hi", Permissions: adapters.ReadOnly, NoPartial: true}, root: true,
			argv: with("--permission-mode=default", "--disallowedTools=Bash,Edit,MultiEdit,Write,NotebookEdit", "--", "hi")},
		{name: "every-option", task: adapters.Task{Prompt: "fix it", Model: "claude-sonnet-4-5", MaxTurns: 7,
			SystemPrompt: "be terse", AppendSystemPrompt: "-- and kind", Resume: "ce92b660", ExtraArgs: []string{"--mcp-config", "m.json"}, Cwd: "/tmp"},
			argv: with("--include-partial-messages", "--model=claude-sonnet-4-5", "--max-turns=7",
				"--system-prompt=be terse", "--append-system-prompt=-- and kind", "--resume=ce92b660",
				"--dangerously-skip-permissions", "--mcp-config", "m.json", "--", "fix it")},
		{name: "prompt-starting-with-dash", task: adapters.Task{Prompt: "- [ ] --version please", NoPartial: true},
			argv: with("--dangerously-skip-permissions", "--", "- [ ] --version please")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := &Adapter{euid: func() int {
				if c.root {
					return 0
				}
				return 1000
			}}
			cmd, err := a.Command("/usr/bin/claude", c.task)
			require.NoError(t, err)
			require.Equal(t, c.argv, cmd.Argv)
			require.Equal(t, c.env, cmd.Env)
			require.Equal(t, len(cmd.Argv)-1, cmd.PromptIndex)
			require.Equal(t, c.task.Prompt, cmd.Argv[cmd.PromptIndex])
			require.Equal(t, "--", cmd.Argv[cmd.PromptIndex-1])
			require.Empty(t, cmd.Stdin)
		})
	}
}

func TestCommandErrors(t *testing.T) {
	t.Parallel()
	for name, task := range map[string]adapters.Task{
		"unknown-permission-mode": {Prompt: "x", Permissions: "yolo"},
		"negative-max-turns":      {Prompt: "x", MaxTurns: -1},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := New().Command("claude", task)
			require.Error(t, err)
		})
	}
	t.Run("empty-binary", func(t *testing.T) {
		t.Parallel()
		_, err := New().Command("", adapters.Task{Prompt: "x"})
		require.Error(t, err)
	})
}

func TestIdentity(t *testing.T) {
	t.Parallel()
	var a adapters.Adapter = New()
	require.Equal(t, "claude", a.Name())
	require.Equal(t, []string{"claude"}, a.Binaries())
	require.NotNil(t, a.NewParser())
}
