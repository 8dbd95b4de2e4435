package acp

import (
	"fmt"
	"strconv"

	"github.com/agentharness/harness/adapters"
)

// Protocol is ACP's name in a task (harness.Task.Protocol, protocol = "acp"
// in the configuration).
const Protocol = "acp"

// builtin is how each supported agent is started as an ACP agent.
var builtin = map[string][]string{
	"claude":   {"claude-agent-acp"}, // @agentclientprotocol/claude-agent-acp
	"codex":    {"codex-acp"},        // @agentclientprotocol/codex-acp
	"gemini":   {"gemini", "--acp"},
	"opencode": {"opencode", "acp"},
	// Cursor's own ACP server, from its documentation: untested here
	// (Cursor cannot be installed on this machine).
	"cursor": {"cursor-agent", "acp"},
}

// Adapter runs an agent over ACP: the prompt goes in session/prompt, not
// on the command line. It implements adapters.Adapter; its Command is a
// session over stdio, and its Parser a Client, which maps a captured
// session and drives a live one.
type Adapter struct {
	name string
	argv []string         // the command; argv[0] is the binary name
	base adapters.Adapter // the agent's CLI adapter, for its environment; may be nil
}

// For returns the adapter that runs an agent over ACP. base is the
// agent's CLI adapter, nil for an agent harness has none for: command
// then starts it, and name is any name. A supported agent runs its
// built-in ACP command, or command instead (its environment stays).
func For(name string, base adapters.Adapter, command []string) (adapters.Adapter, error) {
	switch {
	case base == nil:
		return Custom(name, command)
	case len(command) > 0:
		a, err := Custom(base.Name(), command)
		if err != nil {
			return nil, err
		}
		a.base = base
		return a, nil
	}
	argv, ok := builtin[base.Name()]
	if !ok {
		return nil, fmt.Errorf("%s has no ACP mode; give its ACP command (command = [...] in [agents.%s])", base.Name(), base.Name())
	}
	return &Adapter{name: base.Name(), argv: argv, base: base}, nil
}

// Custom returns the adapter of any other ACP agent, started with command
// (command[0] is the binary).
func Custom(name string, command []string) (*Adapter, error) {
	if len(command) == 0 || command[0] == "" {
		return nil, fmt.Errorf("acp agent %q: empty command", name)
	}
	return &Adapter{name: name, argv: append([]string(nil), command...)}, nil
}

// Name implements adapters.Adapter.
func (a *Adapter) Name() string { return a.name }

// Binaries implements adapters.Adapter.
func (a *Adapter) Binaries() []string { return a.argv[:1] }

// Command implements adapters.Adapter: a session over stdio, started with
// the ACP command, then ExtraArgs;
// the environment is the one the agent's CLI adapter gives (a sandbox
// flag, a permission policy). Prompt, model and turn limits go over the
// protocol or not at all.
func (a *Adapter) Command(binary string, t adapters.Task) (adapters.Command, error) {
	if t.Resume != "" {
		return adapters.Command{}, fmt.Errorf("--resume is not supported over ACP yet")
	}
	argv := append([]string{binary}, a.argv[1:]...)
	var env []string
	if t.Model != "" && a.base != nil {
		// ACP has no stable way to choose a model: each agent's own
		// (OpenCode's ACP mode takes it from its config only).
		switch a.name {
		case "gemini":
			argv = append(argv, "-m", t.Model)
		case "codex":
			argv = append(argv, "-c", "model="+strconv.Quote(t.Model))
		case "claude":
			env = append(env, "ANTHROPIC_MODEL="+t.Model)
		}
	}
	argv = append(argv, t.ExtraArgs...)
	if a.base != nil {
		bt := t
		bt.Prompt, bt.ExtraArgs = "-", nil
		if c, err := a.base.Command(binary, bt); err == nil {
			env = append(env, c.Env...)
		}
	}
	return adapters.Command{Argv: argv, Env: env, PromptIndex: -1, Session: true}, nil
}

// NewParser implements adapters.Adapter: the Client of one session.
func (a *Adapter) NewParser() adapters.Parser { return NewParser() }
