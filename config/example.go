package config

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentharness/harness/registry"
)

// exampleHeader opens harness.toml.example.
const exampleHeader = `# harness.toml — configuration for harness.
#
# harness reads, from lowest to highest precedence:
#   1. its built-in defaults (the values shown below),
#   2. the user file $XDG_CONFIG_HOME/harness/config.toml,
#   3. the nearest harness.toml in the current directory or a parent,
#   4. HARNESS_* environment variables (named next to each key),
#   5. command-line flags.
# Every key is optional. Durations are strings like "30s", "5m", "1h";
# "0" turns a budget off. An invalid value stops harness (exit 2) with the
# file and key; an unknown key is only a warning.
#
# ` + "`harness config init`" + ` writes this file; ` + "`harness config show`" + ` prints the values
# in effect and where each came from.
`

// exampleTables documents the structured tables, which are not rows of the
// settings table; agentsDoc opens them.
const exampleTables = `#
# [agents.claude]
# binary = "/opt/claude/bin/claude"   # executable path (a relative one is this file's) or name; default: looked up on PATH
# args = ["--max-turns", "20"]        # extra arguments, after harness's own
# env = { DISABLE_TELEMETRY = "1" }   # added to the agent's environment
# model = "opus"                      # this agent's default model (alias or id)

# [models] — model aliases and prices, over the builtin table and the user
# cache ($XDG_CACHE_HOME/harness/models.toml, ` + "`harness models update`" + `).
# Alias names and model ids ignore case: two in one file that differ only
# in case are an error; a later file's replaces an earlier file's.
#
# [models.aliases.fast]               # an alias: agent → that agent's model id
# codex = "gpt-5-mini"
# opencode = "openai/gpt-5-mini"
#
# [models.prices."gpt-5.5"]           # USD per million tokens, 0 to 1000000
# input = 5.0
# output = 30.0
# cache_read = 0.5
# cache_write = 0.0
`

// Example returns the text of harness.toml.example: every setting with its
// doc, environment variable and default. Keys with a default are written
// active (so the file, loaded as is, gives Defaults()); keys without one
// are commented out.
func Example() string {
	var b strings.Builder
	b.WriteString(exampleHeader)
	section := ""
	for _, s := range settings() {
		table, leaf := "", s.Key
		if i := strings.LastIndexByte(s.Key, '.'); i >= 0 {
			table, leaf = s.Key[:i], s.Key[i+1:]
		}
		if table != section {
			if table == "" {
				panic("config: top-level setting " + s.Key + " after a table")
			}
			fmt.Fprintf(&b, "\n[%s]\n", table)
			if doc, ok := tableDocs[table]; ok {
				fmt.Fprintf(&b, "# %s\n", doc)
			}
			section = table
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "# %s\n", s.Doc)
		env := "no environment variable"
		if s.Env != "" {
			env = "env " + s.Env
			if s.EnvInverts {
				env += " (set to 1 to turn off)"
			}
		}
		if s.Default == "" {
			fmt.Fprintf(&b, "# %s; unset by default.\n", env)
			fmt.Fprintf(&b, "# %s = %s\n", leaf, exampleValue(s, placeholder(s)))
			continue
		}
		fmt.Fprintf(&b, "# %s; default %s.\n", env, s.Default)
		fmt.Fprintf(&b, "%s = %s\n", leaf, exampleValue(s, s.Default))
	}
	b.WriteString("\n")
	b.WriteString(agentsDoc())
	b.WriteString(exampleTables)
	return b.String()
}

// agentsDoc opens the comment of [agents.NAME], naming the registered
// agents.
func agentsDoc() string {
	return comment("[agents.NAME] — how to start one agent (NAME: "+strings.Join(registry.AgentIDs(), ", ")+
		", or an alias). Every key is optional.", 72)
}

// comment wraps text into "# " lines of at most width characters (a
// longer word stands alone).
func comment(text string, width int) string {
	var b strings.Builder
	line := "#"
	for _, w := range strings.Fields(text) {
		if line != "#" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width {
			b.WriteString(line + "\n")
			line = "#"
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
	return b.String()
}

var tableDocs = map[string]string{
	"tool_timeouts": "Per-kind budgets of one tool call; while a call is open, the run's idle budget is at least this.",
	"mcp":           "Bounds on the budgets an MCP client may ask for when harness runs as an MCP server.",
	"bench":         "harness bench.",
}

func placeholder(s Setting) string {
	switch s.Kind {
	case KindDuration:
		return "10m"
	case KindPath:
		return "~/harness-logs"
	}
	switch s.Key {
	case "model":
		return "sonnet"
	case "otlp":
		// Uncommented as it stands, it must be a working endpoint: a bare
		// word would be taken for a host name.
		return "http://127.0.0.1:4318"
	}
	return "value"
}

func exampleValue(s Setting, v string) string {
	switch s.Kind {
	case KindBool, KindInt:
		return v
	}
	return fmt.Sprintf("%q", v)
}
