package harness

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/agentharness/harness/acp"
	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/claude"
	"github.com/agentharness/harness/adapters/codex"
)

// Protocols of a Task.
const (
	ProtocolCLI = "cli"
	ProtocolACP = acp.Protocol
	// ProtocolStreamJSON is Claude Code's own two-way protocol: user
	// messages and control requests as JSON lines on its stdin.
	ProtocolStreamJSON = claude.Protocol
	// ProtocolAppServer is Codex's own two-way protocol (codex app-server).
	ProtocolAppServer = codex.AppServerProtocol
)

// protocol is one way of driving agents, Task.Protocol.
type protocol struct {
	name string
	// adapter gives the adapter of a run from the agent's name, the agent
	// (nil for one harness does not know, which command then starts) and
	// the task's Command. What it returns runs as any adapter does (a
	// session over stdio, adapters.Session).
	adapter func(name string, base *adapters.Agent, command []string) (adapters.Adapter, error)
	// command: the protocol starts an agent from a command of its own
	// (Task.Command, [agents.NAME] command), even an agent harness has no
	// adapter for.
	command bool
	// owner is the agent whose own protocol this is: a live session of
	// it uses this one unless told otherwise (LiveProtocol).
	owner string
	// live: it holds a live session of many turns (StartSession).
	live bool
	// sniff reports whether the first native line of a session log was
	// written over this protocol: for logs from before the session's
	// metadata recorded its protocol (logger.Meta.Protocol). nil: none
	// such exist.
	sniff func(first []byte) bool
}

// protocols is all the library knows of the protocols, in the order an
// error lists them; the first, the agents' CLIs as their adapters
// (agents.go) drive them, is the default.
var protocols = []protocol{
	{name: ProtocolCLI, adapter: cliAdapter},
	{name: ProtocolACP, adapter: acp.For, command: true, live: true,
		// An ACP session's lines are JSON-RPC messages: no CLI prints those.
		sniff: func(first []byte) bool { return bytes.Contains(first, []byte(`"jsonrpc"`)) }},
	// Its log reads as the CLI's does (a run's logs record the protocol).
	{name: ProtocolStreamJSON, adapter: ownAdapter(ProtocolStreamJSON, claude.Agent.Info.ID, claude.Live), owner: claude.Agent.Info.ID,
		live: true},
	{name: ProtocolAppServer, adapter: codex.AppServer, owner: codex.Agent.Info.ID, live: true},
}

// ownAdapter is the adapter of an agent's own protocol: the agent, driven
// by driver; no other agent speaks it.
func ownAdapter(protocol, owner string, driver adapters.Driver) func(string, *adapters.Agent, []string) (adapters.Adapter, error) {
	return func(name string, base *adapters.Agent, _ []string) (adapters.Adapter, error) {
		if base == nil || base.Name() != owner {
			return nil, fmt.Errorf("protocol %q is %s's own: %s does not speak it", protocol, owner, name)
		}
		a := *base
		a.Driver = driver
		return a, nil
	}
}

// LiveProtocol is the protocol of a live session of agent (a canonical
// id) when none is given: the agent's own two-way protocol where harness
// speaks it, else ACP.
func LiveProtocol(agent string) string {
	for _, p := range protocols {
		if p.owner != "" && p.owner == agent {
			return p.name
		}
	}
	return ProtocolACP
}

// Protocol is what the protocol table says of one protocol to those
// that offer a choice of them (the CLI's flags).
type Protocol struct {
	Name string
	// Owner is the agent whose own protocol it is; "" when any agent may
	// speak it.
	Owner string
	// Live: it holds a live session (Settings.StartSession).
	Live bool
}

// Protocols returns the protocols, the default first.
func Protocols() []Protocol {
	out := make([]Protocol, len(protocols))
	for i, p := range protocols {
		out[i] = Protocol{Name: p.name, Owner: p.owner, Live: p.live}
	}
	return out
}

// LiveAgents returns the ids of the registered agents that can hold a
// live session as they are, in display order: those with an ACP mode or
// a live protocol of their own. Any other needs its ACP command from the
// configuration ([agents.NAME] command).
func LiveAgents() []string {
	var ids []string
	for _, a := range Agents() {
		if a.ACP != nil || slices.ContainsFunc(protocols, func(p protocol) bool { return p.live && p.owner == a.Name() }) {
			ids = append(ids, a.Name())
		}
	}
	return ids
}

func cliAdapter(_ string, base *adapters.Agent, _ []string) (adapters.Adapter, error) {
	return *base, nil
}

// protocolNames are the protocols' names, the default first.
func protocolNames() []string {
	names := make([]string, len(protocols))
	for i, p := range protocols {
		names[i] = p.name
	}
	return names
}

// protocolNamed is the protocol of that name ("" is the CLI's).
func protocolNamed(name string) (protocol, error) {
	if name == "" {
		return protocols[0], nil
	}
	for _, p := range protocols {
		if p.name == name {
			return p, nil
		}
	}
	return protocol{}, fmt.Errorf("protocol %q: want %s", name, strings.Join(protocolNames(), " or "))
}

// TakesCommand reports whether a protocol starts an agent from a command
// of its own (Task.Command, [agents.NAME] command), so that a name
// harness has no adapter for is an agent when the configuration gives
// its command. An unknown protocol takes none.
func TakesCommand(protocol string) bool {
	p, err := protocolNamed(protocol)
	return err == nil && p.command
}

// LoggedProtocol is the protocol a session log was written over, for
// re-normalizing its native lines: recorded, the one its metadata names
// (logger.Meta.Protocol), or for a log without one (the CLI's, or one
// older than that field) the protocol its first native line shows, the
// CLI's when none does.
func LoggedProtocol(recorded string, native []byte) string {
	if recorded != "" {
		return recorded
	}
	first, _, _ := bytes.Cut(native, []byte("\n"))
	for _, p := range protocols {
		if p.sniff != nil && p.sniff(first) {
			return p.name
		}
	}
	return ""
}

// protocolAdapter is the adapter of t's agent for t's protocol.
func protocolAdapter(t Task) (adapters.Adapter, error) {
	p, err := protocolNamed(t.Protocol)
	if err != nil {
		return nil, err
	}
	a, err := Lookup(t.Agent)
	if err != nil {
		if !p.command || len(t.Command) == 0 {
			return nil, err // neither known nor given by its command
		}
		return p.adapter(t.Agent, nil, t.Command)
	}
	return p.adapter(t.Agent, &a, t.Command)
}

// loggedProtocol is what a session's metadata records of its protocol:
// nothing for the CLI's, the default, so that a CLI run's metadata is what
// it was before the field (LoggedProtocol reads either back).
func loggedProtocol(name string) string {
	if name == ProtocolCLI {
		return ""
	}
	return name
}
