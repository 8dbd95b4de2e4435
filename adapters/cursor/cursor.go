// Package cursor adapts the Cursor CLI (cursor-agent, renamed agent) run
// headless with --print --output-format stream-json: it builds the command
// line for a task and turns the CLI's JSON lines — and the raw error text
// Cursor prints on stdout — into unified events.
package cursor

import (
	"errors"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/registry"
)

// Agent is the Cursor CLI: who it is and how it is driven. It has no Mock:
// the CLI talks to Cursor's own service only.
var Agent = adapters.Agent{
	Info: registry.AgentInfo{
		ID: "cursor", Display: "Cursor CLI",
		Aliases: []string{"cursor-agent", "agent"},
		// cursor-agent first: the newer name, agent, is also what other
		// CLIs (xAI's Grok Build) install, so it is only a fallback.
		Binaries: []string{"cursor-agent", "agent"},
		// Cursor ships an installer script (cursor.com/install), not an npm package.
		NPMPackage:    "",
		CredentialEnv: []string{"CURSOR_API_KEY"},
		Flags:         []string{"--print", "--output-format", "--stream-partial-output", "--model", "--force", "--resume"},
	},
	Driver: &Adapter{},
	// Cursor's own ACP server, from its documentation: untested here
	// (Cursor cannot be installed on this machine).
	ACP: &adapters.ACP{Command: []string{"cursor-agent", "acp"}},
}

// Adapter drives the Cursor CLI (Agent.Driver). The zero value is ready to
// use; it holds no state and is safe for concurrent use.
type Adapter struct{}

// NewParser returns a parser for one run.
func (*Adapter) NewParser() adapters.Parser { return newParser() }

// Errors for task options the Cursor CLI has no flag for.
var (
	ErrMaxTurns     = errors.New("cursor: the Cursor CLI has no max-turns option")
	ErrSystemPrompt = errors.New("cursor: the Cursor CLI has no system-prompt option (use rules in .cursor/rules or AGENTS.md)")
)

// Command builds
//
//	BINARY -p --output-format stream-json [--stream-partial-output]
//	  [--model M] [--resume ID] PERMISSION --trust [--workspace CWD] [EXTRA…] -- PROMPT
//
// full-access is --force (run every tool without asking); read-only is
// --mode ask, Cursor's question-answering mode, which neither edits files nor
// runs commands (plan mode was not chosen: it raises interaction queries and
// aims at writing a plan). Both pass --trust: without it a headless run in a
// directory Cursor has not seen refuses to start, and exits 0. The prompt goes
// after "--" because the CLI's parser (commander.js) reads any argument that
// starts with "-" as an option, even after positionals. A prompt longer
// than adapters.ArgPromptMax goes on stdin, with no prompt argument: the
// CLI reads its prompt from there then.
func (a *Adapter) Command(binary string, t adapters.Task) (adapters.Command, error) {
	if t.MaxTurns != 0 {
		return adapters.Command{}, ErrMaxTurns
	}
	if t.SystemPrompt != "" || t.AppendSystemPrompt != "" {
		return adapters.Command{}, ErrSystemPrompt
	}
	argv := []string{binary, "-p", "--output-format", "stream-json"}
	if !t.NoPartial {
		argv = append(argv, "--stream-partial-output")
	}
	if t.Model != "" {
		argv = append(argv, "--model", t.Model)
	}
	if t.Resume != "" {
		argv = append(argv, "--resume", t.Resume)
	}
	perm, err := t.PermissionArgs("cursor", []string{"--force"}, []string{"--mode", "ask"})
	if err != nil {
		return adapters.Command{}, err
	}
	argv = append(argv, perm...)
	argv = append(argv, "--trust")
	if t.Cwd != "" {
		argv = append(argv, "--workspace", t.Cwd)
	}
	argv = append(argv, t.ExtraArgs...)
	return adapters.PromptLast(argv, nil, t.Prompt), nil
}
