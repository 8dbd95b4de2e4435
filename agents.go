package harness

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/claude"
	"github.com/agentharness/harness/adapters/codex"
	"github.com/agentharness/harness/adapters/cursor"
	"github.com/agentharness/harness/adapters/gemini"
	"github.com/agentharness/harness/adapters/opencode"
	"github.com/agentharness/harness/adapters/oracle"
	"github.com/agentharness/harness/registry"
)

// Agent is one supported agent, everything harness knows of it in one
// value: its identity (Info), how it is driven (Driver) and how --mock
// points it at the scripted model (Mock). An Agent is its adapter.
// docs/adding-an-agent.md walks through one.
type Agent = adapters.Agent

// builtins are the agents that ship with harness, in display order. Each
// package declares its whole agent; they are registered at start-up as a
// program registers its own (Register).
var builtins = []Agent{
	claude.Agent,
	codex.Agent,
	cursor.Agent,
	opencode.Agent,
	gemini.Agent,
	oracle.Agent, // runs a task's reference solution (bench sanity check)
	oracle.Nop,
}

func init() {
	registry.SetTable(agentTable{})
	for _, a := range builtins {
		if err := Register(a); err != nil {
			panic(err)
		}
	}
}

var (
	agentsMu sync.RWMutex
	// agents is the one table of agents, in display order: the order of
	// registration. The registry and the configuration answer from it
	// (agentTable).
	agents []Agent
)

// Register adds an agent: from then on runs, bench, mcp, 'harness list'
// and 'check', the configuration, the model table and every help string
// that lists agents know it. The agent needs a lowercase id, a Driver and
// at least one binary; an id or alias already taken is an error. Register
// is meant for a program's start (an init function, a test's TestMain),
// before runs start.
func Register(a Agent) error {
	if a.Driver == nil || len(a.Info.Binaries) == 0 {
		return fmt.Errorf("harness: register %q: an agent needs a Driver and a binary", a.Info.ID)
	}
	if a.Info.ID == "" || a.Info.ID != strings.ToLower(a.Info.ID) {
		return fmt.Errorf("harness: register: agent id %q: want a lowercase name", a.Info.ID)
	}
	agentsMu.Lock()
	defer agentsMu.Unlock()
	for _, n := range append([]string{a.Info.ID}, a.Info.Aliases...) {
		if _, ok := lookup(n); ok {
			return fmt.Errorf("harness: register: agent name %q is taken", n)
		}
	}
	a.Info = a.Info.Clone() // the caller's slices stay the caller's
	agents = append(agents, a)
	return nil
}

// lookup finds an agent by id or alias, case-insensitively; agentsMu held.
func lookup(name string) (Agent, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, a := range agents {
		if a.Info.ID == n || slices.Contains(a.Info.Aliases, n) {
			a.Info = a.Info.Clone() // a copy the caller may change
			return a, true
		}
	}
	return Agent{}, false
}

// Lookup returns an agent by id or alias.
func Lookup(name string) (Agent, error) {
	agentsMu.RLock()
	defer agentsMu.RUnlock()
	if a, ok := lookup(name); ok {
		return a, nil
	}
	return Agent{}, &UnknownAgentError{Name: name}
}

// agentTable is the registry's view of the table (registry.SetTable).
type agentTable struct{}

func (agentTable) Agent(name string) (registry.AgentInfo, bool) {
	a, err := Lookup(name)
	return a.Info, err == nil
}

func (agentTable) IDs() []string { return AgentNames() }

func (agentTable) Protocols() []string { return protocolNames() }

func (agentTable) TakesCommand(protocol string) bool { return TakesCommand(protocol) }

// Agents returns every supported agent, in display order.
func Agents() []Agent {
	agentsMu.RLock()
	defer agentsMu.RUnlock()
	out := slices.Clone(agents)
	for i := range out {
		out[i].Info = out[i].Info.Clone()
	}
	return out
}

// UnknownAgentError is returned for an agent name that is neither a
// canonical id nor an alias.
type UnknownAgentError struct{ Name string }

func (e *UnknownAgentError) Error() string {
	return fmt.Sprintf("unknown agent %q (known: %s)", e.Name, strings.Join(AgentNames(), ", "))
}

// AgentNames returns the canonical ids of the supported agents, in display
// order.
func AgentNames() []string {
	agentsMu.RLock()
	defer agentsMu.RUnlock()
	names := make([]string, len(agents))
	for i, a := range agents {
		names[i] = a.Info.ID
	}
	return names
}

// Adapter returns the adapter for an agent id or alias ("claude-code",
// "cursor-agent", …).
func Adapter(name string) (adapters.Adapter, error) {
	a, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return a, nil
}
