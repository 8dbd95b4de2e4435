package otlp

import (
	"encoding/json"
	"errors"
	"strings"
)

// AgentEnv is the environment that makes agent's CLI export its own
// telemetry to the same collector, in harness's trace (with the
// TRACEPARENT harness gives it), as its pinned CLI reads it: Claude Code
// (CLAUDE_CODE_ENABLE_TELEMETRY and the OTEL_* exporter variables; its
// spans need CLAUDE_CODE_ENHANCED_TELEMETRY_BETA, and then take
// TRACEPARENT as their parent). Nothing for the others: Codex reads its
// [otel] settings from its config file only, and Gemini CLI 0.61 exports
// its spans in traces of their own (it does not read TRACEPARENT: seen
// in e2e's Jaeger test), which would only be noise beside harness's.
// Only endpoints and switches: no header, no --env value.
//
// The agent's exporter never carries content, content (--otlp-content)
// or not: it sends straight to the collector, where harness cannot
// redact what it sends (the --env values, secrets a tool printed), so
// every content variable of the CLI's (agentContentOff) is set to off,
// over whatever the agent would inherit or be given. Claude Code applies
// its user settings' env over its environment, so a run gets this only
// where AgentArgs keeps them off there too (AgentExports).
func AgentEnv(agent string, cfg Config) []string {
	base, ok := strings.CutSuffix(cfg.TracesURL, "/v1/traces")
	if agent != "claude" || !ok {
		return nil
	}
	env := []string{"CLAUDE_CODE_ENABLE_TELEMETRY=1", "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1",
		"OTEL_TRACES_EXPORTER=otlp", "OTEL_LOGS_EXPORTER=otlp", "OTEL_METRICS_EXPORTER=none",
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT=" + base,
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + cfg.TracesURL, "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=" + base + "/v1/logs"}
	for _, k := range agentContentOff {
		env = append(env, k+"=0")
	}
	return env
}

// agentContentOff are Claude Code's (2.1.329) variables that put content
// on what its exporter sends, each read as a boolean ("0" is off):
// prompts, the model's answers, tool commands and arguments, tool
// output, whole API request and response bodies. AgentEnv sets each to
// 0: the agent inherits harness's environment and is given the --env
// values, and either may turn one on. AgentArgs sets each to "0" in the
// env of Claude Code's --settings: its user settings (~/.claude/settings.json,
// the env of ~/.claude.json) are applied over its environment, and a
// --settings over them.
var agentContentOff = []string{"OTEL_LOG_USER_PROMPTS", "OTEL_LOG_ASSISTANT_RESPONSES",
	"OTEL_LOG_TOOL_DETAILS", "OTEL_LOG_TOOL_CONTENT", "OTEL_LOG_RAW_API_BODIES"}

// AgentExports reports whether harness turns agent's own exporter on
// (AgentEnv) for a run over protocol (a Task.Protocol; "" and "cli" are
// the CLI's headless mode) whose traces go to cfg: only where it can keep
// the exporter's content off, Claude Code driven as its CLI (headless or
// stream-json), which takes AgentArgs's --settings. Over ACP,
// claude-agent-acp starts Claude Code with the user's settings and none
// of harness's arguments: a content variable those turn on would be
// sent, so the exporter is left off there.
func AgentExports(agent, protocol string, cfg Config) bool {
	return protocol != "acp" && AgentEnv(agent, cfg) != nil
}

// AgentArgs returns args, the agent's own arguments (Task.ExtraArgs: the
// configuration's, then the caller's), with a --settings that turns
// Claude Code's content variables off over its settings files, where
// AgentExports says its exporter is on; args as they are elsewhere.
// Claude Code applies its settings' env over its environment, user
// settings after the environment, --settings after them (managed
// settings come last, and nothing overrides them).
//
// Claude Code reads one --settings, the last, and drops the others; so
// the last one args holds (before a "--") is merged with harness's, whose
// five keys win, and takes its place. With none, harness's goes first,
// where no "--" in args can make it an operand. A --settings that is not
// an inline JSON object is an error (readSettings).
func AgentArgs(agent, protocol string, cfg Config, args []string) ([]string, error) {
	if !AgentExports(agent, protocol, cfg) {
		return args, nil
	}
	at, value, err := lastSettings(args)
	if err != nil {
		return nil, err
	}
	settings := map[string]json.RawMessage{}
	if at >= 0 {
		if settings, err = readSettings(value); err != nil {
			return nil, err
		}
	}
	merged, err := contentOff(settings)
	if err != nil {
		return nil, err
	}
	flag := "--settings=" + merged
	switch {
	case at < 0:
		return append([]string{flag}, args...), nil
	case strings.HasPrefix(args[at], "--settings="):
		out := append([]string(nil), args...)
		out[at] = flag
		return out, nil
	default: // "--settings" VALUE: the two become one argument
		out := append([]string(nil), args[:at]...)
		out = append(out, flag)
		return append(out, args[at+2:]...), nil
	}
}

// lastSettings finds the last --settings of args before a "--" (the end
// of options: after it, an operand): its index (-1: none) and value.
func lastSettings(args []string) (at int, value string, err error) {
	at = -1
	for i := 0; i < len(args) && args[i] != "--"; i++ {
		if v, ok := strings.CutPrefix(args[i], "--settings="); ok {
			at, value = i, v
			continue
		}
		if args[i] != "--settings" {
			continue
		}
		if i+1 == len(args) {
			return 0, "", errors.New("claude: --settings has no value")
		}
		at, value = i, args[i+1]
		i++
	}
	return at, value, nil
}

// readSettings reads a --settings value, which must be inline JSON: a
// settings file's content would have to go on Claude Code's command
// line, merged with harness's, where any local user reads it (a file's
// env holds keys), and a merged file of harness's own might not be seen
// by an agent in a sandbox. No error quotes the value: a settings object
// may hold secrets.
func readSettings(value string) (map[string]json.RawMessage, error) {
	if strings.TrimSpace(value) == "" {
		return nil, errors.New("claude: --settings has no value")
	}
	// Claude Code takes a value that does not start with "{" for a file.
	if !strings.HasPrefix(strings.TrimSpace(value), "{") {
		return nil, errors.New("claude: --settings names a file, which --otlp cannot merge its settings into: give the settings inline (--settings '{...}'), or run without --otlp")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(value), &m); err != nil || m == nil {
		return nil, errors.New("claude: --settings (inline JSON) is not a JSON object")
	}
	return m, nil
}

// contentOff is settings with every content variable set to "0" in its
// env (any other spelling of their names taken out, which Claude Code
// might read as one), as JSON.
func contentOff(settings map[string]json.RawMessage) (string, error) {
	env := map[string]json.RawMessage{}
	if raw, ok := settings["env"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &env); err != nil || env == nil {
			return "", errors.New("claude: the env of --settings is not a JSON object")
		}
	}
	for k := range env {
		for _, off := range agentContentOff {
			if strings.EqualFold(k, off) {
				delete(env, k)
			}
		}
	}
	for _, k := range agentContentOff {
		env[k] = json.RawMessage(`"0"`)
	}
	var err error
	if settings["env"], err = json.Marshal(env); err != nil {
		return "", err
	}
	b, err := json.Marshal(settings)
	return string(b), err
}
