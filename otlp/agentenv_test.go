package otlp

import (
	"slices"
	"strings"
	"testing"
)

// TestAgentEnvKeepsTheAgentsContentOff: Claude Code's exporter sends
// straight to the collector, unredacted, so harness turns every one of
// its content variables off, --otlp-content or not; the other agents get
// nothing.
func TestAgentEnvKeepsTheAgentsContentOff(t *testing.T) {
	cfg := Config{TracesURL: "http://127.0.0.1:4318/v1/traces"}
	for _, content := range []bool{false, true} {
		cfg.Content = content
		env := AgentEnv("claude", cfg)
		if !slices.Contains(env, "CLAUDE_CODE_ENABLE_TELEMETRY=1") {
			t.Fatalf("content %v: Claude Code's telemetry is not on: %q", content, env)
		}
		for _, k := range []string{"OTEL_LOG_USER_PROMPTS", "OTEL_LOG_ASSISTANT_RESPONSES", "OTEL_LOG_TOOL_DETAILS",
			"OTEL_LOG_TOOL_CONTENT", "OTEL_LOG_RAW_API_BODIES"} {
			if !slices.Contains(env, k+"=0") {
				t.Errorf("content %v: %s is not set to 0", content, k)
			}
		}
		for _, kv := range env {
			if strings.HasPrefix(kv, "OTEL_LOG_") && !strings.HasSuffix(kv, "=0") {
				t.Errorf("content %v: %s", content, kv)
			}
		}
	}
	for _, agent := range []string{"codex", "gemini", "cursor", "opencode"} {
		if env := AgentEnv(agent, cfg); env != nil {
			t.Errorf("%s: %q", agent, env)
		}
	}
}
