package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentharness/harness/registry"
)

// Permission modes (the values of adapters.FullAccess and adapters.ReadOnly).
const (
	FullAccess = "full-access"
	ReadOnly   = "read-only"
)

// Permissions and Formats list the accepted values of those settings.
var (
	Permissions = []string{FullAccess, ReadOnly}
	Formats     = []string{"ndjson", "text", "json"}
)

// ToolKinds are the tool kinds of the event spec, each of which may have
// its own budget under [tool_timeouts].
var ToolKinds = []string{"shell", "read", "write", "edit", "delete", "search", "web", "mcp", "todo", "task", "other"}

// Kind is the type of a setting's value.
type Kind string

// Setting kinds.
const (
	KindDuration Kind = "duration"
	KindString   Kind = "string"
	KindEnum     Kind = "enum"
	KindAgent    Kind = "agent"
	KindBool     Kind = "bool"
	KindInt      Kind = "int"
	KindPath     Kind = "path"
)

// Setting is one scalar key of harness.toml. The table of settings drives
// loading, environment variables, validation, `config show` and the
// example file, so a key exists in all of them or in none.
type Setting struct {
	Key     string   // dotted TOML key: "idle_timeout", "tool_timeouts.mcp"
	Env     string   // environment variable, "" when none
	Default string   // the default, as written in harness.toml; "" when unset
	Doc     string   // one line for people
	Kind    Kind     // value type
	Values  []string // accepted values of an enum
	// EnvInverts is true when the variable turns the setting off
	// (HARNESS_NO_LOG=1 sets log = false).
	EnvInverts bool

	set func(c *Config, raw string) error // parse, validate, store
	get func(c *Config) string            // "" when unset
}

// valueSetting is a setting held in one field of Config: parse turns the
// raw value into the field's, format the field's back into text.
func valueSetting[T any](key, env, def, doc string, kind Kind, field func(*Config) *T,
	parse func(raw string) (T, error), format func(T) string) Setting {
	return Setting{Key: key, Env: env, Default: def, Doc: doc, Kind: kind,
		set: func(c *Config, raw string) error {
			v, err := parse(raw)
			if err != nil {
				return err
			}
			*field(c) = v
			return nil
		},
		get: func(c *Config) string { return format(*field(c)) }}
}

func durationSetting(key, env, def, doc string, field func(*Config) *Duration) Setting {
	return valueSetting(key, env, def, doc, KindDuration, field, ParseDuration, Duration.String)
}

func enumSetting(key, env, def, doc, what string, values []string, field func(*Config) *string) Setting {
	s := valueSetting(key, env, def, doc, KindEnum, field, func(raw string) (string, error) {
		v := strings.TrimSpace(raw)
		if !slices.Contains(values, v) {
			return "", fmt.Errorf("is not a %s (use %s)", what, quoteList(values, " or "))
		}
		return v, nil
	}, same)
	s.Values = values
	return s
}

func boolSetting(key, env, def, doc string, field func(*Config) *bool) Setting {
	return valueSetting(key, env, def, doc, KindBool, field, parseBool, strconv.FormatBool)
}

// stringSetting is a free-text setting, without its surrounding space.
func stringSetting(key, env, doc string, kind Kind, field func(*Config) *string) Setting {
	return valueSetting(key, env, "", doc, kind, field,
		func(raw string) (string, error) { return strings.TrimSpace(raw), nil }, same)
}

func same(s string) string { return s }

func parseBool(raw string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "1", "t", "true", "yes", "on":
		return true, nil
	case "0", "f", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("is not a boolean (use true or false)")
}

func toolKindSetting(kind, def string) Setting {
	doc := fmt.Sprintf("budget of one %s tool call; unset: tool_timeout applies", kind)
	if def != "" {
		doc = fmt.Sprintf("budget of one %s tool call", kind)
	}
	return Setting{Key: "tool_timeouts." + kind, Env: "HARNESS_TOOL_TIMEOUT_" + strings.ToUpper(kind),
		Default: def, Doc: doc, Kind: KindDuration,
		set: func(c *Config, raw string) error {
			d, err := ParseDuration(raw)
			if err != nil {
				return err
			}
			if c.ToolTimeouts == nil {
				c.ToolTimeouts = map[string]Duration{}
			}
			c.ToolTimeouts[kind] = d
			return nil
		},
		get: func(c *Config) string {
			if d, ok := c.ToolTimeouts[kind]; ok {
				return d.String()
			}
			return ""
		}}
}

// settings is the table. Order is the order of `config show` and of the
// example file. It is built on first use, once the program's agents are
// registered (the agent setting's Doc lists them).
var settings = sync.OnceValue(func() []Setting {
	s := []Setting{
		valueSetting("agent", "HARNESS_AGENT", "claude",
			"agent to run: "+strings.Join(registry.AgentIDs(), ", ")+" (or an alias)", KindAgent,
			func(c *Config) *string { return &c.Agent },
			func(raw string) (string, error) {
				id, ok := registry.Canonical(raw)
				if !ok {
					return "", fmt.Errorf("is not a known agent (known: %s)", strings.Join(registry.AgentIDs(), ", "))
				}
				return id, nil
			}, same),
		stringSetting("model", "HARNESS_MODEL",
			`model alias ("sonnet", "gpt-5", …) or the agent's own model id; unset: the agent's default`, KindString,
			func(c *Config) *string { return &c.Model }),
		enumSetting("permissions", "HARNESS_PERMISSIONS", FullAccess,
			"what the agent may do without asking: full-access or read-only", "permission mode", Permissions,
			func(c *Config) *string { return &c.Permissions }),
		enumSetting("format", "HARNESS_FORMAT", "ndjson",
			"output on stdout: ndjson (the event stream), text (a readable transcript), json (one document: every event and the result)", "format", Formats,
			func(c *Config) *string { return &c.Format }),
		boolSetting("pty", "HARNESS_PTY", "false", "run the agent on a pseudo-terminal",
			func(c *Config) *bool { return &c.PTY }),
		boolSetting("raw", "HARNESS_RAW", "false", "also emit each native line as a native event",
			func(c *Config) *bool { return &c.Raw }),
		func() Setting {
			s := boolSetting("log", "HARNESS_NO_LOG", "true", "keep a session log of every run (HARNESS_NO_LOG=1 turns it off)",
				func(c *Config) *bool { return &c.Log })
			s.EnvInverts = true
			return s
		}(),
		stringSetting("log_dir", "HARNESS_LOG_DIR", `session log directory; a leading "~/" is the home directory, a relative path this file's directory; unset: $XDG_DATA_HOME/harness/sessions`, KindPath,
			func(c *Config) *string { return &c.LogDir }),
		stringSetting("otlp", "HARNESS_OTLP",
			"export every run as OpenTelemetry traces and metrics to this OTLP/HTTP endpoint (http://HOST:4318); unset: OTEL_EXPORTER_OTLP_ENDPOINT, else none", KindString,
			func(c *Config) *string { return &c.OTLP }),
		boolSetting("otlp_content", "HARNESS_OTLP_CONTENT", "false",
			"put tool arguments, output, diffs and the final answer on the exported spans (redacted as session logs are)",
			func(c *Config) *bool { return &c.OTLPContent }),
		durationSetting("idle_timeout", "HARNESS_IDLE_TIMEOUT", "5m",
			"end the run after this long without output and with no tool call in flight",
			func(c *Config) *Duration { return &c.IdleTimeout }),
		durationSetting("idle_warning", "HARNESS_IDLE_WARNING", "30s",
			"warn this long before the idle timeout fires",
			func(c *Config) *Duration { return &c.IdleWarning }),
		durationSetting("timeout", "HARNESS_TIMEOUT", "1h",
			"hard limit on a run's wall-clock time, whatever it does",
			func(c *Config) *Duration { return &c.Timeout }),
		durationSetting("tool_timeout", "HARNESS_TOOL_TIMEOUT", "5m",
			"budget of one tool call whose kind has no budget of its own",
			func(c *Config) *Duration { return &c.ToolTimeout }),
	}
	s = append(s,
		durationSetting("linger", "HARNESS_LINGER", "3s",
			"after the agent's final event, wait this long for it to exit before ending it",
			func(c *Config) *Duration { return &c.Linger }),
		durationSetting("kill_grace", "HARNESS_KILL_GRACE", "5s",
			"time between SIGTERM and SIGKILL when ending the agent",
			func(c *Config) *Duration { return &c.KillGrace }),
	)
	// Tables come after every top-level key: TOML puts a key after a
	// [table] header inside that table.
	defaults := map[string]string{"mcp": "2m", "read": "1m", "search": "1m", "todo": "1m"}
	for _, k := range ToolKinds {
		s = append(s, toolKindSetting(k, defaults[k]))
	}
	s = append(s,
		durationSetting("mcp.idle_min", "HARNESS_MCP_IDLE_MIN", "1m",
			"smallest idle timeout an MCP client may ask for",
			func(c *Config) *Duration { return &c.MCP.IdleMin }),
		durationSetting("mcp.idle_max", "HARNESS_MCP_IDLE_MAX", "30m",
			"largest idle timeout an MCP client may ask for",
			func(c *Config) *Duration { return &c.MCP.IdleMax }),
		durationSetting("mcp.hard_min", "HARNESS_MCP_HARD_MIN", "5m",
			"smallest hard timeout an MCP client may ask for",
			func(c *Config) *Duration { return &c.MCP.HardMin }),
		durationSetting("mcp.hard_max", "HARNESS_MCP_HARD_MAX", "60m",
			"largest hard timeout an MCP client may ask for",
			func(c *Config) *Duration { return &c.MCP.HardMax }),
		valueSetting("bench.parallel", "HARNESS_BENCH_PARALLEL", "0",
			"runs `harness bench` starts at the same time; 0 = the number of cores", KindInt,
			func(c *Config) *int { return &c.Bench.Parallel },
			func(raw string) (int, error) {
				n, err := strconv.Atoi(strings.TrimSpace(raw))
				if err != nil || n < 0 || n > 256 {
					return 0, fmt.Errorf("is not a number of parallel runs (0 for the number of cores, or 1 to 256)")
				}
				return n, nil
			}, strconv.Itoa),
	)
	return s
})

// IsSettingEnv reports whether name is the environment variable of a
// setting (HARNESS_FORMAT, HARNESS_TOOL_TIMEOUT_SHELL, …).
func IsSettingEnv(name string) bool {
	for _, s := range settings() {
		if s.Env != "" && s.Env == name {
			return true
		}
	}
	return false
}

// Lookup returns the setting for a dotted key.
func Lookup(key string) (Setting, bool) {
	for _, s := range settings() {
		if s.Key == key {
			return s, true
		}
	}
	return Setting{}, false
}

func quoteList(vs []string, last string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	if len(q) <= 1 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + last + q[len(q)-1]
}
