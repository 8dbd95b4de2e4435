package acp

import (
	"fmt"
	"strconv"

	"github.com/agentharness/harness/adapters"
)

// builtin is how each supported agent is started as an ACP agent.
var builtin = map[string][]string{
	"claude":   {"claude-agent-acp"}, // @zed-industries/claude-agent-acp
	"codex":    {"codex-acp"},        // @zed-industries/codex-acp
	"gemini":   {"gemini", "--acp"},
	"opencode": {"opencode", "acp"},
}

// Adapter runs an agent over ACP: the prompt goes in session/prompt, not
// on the command line. It implements adapters.Adapter; its Parser maps
// captured sessions, and a live run drives a Client instead.
type Adapter struct {
	name string
	argv []string         // the command; argv[0] is the binary name
	base adapters.Adapter // the agent's CLI adapter, for its environment; may be nil
}

// Builtin returns the ACP adapter of a supported agent whose CLI adapter
// is base; ok is false for an agent with no known ACP command.
func Builtin(base adapters.Adapter) (*Adapter, bool) {
	argv, ok := builtin[base.Name()]
	if !ok {
		return nil, false
	}
	return &Adapter{name: base.Name(), argv: argv, base: base}, true
}

// Custom returns the adapter of any other ACP agent, started with command
// (command[0] is the binary).
func Custom(name string, command []string) (*Adapter, error) {
	if len(command) == 0 || command[0] == "" {
		return nil, fmt.Errorf("acp agent %q: empty command", name)
	}
	return &Adapter{name: name, argv: append([]string(nil), command...)}, nil
}

// WithCommand returns the ACP adapter of a supported agent started with
// command instead of its usual ACP command (its environment stays).
func WithCommand(base adapters.Adapter, command []string) (*Adapter, error) {
	a, err := Custom(base.Name(), command)
	if err == nil {
		a.base = base
	}
	return a, err
}

// Name implements adapters.Adapter.
func (a *Adapter) Name() string { return a.name }

// Binaries implements adapters.Adapter.
func (a *Adapter) Binaries() []string { return a.argv[:1] }

// Command implements adapters.Adapter: the ACP command, then ExtraArgs;
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
	return adapters.Command{Argv: argv, Env: env, PromptIndex: -1}, nil
}

// NewParser implements adapters.Adapter: a mapping-only Client.
func (a *Adapter) NewParser() adapters.Parser { return NewParser() }

// Session returns the live Client of one run of t.
func (a *Adapter) Session(t adapters.Task, o Options) *Client {
	o.Prompt, o.Cwd, o.Permissions = t.Prompt, t.Cwd, t.Permissions
	return NewClient(o)
}
