package harness

import (
	"fmt"
	"slices"
	"sync"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/claude"
	"github.com/agentharness/harness/adapters/codex"
	"github.com/agentharness/harness/adapters/cursor"
	"github.com/agentharness/harness/adapters/gemini"
	"github.com/agentharness/harness/adapters/opencode"
	"github.com/agentharness/harness/registry"
)

// Agent is one supported agent CLI, everything harness knows of it in one
// value: who it is (Info: canonical id, aliases, product name, the npm
// package whose line in agents.lock pins its version, the credential
// variables and flags 'harness check' verifies) and how it is driven
// (Adapter: its binaries, its command line, its native output, one-shot
// or a session over stdio). docs/adding-an-agent.md walks through one.
type Agent struct {
	Info    registry.AgentInfo
	Adapter adapters.Adapter
	// Mock points the agent at the scripted model server for --mock (the
	// CLI's, never linked into the library): given the server's base URL,
	// a throwaway HOME (already set in the agent's environment) and the
	// work directory, it writes the agent's config under home and returns
	// the model id to run and the environment that points the agent at
	// baseURL. nil: the agent talks to its own service only. The built-in
	// agents' wiring is mockmodel.Prepare's.
	Mock func(baseURL, home, workdir string) (model string, env []string, err error)
}

var (
	agentsMu sync.RWMutex
	// adapterList holds one adapter per supported agent, in display
	// order: the built-in five (whose Info is registry's built-in table),
	// then those registered.
	adapterList = []adapters.Adapter{claude.New(), codex.New(), cursor.New(), opencode.New(), gemini.New()}
	// mocks holds the Mock wiring of registered agents, by id.
	mocks = map[string]func(baseURL, home, workdir string) (string, []string, error){}
)

// Register adds an agent: from then on runs, bench, mcp, 'harness list'
// and 'check', the configuration and every help string that lists agents
// know it. Info.ID must be the adapter's Name; an id or alias already
// taken is an error. Register is meant for a program's start (an init
// function, a test's TestMain), before runs start.
func Register(a Agent) error {
	if a.Adapter == nil || a.Info.ID != a.Adapter.Name() {
		return fmt.Errorf("harness: register: Info.ID %q must be the adapter's name", a.Info.ID)
	}
	agentsMu.Lock()
	defer agentsMu.Unlock()
	if err := registry.Register(a.Info); err != nil {
		return fmt.Errorf("harness: register: %w", err)
	}
	adapterList = append(adapterList, a.Adapter)
	if a.Mock != nil {
		mocks[a.Info.ID] = a.Mock
	}
	return nil
}

// Lookup returns everything known of an agent, by id or alias.
func Lookup(name string) (Agent, error) {
	a, err := Adapter(name)
	if err != nil {
		return Agent{}, err
	}
	info, _ := registry.Agent(a.Name())
	agentsMu.RLock()
	defer agentsMu.RUnlock()
	return Agent{Info: info, Adapter: a, Mock: mocks[a.Name()]}, nil
}

// Adapters returns the adapters of every supported agent.
func Adapters() []adapters.Adapter {
	agentsMu.RLock()
	defer agentsMu.RUnlock()
	return slices.Clone(adapterList)
}

// UnknownAgentError is returned for an agent name that is neither a
// canonical id nor an alias.
type UnknownAgentError struct{ Name string }

func (e *UnknownAgentError) Error() string {
	return fmt.Sprintf("unknown agent %q (known: %v)", e.Name, AgentNames())
}

// AgentNames returns the canonical ids of the supported agents, in display
// order.
func AgentNames() []string {
	as := Adapters()
	names := make([]string, len(as))
	for i, a := range as {
		names[i] = a.Name()
	}
	return names
}

// Adapter returns the adapter for an agent id or alias ("claude-code",
// "cursor-agent", …).
func Adapter(name string) (adapters.Adapter, error) {
	id := name
	if info, ok := registry.Agent(name); ok {
		id = info.ID
	}
	for _, a := range Adapters() {
		if a.Name() == id {
			return a, nil
		}
	}
	return nil, &UnknownAgentError{Name: name}
}
