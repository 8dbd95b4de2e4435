package otlp

import "strings"

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
// over whatever the agent would inherit or be given. Content leaves
// through harness's own spans only, redacted.
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
// values, and either may turn one on.
var agentContentOff = []string{"OTEL_LOG_USER_PROMPTS", "OTEL_LOG_ASSISTANT_RESPONSES",
	"OTEL_LOG_TOOL_DETAILS", "OTEL_LOG_TOOL_CONTENT", "OTEL_LOG_RAW_API_BODIES"}
