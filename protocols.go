package harness

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentharness/harness/acp"
	"github.com/agentharness/harness/adapters"
)

// Protocols of a Task.
const (
	ProtocolCLI = "cli"
	ProtocolACP = acp.Protocol
)

// protocols drive agents otherwise than by their CLI adapters, by
// Task.Protocol: each gives the adapter of a run from the agent's name,
// its CLI adapter (nil for an agent harness has none for, which command
// then starts) and the task's Command. This table is all the library
// knows of them: what an entry returns runs as any adapter does (a
// session over stdio, adapters.Session), as the built-in agents'
// adapters are listed in agents.go.
var protocols = map[string]func(name string, base adapters.Adapter, command []string) (adapters.Adapter, error){
	ProtocolACP: acp.For,
}

// protocolAdapter is the adapter of t's agent for t's protocol.
func protocolAdapter(t Task) (adapters.Adapter, error) {
	if t.Protocol == "" || t.Protocol == ProtocolCLI {
		return Adapter(t.Agent)
	}
	adapterFor, ok := protocols[t.Protocol]
	if !ok {
		names := append([]string{ProtocolCLI}, slices.Sorted(maps.Keys(protocols))...)
		return nil, fmt.Errorf("protocol %q: want %s", t.Protocol, strings.Join(names, " or "))
	}
	base, err := Adapter(t.Agent)
	if err != nil && len(t.Command) == 0 {
		return nil, err // neither known nor given by its command
	}
	return adapterFor(t.Agent, base, t.Command)
}
