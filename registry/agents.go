// Package registry answers lookups about the agent CLIs harness drives and
// the models they run: canonical agent ids and their aliases, the binaries,
// npm packages, credential variables and flags each agent relies on, model
// aliases resolved per agent, and list prices used to estimate a run's cost
// when the agent reports none.
//
// The package never prints and never touches the network on its own: Update
// takes the fetch function it uses. The agent table is the harness
// package's, which it installs (SetTable): a program that imports harness
// has the built-in agents, whose identities live in their adapter
// packages. The model table is an embedded models.toml layered with a
// user cache and project overrides (see Load).
package registry

import "slices"

// AgentInfo describes one agent CLI. Agent returns copies, whose slices
// callers may modify.
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

// Table is the table of agents the registry answers from. The harness
// package owns the one table (harness.Register fills it, starting with the
// built-in agents, whose identities are declared in their adapter
// packages, adapters/NAME) and installs it with SetTable at its
// initialisation: a program that does not import harness knows no agent.
type Table interface {
	// Agent returns the agent named by its canonical id or one of its
	// aliases, case-insensitively, as a copy the caller may change, and
	// whether there is one.
	Agent(name string) (AgentInfo, bool)
	// IDs returns the canonical ids, in the order 'harness list' shows.
	IDs() []string
	// Protocols returns the names of the protocols agents are driven by
	// (harness.Task.Protocol), the default first.
	Protocols() []string
	// TakesCommand reports whether a protocol starts an agent from a
	// command of its own, so that a name no agent has is an agent when its
	// configuration gives that command. An unknown protocol takes none.
	TakesCommand(protocol string) bool
}

// table is the installed Table; nil until SetTable.
var table Table

// SetTable installs the agent table the registry answers from. It is
// meant for the table's owner, the harness package, at its
// initialisation, before any lookup.
func SetTable(t Table) { table = t }

// Agent returns the agent named by its canonical id or one of its aliases,
// case-insensitively, and whether there is one.
func Agent(name string) (AgentInfo, bool) {
	if table == nil {
		return AgentInfo{}, false
	}
	return table.Agent(name)
}

// Canonical returns the canonical id for name (an id or alias), or "" and
// false when no agent has that name.
func Canonical(name string) (string, bool) {
	a, ok := Agent(name)
	return a.ID, ok
}

// AgentIDs returns the canonical ids, in the order 'harness list' shows.
func AgentIDs() []string {
	if table == nil {
		return nil
	}
	return table.IDs()
}

// Protocols returns the names of the protocols agents are driven by, the
// default first (Table.Protocols); none before SetTable.
func Protocols() []string {
	if table == nil {
		return nil
	}
	return table.Protocols()
}

// TakesCommand reports whether a protocol starts an agent from a command of
// its own (Table.TakesCommand); none does before SetTable.
func TakesCommand(protocol string) bool {
	return table != nil && table.TakesCommand(protocol)
}

// CommandProtocols returns the protocols that start an agent from a
// command of its own (TakesCommand), in the order of Protocols.
func CommandProtocols() []string {
	var takes []string
	for _, p := range Protocols() {
		if TakesCommand(p) {
			takes = append(takes, p)
		}
	}
	return takes
}

// Clone returns a copy of a whose slices are its own.
func (a AgentInfo) Clone() AgentInfo {
	a.Aliases = slices.Clone(a.Aliases)
	a.Binaries = slices.Clone(a.Binaries)
	a.CredentialEnv = slices.Clone(a.CredentialEnv)
	a.Flags = slices.Clone(a.Flags)
	return a
}
