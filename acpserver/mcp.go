package acpserver

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentharness/harness"
)

// mcpWay is how an agent's command line takes stdio MCP servers: the
// arguments that give it servers, whose configuration (and secrets:
// their environment) it writes into dir, a private directory that lives
// as long as the run.
type mcpWay func(dir string, servers []acpsdk.McpServerStdio) ([]string, error)

// mcpWays are the agents that take MCP servers on their command line,
// driven by their CLI. Over ACP harness's own client gives the agent none
// (docs/acp.md), and the other CLIs read them from their configuration
// files only.
var mcpWays = map[string]struct {
	way mcpWay
	// name matches the server names the agent takes.
	name *regexp.Regexp
	// shellEnv: the servers' environment is set by sh (codexStart), which
	// takes names of its own shape only.
	shellEnv bool
}{
	"claude": {claudeMCP, regexp.MustCompile(`^.+$`), false},
	"codex":  {codexMCP, regexp.MustCompile(`^[A-Za-z0-9_-]+$`), true},
}

// mcpPlan is how a session's MCP servers reach its agent: the servers,
// given to each run by way. The zero plan gives none.
type mcpPlan struct {
	way     mcpWay
	servers []acpsdk.McpServerStdio
}

// planMCP is the plan for the servers of a session/new whose runs are t's:
// each server the agent does not take is named in a warning to log.
// ACP says every agent takes stdio servers; harness advertises neither
// http nor sse, and takes none of them.
func planMCP(t harness.Task, servers []acpsdk.McpServer, log *slog.Logger) mcpPlan {
	agent := t.Agent
	if a, err := harness.Lookup(t.Agent); err == nil {
		agent = a.Name()
	}
	w, ok := mcpWays[agent]
	if len(t.Command) > 0 || (t.Protocol != "" && t.Protocol != harness.ProtocolCLI) {
		ok = false
	}
	var plan mcpPlan
	if ok {
		plan.way = w.way
	}
	seen := map[string]bool{}
	for _, s := range servers {
		switch {
		case s.Stdio == nil:
			kind, name := "http", ""
			switch {
			case s.Http != nil:
				name = s.Http.Name
			case s.Sse != nil:
				kind, name = "sse", s.Sse.Name
			case s.Acp != nil:
				kind, name = "acp", s.Acp.Name
			}
			log.Warn("acp: an MCP server is not passed to the agent: harness acp takes stdio servers only", "server", name, "type", kind)
		case !ok:
			log.Warn("acp: an MCP server is not passed to the agent: harness passes them to claude and codex over their CLIs only (docs/acp.md)",
				"server", s.Stdio.Name, "agent", agent, "protocol", protocolName(t.Protocol))
		case !w.name.MatchString(s.Stdio.Name) || seen[s.Stdio.Name]:
			log.Warn("acp: an MCP server is not passed to the agent: its name is taken or not one the agent takes",
				"server", s.Stdio.Name, "agent", agent)
		case w.shellEnv && !envNames(s.Stdio.Env):
			log.Warn("acp: an MCP server is not passed to the agent: an environment variable's name is not a shell name",
				"server", s.Stdio.Name, "agent", agent)
		default:
			seen[s.Stdio.Name] = true
			plan.servers = append(plan.servers, *s.Stdio)
		}
	}
	return plan
}

// protocolName is p as a warning names it.
func protocolName(p string) string {
	if p == "" {
		return harness.ProtocolCLI
	}
	return p
}

var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// envNames reports whether every name of env is one a shell assigns:
// codex's servers get their environment from a file sh reads (codexMCP).
func envNames(env []acpsdk.EnvVariable) bool {
	for _, e := range env {
		if !shellName.MatchString(e.Name) {
			return false
		}
	}
	return true
}

// mcpFiles is the private directory of one run's MCP configuration.
type mcpFiles string

// remove removes the directory; the zero mcpFiles is none.
func (d mcpFiles) remove() {
	if d != "" {
		_ = os.RemoveAll(string(d))
	}
}

// apply adds the plan's servers to t's arguments, their configuration
// written into a directory of the run's own, which remove removes once
// the run is over.
func (p mcpPlan) apply(t *harness.Task) (mcpFiles, error) {
	if p.way == nil || len(p.servers) == 0 {
		return "", nil
	}
	dir, err := os.MkdirTemp("", "harness-acp-mcp-")
	if err != nil {
		return "", fmt.Errorf("mcp servers: %w", err)
	}
	args, err := p.way(dir, p.servers)
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("mcp servers: %w", err)
	}
	t.ExtraArgs = append(append([]string(nil), t.ExtraArgs...), args...)
	return mcpFiles(dir), nil
}

// claudeMCP gives Claude Code the servers in a file (--mcp-config takes
// a file or a JSON string): their environment never shows in its argv.
// "=": --mcp-config takes several values, and would take the next
// argument as another.
func claudeMCP(dir string, servers []acpsdk.McpServerStdio) ([]string, error) {
	type server struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env,omitempty"`
	}
	all := map[string]server{}
	for _, s := range servers {
		c := server{Type: "stdio", Command: s.Command, Args: s.Args}
		if c.Args == nil {
			c.Args = []string{}
		}
		for _, e := range s.Env {
			if c.Env == nil {
				c.Env = map[string]string{}
			}
			c.Env[e.Name] = e.Value
		}
		all[s.Name] = c
	}
	b, err := json.Marshal(map[string]any{"mcpServers": all})
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, err
	}
	return []string{"--mcp-config=" + path}, nil
}

// codexStart is the command codex starts each server with: sh reads the
// server's environment and command line from the file it is given ($0),
// then runs it. Codex takes servers as -c overrides of its configuration,
// on its command line: the environment (secrets) and arguments stay out
// of it.
const codexStart = `set -a; . "$0"; set +a; exec "$@"`

// codexMCP gives codex each server as -c mcp_servers.NAME.command and
// args, run through sh and a file (codexStart).
func codexMCP(dir string, servers []acpsdk.McpServerStdio) ([]string, error) {
	var args []string
	for i, s := range servers {
		var b strings.Builder
		for _, e := range s.Env {
			fmt.Fprintf(&b, "%s=%s\n", e.Name, shellQuote(e.Value))
		}
		b.WriteString("set --")
		for _, a := range append([]string{s.Command}, s.Args...) {
			b.WriteString(" " + shellQuote(a))
		}
		b.WriteString("\n")
		path := filepath.Join(dir, fmt.Sprintf("server-%d.sh", i))
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			return nil, err
		}
		start, _ := json.Marshal([]string{"-c", codexStart, path}) // a TOML array of strings, as JSON writes it
		args = append(args, "-c", "mcp_servers."+s.Name+`.command="/bin/sh"`, "-c", "mcp_servers."+s.Name+".args="+string(start))
	}
	return args, nil
}

// shellQuote quotes s for sh as one word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
