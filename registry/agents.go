// Package registry answers lookups about the agent CLIs harness drives and
// the models they run: canonical agent ids and their aliases, the binaries,
// npm packages, credential variables and flags each agent relies on, model
// aliases resolved per agent, and list prices used to estimate a run's cost
// when the agent reports none.
//
// The package never prints and never touches the network on its own: Update
// takes the fetch function it uses. The agent table holds the agents
// registered at start-up (Register): a program that imports the harness
// package has the built-in ones, whose identities live in their adapter
// packages. The model table is an embedded models.toml layered with a
// user cache and project overrides (see Load).
package registry

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// AgentInfo describes one agent CLI. Slices are owned by the registry:
// Agent and Agents return copies, so callers may modify them.
type AgentInfo struct {
	// ID is the canonical id used in events and configuration ("claude").
	ID string
	// Display is the product name for people ("Claude Code").
	Display string
	// Aliases are other names accepted for ID on the command line and in
	// config files, lowercase.
	Aliases []string
	// Binaries are the executable names to look for, in order.
	Binaries []string
	// NPMPackage is the npm package that installs the CLI, or "" when the
	// CLI is not distributed on npm.
	NPMPackage string
	// CredentialEnv lists the environment variables the CLI reads its
	// credentials from, in the order the CLI prefers them. Any one set is
	// enough; none set may still work when the CLI has its own login.
	CredentialEnv []string
	// Flags are the flags (and subcommands) harness passes and relies on;
	// `harness check` verifies that the installed CLI's help mentions each
	// (the built-in agents': as the --help of the version pinned in
	// agents.lock lists them, used headless).
	Flags []string
	// ModelPrefix is true when the agent expects "provider/model" ids
	// (OpenCode), which Price strips before looking up a price.
	ModelPrefix bool
}

// agents is the table, in the order `harness list` shows them: the order
// of registration, which starts with the built-in agents (the harness
// package registers them at its initialisation; each agent's identity is
// declared in its adapter package, adapters/NAME).
var agents []AgentInfo

// agentsMu guards agents, which Register extends.
var agentsMu sync.RWMutex

// Register adds an agent after those already known (harness.Register calls
// it: use that, which also registers the agent's adapter). An empty id, or
// an id or alias another agent already answers to, is an error.
func Register(a AgentInfo) error {
	if a.ID == "" || a.ID != strings.ToLower(a.ID) {
		return fmt.Errorf("registry: agent id %q: want a lowercase name", a.ID)
	}
	agentsMu.Lock()
	defer agentsMu.Unlock()
	for _, n := range append([]string{a.ID}, a.Aliases...) {
		if _, ok := lookup(n); ok {
			return fmt.Errorf("registry: agent name %q is taken", n)
		}
	}
	agents = append(agents, a.clone())
	return nil
}

// Agent returns the agent named by its canonical id or one of its aliases,
// case-insensitively, and whether there is one.
func Agent(name string) (AgentInfo, bool) {
	agentsMu.RLock()
	defer agentsMu.RUnlock()
	return lookup(name)
}

func lookup(name string) (AgentInfo, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, a := range agents {
		if a.ID == n || slices.Contains(a.Aliases, n) {
			return a.clone(), true
		}
	}
	return AgentInfo{}, false
}

// Canonical returns the canonical id for name (an id or alias), or "" and
// false when no agent has that name.
func Canonical(name string) (string, bool) {
	a, ok := Agent(name)
	return a.ID, ok
}

// Agents returns every known agent, in a stable order.
func Agents() []AgentInfo {
	agentsMu.RLock()
	defer agentsMu.RUnlock()
	out := make([]AgentInfo, len(agents))
	for i, a := range agents {
		out[i] = a.clone()
	}
	return out
}

// AgentIDs returns the canonical ids, in the order of Agents.
func AgentIDs() []string {
	agentsMu.RLock()
	defer agentsMu.RUnlock()
	out := make([]string, len(agents))
	for i, a := range agents {
		out[i] = a.ID
	}
	return out
}

func (a AgentInfo) clone() AgentInfo {
	a.Aliases = slices.Clone(a.Aliases)
	a.Binaries = slices.Clone(a.Binaries)
	a.CredentialEnv = slices.Clone(a.CredentialEnv)
	a.Flags = slices.Clone(a.Flags)
	return a
}
