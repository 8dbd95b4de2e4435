package claude

import (
	"fmt"
	"path/filepath"

	"github.com/agentharness/harness/adapters"
)

// mock points Claude Code at the scripted model (Agent.Mock), all through
// its environment, its config directory inside home.
func mock(baseURL, home, _ string) (string, []string, error) {
	stallMS := fmt.Sprint(adapters.MockStall.Milliseconds())
	var c adapters.MockConfig
	c.Env("ANTHROPIC_BASE_URL", baseURL)
	c.Env("ANTHROPIC_API_KEY", adapters.MockKey)
	c.Env("CLAUDE_CONFIG_DIR", filepath.Join(home, ".claude"))
	c.Mkdir(filepath.Join(home, ".claude"))
	c.Env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
	c.Env("DISABLE_TELEMETRY", "1")
	c.Env("DISABLE_AUTOUPDATER", "1")
	c.Env("DISABLE_ERROR_REPORTING", "1")
	c.Env("IS_SANDBOX", "1") // else --dangerously-skip-permissions refuses to run as root
	c.Env("CLAUDE_CODE_MAX_RETRIES", fmt.Sprint(adapters.MockRetries))
	c.Env("CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS", stallMS)
	c.Env("API_TIMEOUT_MS", stallMS)
	// Without this a dropped stall is retried as a non-streaming request, which stalls too.
	c.Env("CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK", "1")
	// A scripted model calls MCP tools by name: they must be in the
	// request's tool list, not deferred behind ToolSearch.
	c.Env("ENABLE_TOOL_SEARCH", "false")
	return c.Result("claude-sonnet-4-5")
}
