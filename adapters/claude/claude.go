// Package claude adapts Claude Code (`claude -p --output-format stream-json
// --verbose`) to harness: it builds the headless command line and turns
// Claude's native JSON lines — system/init, assistant and user messages that
// carry one content block each, stream_event partial messages, and the
// terminal result — into unified events.
package claude

import (
	"errors"
	"fmt"
	"os"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/registry"
)

// Agent is Claude Code: who it is, how it is driven, and how --mock points
// it at the scripted model.
var Agent = adapters.Agent{
	Info: registry.AgentInfo{
		ID: "claude", Display: "Claude Code",
		Aliases:       []string{"claude-code", "claudecode"},
		Binaries:      []string{"claude"},
		NPMPackage:    "@anthropic-ai/claude-code",
		CredentialEnv: []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"},
		Flags: []string{"--print", "--output-format", "--verbose", "--include-partial-messages",
			"--model", "--resume", "--dangerously-skip-permissions"},
	},
	Driver: &Adapter{},
	Mock:   mock,
	ACP: &adapters.ACP{
		Command: []string{"claude-agent-acp"}, // @agentclientprotocol/claude-agent-acp
		Model:   func(m string) ([]string, []string) { return nil, []string{"ANTHROPIC_MODEL=" + m} },
	},
}

// Adapter drives Claude Code (Agent.Driver). The zero value is ready to
// use; it is stateless and safe for concurrent use.
type Adapter struct {
	// euid reports the effective user id; os.Geteuid when nil. Tests set it
	// to check the root-only environment.
	euid func() int
}

// readOnlyDenied are the built-in tools that change files or run commands.
// A read-only task removes them from the session altogether: headless `-p`
// has no one to answer a permission prompt, so `--permission-mode default`
// already refuses them, but a user's or project's settings.json may carry
// allow rules (`Bash(npm test)`, `Edit`) or a defaultMode that pre-approve
// them. Deny rules beat allow rules in every mode but bypassPermissions, and
// the explicit `--permission-mode default` overrides any defaultMode from
// settings. `plan` mode is not used: it changes what the model is asked to
// do (propose a plan, call ExitPlanMode) rather than only what it may do.
const readOnlyDenied = "Bash,Edit,MultiEdit,Write,NotebookEdit"

// Command builds
//
//	claude -p --output-format stream-json --verbose [--include-partial-messages]
//	  [--model M] [--max-turns N] [--system-prompt S] [--append-system-prompt S]
//	  [--resume ID] <permission flags> [extra args] -- <prompt>
//
// Claude's parser (commander) takes "--" as the end of options, so a prompt
// that starts with "-" reaches it as the prompt (without "--", Claude exits
// with "error: unknown option"). Flag values are given as --flag=value so
// that a value starting with "-" is not read as a flag either.
//
// Claude Code has no working-directory flag: Task.Cwd is honoured by
// starting the process in that directory, which is the caller's job.
//
// full-access is --dangerously-skip-permissions. Run as root, Claude refuses
// that flag ("cannot be used with root/sudo privileges") and exits 1 unless
// IS_SANDBOX=1 is in its environment, so Command adds that variable then,
// and only then: harness already runs the agent in the place the user chose.
//
// A prompt longer than adapters.ArgPromptMax goes on stdin instead of after
// "--": `claude -p` with no prompt argument reads it from there.
func (a *Adapter) Command(binary string, t adapters.Task) (adapters.Command, error) {
	if binary == "" {
		return adapters.Command{}, errors.New("claude: empty binary path")
	}
	if t.MaxTurns < 0 {
		return adapters.Command{}, fmt.Errorf("claude: max turns must not be negative, got %d", t.MaxTurns)
	}
	argv := []string{binary, "-p", "--output-format", "stream-json", "--verbose"}
	if !t.NoPartial {
		argv = append(argv, "--include-partial-messages")
	}
	if t.Model != "" {
		argv = append(argv, "--model="+t.Model)
	}
	if t.MaxTurns > 0 {
		argv = append(argv, fmt.Sprintf("--max-turns=%d", t.MaxTurns))
	}
	if t.SystemPrompt != "" {
		argv = append(argv, "--system-prompt="+t.SystemPrompt)
	}
	if t.AppendSystemPrompt != "" {
		argv = append(argv, "--append-system-prompt="+t.AppendSystemPrompt)
	}
	if t.Resume != "" {
		argv = append(argv, "--resume="+t.Resume)
	}
	var env []string
	switch t.Permissions {
	case "", adapters.FullAccess:
		argv = append(argv, "--dangerously-skip-permissions")
		euid := a.euid
		if euid == nil {
			euid = os.Geteuid
		}
		if euid() == 0 {
			env = append(env, "IS_SANDBOX=1")
		}
	case adapters.ReadOnly:
		argv = append(argv, "--permission-mode=default", "--disallowedTools="+readOnlyDenied)
	default:
		return adapters.Command{}, fmt.Errorf("claude: unknown permission mode %q (want %q or %q)",
			t.Permissions, adapters.FullAccess, adapters.ReadOnly)
	}
	argv = append(argv, t.ExtraArgs...)
	return adapters.PromptLast(argv, env, t.Prompt), nil
}

// NewParser returns a parser for one run of Claude Code.
func (*Adapter) NewParser() adapters.Parser { return newParser() }
