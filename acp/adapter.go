package acp

import (
	"fmt"

	"github.com/agentharness/harness/adapters"
)

// Protocol is ACP's name in a task (harness.Task.Protocol, protocol = "acp"
// in the configuration).
const Protocol = "acp"

// Adapter runs an agent over ACP: the prompt goes in session/prompt, not
// on the command line. It implements adapters.Adapter; its Command is a
// session over stdio, and its Parser a Client, which maps a captured
// session and drives a live one.
type Adapter struct {
	name string
	argv []string        // the command; argv[0] is the binary name
	base *adapters.Agent // the agent, for its environment and model; may be nil
}

// For returns the adapter that runs an agent over ACP. base is the
// agent, nil for one harness does not know: command then starts it, and
// name is any name. A known agent runs its own ACP command (base.ACP), or
// command instead (its environment and model flags stay).
func For(name string, base *adapters.Agent, command []string) (adapters.Adapter, error) {
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
	if base.ACP == nil || len(base.ACP.Command) == 0 {
		return nil, fmt.Errorf("%s has no ACP mode; give its ACP command (command = [...] in [agents.%s])", base.Name(), base.Name())
	}
	return &Adapter{name: base.Name(), argv: append([]string(nil), base.ACP.Command...), base: base}, nil
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
// flag, a permission policy). The prompt goes over the protocol, the
// model the agent's own way (adapters.ACP.Model); a task option that
// cannot reach the agent is an error, never dropped (refuse). An agent
// harness does not know (no base) is given no model: its command chooses
// one, and the task's stays the run's label (its cost estimate).
func (a *Adapter) Command(binary string, t adapters.Task) (adapters.Command, error) {
	if err := a.refuse(t); err != nil {
		return adapters.Command{}, err
	}
	argv := append([]string{binary}, a.argv[1:]...)
	var env []string
	if t.Model != "" && a.base != nil {
		// ACP has no stable way to choose a model: each agent's own
		// (refuse let the model through only to an agent that has one).
		args, menv := a.base.ACP.Model(t.Model)
		argv = append(argv, args...)
		env = append(env, menv...)
	}
	argv = append(argv, t.ExtraArgs...)
	if a.base != nil {
		bt := t
		bt.Prompt, bt.ExtraArgs = "-", nil
		if c, err := a.base.Command(binary, bt); err == nil {
			env = append(env, c.Env...)
		}
	}
	// The same binary litters the same directory in its ACP mode.
	private := a.base != nil && a.base.PrivateTmp
	return adapters.Command{Argv: argv, Env: env, PromptIndex: -1, Session: true, PrivateTmp: private}, nil
}

// refuse returns the error of the first option of t that a's ACP session
// cannot pass to the agent, nil when t asks for none. A run given one would
// silently do something else, and record, as its model, one the agent
// never got. A model is refused only to a built-in agent whose ACP side
// takes none (TakesModel): an agent harness does not know keeps its
// command's model, and the task's is only the run's label.
func (a *Adapter) refuse(t adapters.Task) error {
	var option, why string
	switch {
	case t.MaxTurns != 0:
		option, why = "--max-turns", "ACP has no turn limit"
	case t.SystemPrompt != "":
		option, why = "--system-prompt", "harness's ACP client sets no system prompt"
	case t.AppendSystemPrompt != "":
		option, why = "--append-system-prompt", "harness's ACP client sets no system prompt"
	case t.Model != "" && a.base != nil && !TakesModel(a.base):
		option, why = "--model", "its ACP mode takes the model from its own configuration only"
	default:
		return nil
	}
	return fmt.Errorf("%s: no %s over ACP (%s)", a.name, option, why)
}

// TakesModel reports whether base, an agent harness knows, is given a
// task's model when it runs over ACP: its ACP side has a way to take one
// (adapters.ACP.Model). One that has none (OpenCode and Cursor read it
// from their own configuration) refuses a model over ACP.
func TakesModel(base *adapters.Agent) bool {
	return base != nil && base.ACP != nil && base.ACP.Model != nil
}

// NewParser implements adapters.Adapter: the Client of one session.
func (a *Adapter) NewParser() adapters.Parser { return NewParser() }
