// Package registry answers lookups about the agent CLIs harness drives and
// the models they run: canonical agent ids and their aliases, the binaries,
// npm packages, credential variables and flags each agent relies on, model
// aliases resolved per agent, and list prices used to estimate a run's cost
// when the agent reports none.
//
// The package never prints and never touches the network on its own: Update
// takes the fetch function it uses. The agent table holds the built-in agents
// and those registered at start-up (Register);
// the model table is an embedded models.toml layered with a user cache and
// project overrides (see Load).
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
	// NPMPackage is the npm package that installs the CLI, or "" when the
	// CLI is not distributed on npm.
	NPMPackage string
	// CredentialEnv lists the environment variables the CLI reads its
	// credentials from, in the order the CLI prefers them. Any one set is
	// enough; none set may still work when the CLI has its own login.
	CredentialEnv []string
	// Flags are the flags (and subcommands) harness passes and relies on;
	// `harness check` verifies that the installed CLI's help mentions each.
	Flags []string
	// ModelPrefix is true when the agent expects "provider/model" ids
	// (OpenCode), which Price strips before looking up a price.
	ModelPrefix bool
}

// agents is the table, in the order `harness agents` lists them: the
// built-in agents, then those Register added.
// Sources: /work/shared/agents/formats.md and real-clis.md (flags as used
// headless), each CLI's --help of the versions captured there.
var agents = []AgentInfo{
	{
		ID: "claude", Display: "Claude Code",
		Aliases:       []string{"claude-code", "claudecode"},
		NPMPackage:    "@anthropic-ai/claude-code",
		CredentialEnv: []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"},
		Flags: []string{"--print", "--output-format", "--verbose", "--include-partial-messages",
			"--model", "--resume", "--dangerously-skip-permissions"},
	},
	{
		ID: "codex", Display: "OpenAI Codex CLI",
		Aliases:       []string{"openai-codex"},
		NPMPackage:    "@openai/codex",
		CredentialEnv: []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
		Flags: []string{"exec", "--json", "--skip-git-repo-check", "--model", "--sandbox",
			"--dangerously-bypass-approvals-and-sandbox", "--cd"},
	},
	{
		ID: "cursor", Display: "Cursor CLI",
		Aliases: []string{"cursor-agent", "agent"},
		// Cursor ships an installer script (cursor.com/install), not an npm package.
		NPMPackage:    "",
		CredentialEnv: []string{"CURSOR_API_KEY"},
		Flags:         []string{"--print", "--output-format", "--stream-partial-output", "--model", "--force", "--resume"},
	},
	{
		ID: "opencode", Display: "OpenCode",
		Aliases:    []string{"open-code"},
		NPMPackage: "opencode-ai",
		CredentialEnv: []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY",
			"GOOGLE_GENERATIVE_AI_API_KEY", "OPENROUTER_API_KEY"},
		Flags:       []string{"run", "--format", "--model", "--session"},
		ModelPrefix: true,
	},
	{
		ID: "gemini", Display: "Gemini CLI",
		Aliases:       []string{"gemini-cli"},
		NPMPackage:    "@google/gemini-cli",
		CredentialEnv: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
		Flags:         []string{"--prompt", "--output-format", "--model", "--yolo", "--approval-mode", "--resume"},
	},
}

// agentsMu guards agents, which Register extends.
var agentsMu sync.RWMutex

// Register adds an agent after the built-in ones (harness.Register calls
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
	a.CredentialEnv = slices.Clone(a.CredentialEnv)
	a.Flags = slices.Clone(a.Flags)
	return a
}
