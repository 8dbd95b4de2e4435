package adapters

import (
	"slices"

	"github.com/agentharness/harness/registry"
)

// Agent is one supported agent, everything harness knows of it in one
// value: who it is (Info: canonical id, aliases, product name, binaries,
// the npm package whose line in agents.lock pins its version, the
// credential variables and flags 'harness check' verifies), how it is
// driven (Driver: its command line and the parser of its output, one-shot
// or a session over stdio), how it runs as an ACP agent (ACP) and how
// --mock points it at the scripted model (Mock). Each agent's package declares one (claude.Agent, …) and
// harness.Register registers it; docs/adding-an-agent.md walks through one.
//
// An Agent is its Adapter: Name is Info.ID, Binaries Info.Binaries, and
// Command and NewParser are the Driver's.
type Agent struct {
	Info   registry.AgentInfo
	Driver Driver
	// Mock points the agent at the scripted model server for --mock (the
	// CLI's, never linked into the library): given the server's base URL
	// (no trailing slash), a throwaway HOME (created, and already set in
	// the agent's environment with PWD and the XDG base directories) and
	// the absolute work directory, it writes the agent's config under home
	// and returns the model id to run and the environment that points the
	// agent at baseURL (MockConfig helps). nil: the agent talks to its own
	// service only.
	Mock func(baseURL, home, workdir string) (model string, env []string, err error)
	// ACP is how the agent runs as an ACP agent (Task.Protocol "acp"):
	// nil when it has no ACP mode, which then needs its ACP command from
	// the configuration ([agents.NAME] command).
	ACP *ACP
	// PrivateTmp says the agent leaves files in its temporary directory
	// at every start and never removes them (OpenCode: its 5.4 MB native
	// library, under a new name each time), so that they would pile up in
	// the user's: each run of it, in either mode, gets a directory of its
	// own (Command.PrivateTmp).
	PrivateTmp bool
}

// ACP is how an agent is started as an ACP agent: over ACP the prompt,
// and the model where the agent allows it, go in the protocol, not on the
// command line.
type ACP struct {
	// Command starts the agent's ACP server; Command[0] is the binary's
	// name (--binary and [agents.NAME] binary replace it).
	Command []string
	// Model returns the arguments (after Command) and environment that
	// choose a model: ACP has no stable way to choose one, so each agent
	// has its own. nil: the model cannot be chosen over ACP (OpenCode's
	// ACP mode takes it from its config only) and is not passed.
	Model func(model string) (args, env []string)
	// CannotAsk says why a live session of the agent cannot have its
	// caller answer each permission request (permissions ask); "" when it
	// can.
	CannotAsk string
}

// Driver is how an agent is driven: an Adapter without the identity,
// which the Agent's Info gives.
type Driver interface {
	// Command is Adapter.Command.
	Command(binary string, t Task) (Command, error)
	// NewParser is Adapter.NewParser.
	NewParser() Parser
}

// Name is the canonical agent id, Info.ID.
func (a Agent) Name() string { return a.Info.ID }

// Binaries are Info.Binaries.
func (a Agent) Binaries() []string { return slices.Clone(a.Info.Binaries) }

// Command is the Driver's, with the Agent's PrivateTmp.
func (a Agent) Command(binary string, t Task) (Command, error) {
	c, err := a.Driver.Command(binary, t)
	c.PrivateTmp = c.PrivateTmp || a.PrivateTmp
	return c, err
}

// NewParser is the Driver's.
func (a Agent) NewParser() Parser { return a.Driver.NewParser() }
