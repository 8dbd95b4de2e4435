package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/registry"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite ../harness.toml.example from Example()")

func write(t *testing.T, path, body string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	return path
}

func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{
		"0": 0, "5m": 5 * time.Minute, "30s": 30 * time.Second, "1h30m": 90 * time.Minute, " 2s ": 2 * time.Second, "0s": 0,
	} {
		d, err := ParseDuration(in)
		require.NoError(t, err, in)
		require.Equal(t, want, d.D(), in)
	}
	for _, in := range []string{"5 minutes", "", "-1s", "5", "1d"} {
		_, err := ParseDuration(in)
		require.Error(t, err, in)
	}
	for d, want := range map[Duration]string{0: "0", Duration(5 * time.Minute): "5m", Duration(time.Hour): "1h",
		Duration(90 * time.Second): "1m30s", Duration(45 * time.Second): "45s", Duration(90 * time.Minute): "1h30m0s", Duration(1500 * time.Millisecond): "1.5s"} {
		require.Equal(t, want, d.String())
		back, err := ParseDuration(d.String())
		require.NoError(t, err)
		require.Equal(t, d, back, "String round-trips")
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c := Defaults()
	require.Equal(t, "claude", c.Agent)
	require.Equal(t, FullAccess, c.Permissions)
	require.Equal(t, "ndjson", c.Format)
	require.True(t, c.Log)
	require.Equal(t, 5*time.Minute, c.IdleTimeout.D())
	require.Equal(t, 30*time.Second, c.IdleWarning.D())
	require.Equal(t, 60*time.Minute, c.Timeout.D())
	require.Equal(t, 3*time.Second, c.Linger.D())
	require.Equal(t, 5*time.Second, c.KillGrace.D())
	for kind, want := range map[string]time.Duration{"mcp": 120 * time.Second, "read": time.Minute,
		"search": time.Minute, "todo": time.Minute, "shell": 300 * time.Second, "edit": 300 * time.Second} {
		require.Equal(t, want, c.ToolBudget(kind).D(), kind)
	}
	require.Equal(t, 0, c.Bench.Parallel, "0: the number of cores")
	for _, v := range c.Values() {
		require.NotEmpty(t, v.Origin, v.Key)
	}
}

func TestSettingsTable(t *testing.T) {
	t.Parallel()
	seenKey, seenEnv := map[string]bool{}, map[string]bool{}
	for _, s := range settings() {
		require.False(t, seenKey[s.Key], "duplicate key %s", s.Key)
		seenKey[s.Key] = true
		require.NotEmpty(t, s.Doc, s.Key)
		require.NotContains(t, s.Doc, "\n", s.Key)
		require.True(t, strings.HasPrefix(s.Env, "HARNESS_"), s.Key)
		require.False(t, seenEnv[s.Env], "duplicate env %s", s.Env)
		seenEnv[s.Env] = true
	}
	for _, env := range []string{"HARNESS_IDLE_TIMEOUT", "HARNESS_TIMEOUT", "HARNESS_TOOL_TIMEOUT", "HARNESS_LINGER",
		"HARNESS_KILL_GRACE", "HARNESS_AGENT", "HARNESS_MODEL", "HARNESS_PERMISSIONS", "HARNESS_FORMAT",
		"HARNESS_LOG_DIR", "HARNESS_NO_LOG"} {
		require.True(t, seenEnv[env], env)
	}
}

func TestExampleFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "harness.toml.example")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(Example()), 0o644))
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, Example(), string(data), "harness.toml.example is stale: go test ./config -update")

	t.Run("loads-to-defaults", func(t *testing.T) {
		t.Parallel()
		c, warns, err := Load(LoadOptions{ProjectFile: path})
		require.NoError(t, err)
		require.Empty(t, warns)
		want := Defaults()
		require.Equal(t, want.Values()[0].Value, c.Values()[0].Value)
		for i, v := range c.Values() {
			require.Equal(t, want.Values()[i].Value, v.Value, v.Key)
		}
		c.Files, c.Origins, want.Origins = nil, nil, nil
		require.Equal(t, want, c)
	})
	t.Run("mentions-every-key", func(t *testing.T) {
		t.Parallel()
		// section → the leaf keys written (active or commented) under it
		keys := map[string]bool{}
		section := ""
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "[") {
				section = strings.Trim(line, "[]")
				continue
			}
			l := strings.TrimPrefix(line, "# ")
			if k, _, ok := strings.Cut(l, " = "); ok && !strings.Contains(k, " ") {
				if section != "" {
					k = section + "." + k
				}
				keys[k] = true
			}
		}
		for _, s := range settings() {
			require.True(t, keys[s.Key], "example lacks %s", s.Key)
			require.Contains(t, string(data), s.Env, s.Key)
			require.Contains(t, string(data), s.Doc, s.Key)
		}
		for _, k := range []string{"binary", "args", "env", "model", "aliases", "prices"} {
			require.Contains(t, string(data), k)
		}
	})
}

func TestPrecedence(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	user := write(t, filepath.Join(root, "xdg", "harness", "config.toml"), `
agent = "codex"
idle_timeout = "10m"
timeout = "2h"
pty = true
[tool_timeouts]
shell = "7m"
[agents.claude]
binary = "/opt/claude"
env = { A = "1" }
`)
	project := write(t, filepath.Join(root, "repo", ProjectFileName), `
idle_timeout = "2m"
format = "text"
[agents.claude-code]
args = ["--max-turns", "3"]
[mcp]
hard_max = "3h"
`)
	cwd := filepath.Join(root, "repo", "sub", "deeper")
	require.NoError(t, os.MkdirAll(cwd, 0o755))
	env := envMap(map[string]string{"HARNESS_TIMEOUT": "0", "HARNESS_NO_LOG": "1", "HARNESS_AGENT": "gemini-cli"})

	c, warns, err := Load(LoadOptions{Cwd: cwd, UserFile: user, Getenv: env})
	require.NoError(t, err)
	require.Empty(t, warns)
	require.Equal(t, []string{user, project}, c.Files)
	require.Equal(t, "gemini", c.Agent, "env over user, canonicalized")
	require.Equal(t, 2*time.Minute, c.IdleTimeout.D(), "project over user")
	require.Equal(t, Duration(0), c.Timeout, "env 0 turns the budget off")
	require.True(t, c.PTY, "user over default")
	require.False(t, c.Log)
	require.Equal(t, "text", c.Format)
	require.Equal(t, 7*time.Minute, c.ToolBudget("shell").D())
	require.Equal(t, 3*time.Hour, c.MCP.HardMax.D())
	require.Equal(t, AgentConfig{Binary: "/opt/claude", Env: map[string]string{"A": "1"}, Args: []string{"--max-turns", "3"}},
		c.Agents["claude"], "agent tables merge field by field")
	require.Equal(t, "env HARNESS_AGENT", c.Origins["agent"])
	require.Equal(t, filepath.Join("..", "..", ProjectFileName), c.Origins["idle_timeout"])
	require.Equal(t, user, c.Origins["pty"])
	require.Equal(t, "default", c.Origins["linger"])

	t.Run("flags-over-everything", func(t *testing.T) {
		t.Parallel()
		c := c.Clone()
		require.NoError(t, c.Set("idle_timeout", "45s", "flag --idle-timeout"))
		require.Equal(t, 45*time.Second, c.IdleTimeout.D())
		require.Equal(t, "flag --idle-timeout", c.Origins["idle_timeout"])
		err := c.Set("idle_timeout", "-5s", "flag --idle-timeout")
		var ce *Error
		require.ErrorAs(t, err, &ce)
		require.Equal(t, `flag --idle-timeout: idle_timeout: "-5s" is negative (use "0" to turn it off)`, err.Error())
		require.Error(t, c.Set("nope", "1", "flag --nope"))
	})
	t.Run("no-files", func(t *testing.T) {
		t.Parallel()
		c, warns, err := Load(LoadOptions{Cwd: root, UserFile: filepath.Join(root, "missing.toml")})
		require.NoError(t, err)
		require.Empty(t, warns)
		require.Empty(t, c.Files)
	})
	t.Run("explicit-project-file", func(t *testing.T) {
		t.Parallel()
		other := write(t, filepath.Join(t.TempDir(), "custom.toml"), `linger = "1s"`)
		c, _, err := Load(LoadOptions{Cwd: cwd, ProjectFile: other})
		require.NoError(t, err)
		require.Equal(t, time.Second, c.Linger.D())
		require.Equal(t, []string{other}, c.Files)
	})
}

func TestFindProject(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	p := write(t, filepath.Join(root, "a", ProjectFileName), "")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "a", "b", "c"), 0o755))
	got, err := FindProject(filepath.Join(root, "a", "b", "c"))
	require.NoError(t, err)
	require.Equal(t, p, got)
	// A directory by that name is found, not skipped for the one above:
	// Load refuses it (TestProjectFileThatIsADirectory).
	dir := filepath.Join(root, "a", "b", ProjectFileName)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	got, err = FindProject(filepath.Join(root, "a", "b", "c"))
	require.NoError(t, err)
	require.Equal(t, dir, got)
	got, err = FindProject(root)
	require.NoError(t, err)
	require.Empty(t, got, "walks up to / and finds nothing above the temp dir") // unless / has a harness.toml
}

func TestInvalidValues(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, body, want string }{
		{"duration-words", `idle_timeout = "5 minutes"`,
			`harness.toml: idle_timeout: "5 minutes" is not a duration (use e.g. "5m", or "0" to turn it off)`},
		{"negative", `timeout = "-1m"`, `harness.toml: timeout: "-1m" is negative (use "0" to turn it off)`},
		{"bare-number", `linger = 5`, `harness.toml: linger: "5" is not a duration`},
		{"permission", `permissions = "yolo"`, `harness.toml: permissions: "yolo" is not a permission mode (use "full-access" or "read-only")`},
		{"format", `format = "xml"`, `harness.toml: format: "xml" is not a format (use "ndjson", "text" or "json")`},
		{"agent", `agent = "aider"`, `harness.toml: agent: "aider" is not a known agent (known: claude, codex, cursor, opencode, gemini, oracle, nop)`},
		{"agent-table", "[agents.aider]\nbinary = \"x\"", `harness.toml: agents.aider: "aider" is not a known agent`},
		{"agent-field-type", "[agents.codex]\nargs = \"--x\"", `harness.toml: agents.codex.args: must be an array of strings`},
		{"bool", `pty = "maybe"`, `harness.toml: pty: "maybe" is not a boolean`},
		{"parallel", "[bench]\nparallel = -1", `harness.toml: bench.parallel: -1 is not a number of parallel runs`},
		{"tool-kind", "[tool_timeouts]\nmcp = \"soon\"", `harness.toml: tool_timeouts.mcp: "soon" is not a duration`},
		{"array", `timeout = ["5m"]`, `harness.toml: timeout: is an array, not a single value`},
		{"date", `timeout = 2026-01-01`, `harness.toml: timeout: is a date or time, not a single value`},
		{"inline-table", `timeout = { x = 1 }`, `harness.toml: timeout: is a table, not a single value`},
		{"mcp-bounds", "[mcp]\nidle_min = \"1h\"\nidle_max = \"1m\"", `harness.toml: mcp.idle_min: "1h" is greater than mcp.idle_max`},
		{"models-agent", "[models.aliases.x]\naider = \"m\"", `harness.toml: models.aliases.x: unknown agent "aider"`},
		{"models-price", "[models.prices.m]\ninput = -1", `harness.toml: models.prices.m.input: -1 is not a price`},
		{"syntax", "idle_timeout = \"5m", `harness.toml:1:`},
		{"env-empty-name", "[agents.claude]\nenv = { \"\" = \"x\" }", `harness.toml: agents.claude.env: an empty variable name`},
		{"env-name-with-equals", "[agents.claude]\nenv = { \"A=B\" = \"x\" }", `harness.toml: agents.claude.env: "A=B": a variable name cannot hold "="`},
		{"env-nul", "[agents.claude]\nenv = { A = \"x\\u0000y\" }", `harness.toml: agents.claude.env: "A": a NUL byte`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			write(t, filepath.Join(dir, ProjectFileName), c.body)
			_, _, err := Load(LoadOptions{Cwd: dir})
			require.Error(t, err)
			var ce *Error
			require.True(t, errors.As(err, &ce), "%T", err)
			require.Equal(t, 2, ce.ExitCode())
			require.Contains(t, err.Error(), c.want)
		})
	}
}

func TestInvalidEnv(t *testing.T) {
	t.Parallel()
	for env, want := range map[string]string{
		"HARNESS_IDLE_TIMEOUT":   `env HARNESS_IDLE_TIMEOUT: idle_timeout: "forever" is not a duration`,
		"HARNESS_PERMISSIONS":    `env HARNESS_PERMISSIONS: permissions: "forever" is not a permission mode`,
		"HARNESS_NO_LOG":         `env HARNESS_NO_LOG: log: "forever" is not a boolean`,
		"HARNESS_TOOL_TIMEOUT":   `env HARNESS_TOOL_TIMEOUT: tool_timeout: "forever" is not a duration`,
		"HARNESS_AGENT":          `env HARNESS_AGENT: agent: "forever" is not a known agent`,
		"HARNESS_BENCH_PARALLEL": `env HARNESS_BENCH_PARALLEL: bench.parallel: "forever" is not a number`,
	} {
		t.Run(env, func(t *testing.T) {
			t.Parallel()
			_, _, err := Load(LoadOptions{Getenv: envMap(map[string]string{env: "forever"})})
			var ce *Error
			require.ErrorAs(t, err, &ce)
			require.Contains(t, err.Error(), want)
		})
	}
}

func TestUnknownKeysWarn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, ProjectFileName), `
idle-timeout = "5m"
colour = "always"
[mcp]
idle_minimum = "1s"
[telemetry]
on = true
[agents.codex]
binnary = "codex"
`)
	c, warns, err := Load(LoadOptions{Cwd: dir})
	require.NoError(t, err)
	var got []string
	for _, w := range warns {
		require.Equal(t, ProjectFileName, w.Source)
		got = append(got, w.String())
	}
	require.ElementsMatch(t, []string{
		"harness.toml: idle-timeout: unknown key (ignored); did you mean idle_timeout?",
		"harness.toml: colour: unknown key (ignored)",
		"harness.toml: mcp.idle_minimum: unknown key (ignored)",
		"harness.toml: telemetry: unknown table (ignored)",
		"harness.toml: agents.codex.binnary: unknown key (ignored); known: binary, args, env, model, protocol, command",
	}, got)
	require.Equal(t, Defaults().IdleTimeout, c.IdleTimeout)
}

func TestModelsOverrides(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	user := write(t, filepath.Join(root, "user.toml"), `
[models.aliases.fast]
codex = "gpt-5-mini"
[models.prices.gpt-5-mini]
input = 9
output = 9
`)
	write(t, filepath.Join(root, "p", ProjectFileName), `
[models.aliases.fast]
opencode = "openai/gpt-5-mini"
[models.prices."gpt-5.5"]
input = 5
output = 30
`)
	c, _, err := Load(LoadOptions{Cwd: filepath.Join(root, "p"), UserFile: user})
	require.NoError(t, err)
	m, err := registry.Load("", &c.Models)
	require.NoError(t, err)
	id, ok := m.Resolve("fast", "codex")
	require.True(t, ok)
	require.Equal(t, "gpt-5-mini", id)
	id, ok = m.Resolve("fast", "opencode")
	require.True(t, ok)
	require.Equal(t, "openai/gpt-5-mini", id)
	p, ok := m.Price("gpt-5.5")
	require.True(t, ok)
	require.Equal(t, 30.0, p.Output)
	p, _ = m.Price("gpt-5-mini")
	require.Equal(t, 9.0, p.Input)
}

func TestDefaultUserFile(t *testing.T) {
	t.Parallel()
	require.Equal(t, "/cfg/harness/config.toml",
		DefaultUserFile(envMap(map[string]string{"XDG_CONFIG_HOME": "/cfg"})))
}

func TestAgentProtocol(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "harness.toml")
	require.NoError(t, os.WriteFile(path, []byte("[agents.codex]\nprotocol = \"acp\"\ncommand = [\"my-codex-acp\", \"--x\"]\n"), 0o644))
	c, _, err := Load(LoadOptions{ProjectFile: path, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	require.Equal(t, "acp", c.Agents["codex"].Protocol)
	require.Equal(t, []string{"my-codex-acp", "--x"}, c.Agents["codex"].Command)
	require.NoError(t, os.WriteFile(path, []byte("[agents.codex]\nprotocol = \"tcp\"\n"), 0o644))
	_, _, err = Load(LoadOptions{ProjectFile: path, Getenv: func(string) string { return "" }})
	require.ErrorContains(t, err, "agents.codex.protocol")
}

func TestCustomACPAgent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "harness.toml")
	noEnv := func(string) string { return "" }
	require.NoError(t, os.WriteFile(path, []byte("[agents.goose]\nprotocol = \"acp\"\ncommand = [\"goose\", \"acp\"]\n"), 0o644))
	c, _, err := Load(LoadOptions{ProjectFile: path, Getenv: noEnv})
	require.NoError(t, err)
	require.Equal(t, []string{"goose", "acp"}, c.Agents["goose"].Command)
	require.NoError(t, os.WriteFile(path, []byte("[agents.goose]\ncommand = [\"goose\"]\n"), 0o644))
	_, _, err = Load(LoadOptions{ProjectFile: path, Getenv: noEnv})
	require.ErrorContains(t, err, "is not a known agent", "a name harness does not know must be an ACP agent")
}

// TestProtocolMessages pins the texts the protocol table's facts (passed
// through the registry) make: the same as when config named "cli" and "acp".
func TestProtocolMessages(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "harness.toml")
	noEnv := func(string) string { return "" }
	for _, tc := range []struct{ toml, want string }{
		{"[agents.codex]\nprotocol = \"tcp\"\n", `agents.codex.protocol: must be "cli" or "acp" or "stream-json" or "app-server"`},
		{"[agents.goose]\nprotocol = \"cli\"\ncommand = [\"goose\"]\n", `agents.goose: "goose" is not a known agent (known: claude, codex, cursor, opencode, gemini, oracle, nop; any other ACP agent needs protocol = "acp" and command)`},
	} {
		require.NoError(t, os.WriteFile(path, []byte(tc.toml), 0o644))
		_, _, err := Load(LoadOptions{ProjectFile: path, Getenv: noEnv})
		require.ErrorContains(t, err, tc.want)
	}
}

func TestIsSettingEnv(t *testing.T) {
	for _, name := range []string{"HARNESS_FORMAT", "HARNESS_PERMISSIONS", "HARNESS_OTLP", "HARNESS_TOOL_TIMEOUT_SHELL", "HARNESS_NO_LOG"} {
		require.True(t, IsSettingEnv(name), name)
	}
	for _, name := range []string{"HARNESS_AGENTS_DIR", "HARNESS_MCP_TOKEN", "PATH", ""} {
		require.False(t, IsSettingEnv(name), name)
	}
}

// TestBinaryRelativeToItsFile: an agent's binary given as a relative path
// is the config file's, so the project's harness.toml names the same
// executable from any directory of the project; a bare name stays a name
// to look up on PATH, an absolute path as it is. Before, the path was
// taken from the directory harness ran in.
func TestBinaryRelativeToItsFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "repo", ProjectFileName), `
[agents.claude]
binary = "node_modules/.bin/claude"
[agents.codex]
binary = "codex-nightly"
[agents.gemini]
binary = "/opt/gemini"
`)
	cwd := filepath.Join(root, "repo", "sub")
	require.NoError(t, os.MkdirAll(cwd, 0o755))
	c, _, err := Load(LoadOptions{Cwd: cwd})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, "repo", "node_modules", ".bin", "claude"), c.Agents["claude"].Binary)
	require.Equal(t, "codex-nightly", c.Agents["codex"].Binary)
	require.Equal(t, "/opt/gemini", c.Agents["gemini"].Binary)
}
