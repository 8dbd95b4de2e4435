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
// Only endpoints and switches: no header, no --env value; the prompts and
// tool content stay off unless content.
func AgentEnv(agent string, cfg Config, content bool) []string {
	base, ok := strings.CutSuffix(cfg.TracesURL, "/v1/traces")
	if agent != "claude" || !ok {
		return nil
	}
	env := []string{"CLAUDE_CODE_ENABLE_TELEMETRY=1", "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1",
		"OTEL_TRACES_EXPORTER=otlp", "OTEL_LOGS_EXPORTER=otlp", "OTEL_METRICS_EXPORTER=none",
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT=" + base,
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + cfg.TracesURL, "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=" + base + "/v1/logs"}
	if content {
		env = append(env, "OTEL_LOG_USER_PROMPTS=1", "OTEL_LOG_TOOL_DETAILS=1")
	}
	return env
}
