package harness

import (
	"fmt"
	"slices"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/claude"
	"github.com/agentharness/harness/adapters/codex"
	"github.com/agentharness/harness/adapters/cursor"
	"github.com/agentharness/harness/adapters/gemini"
	"github.com/agentharness/harness/adapters/opencode"
	"github.com/agentharness/harness/registry"
)

// adapterList holds one adapter per supported agent, in display order.
var adapterList = []adapters.Adapter{
	claude.New(), codex.New(), cursor.New(), opencode.New(), gemini.New(),
}

// Adapters returns the adapters of every supported agent.
func Adapters() []adapters.Adapter { return slices.Clone(adapterList) }

// UnknownAgentError is returned for an agent name that is neither a
// canonical id nor an alias.
type UnknownAgentError struct{ Name string }

func (e *UnknownAgentError) Error() string {
	return fmt.Sprintf("unknown agent %q (known: %v)", e.Name, AgentNames())
}

// AgentNames returns the canonical ids of the supported agents, in display
// order.
func AgentNames() []string {
	names := make([]string, len(adapterList))
	for i, a := range adapterList {
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
	for _, a := range adapterList {
		if a.Name() == id {
			return a, nil
		}
	}
	return nil, &UnknownAgentError{Name: name}
}
