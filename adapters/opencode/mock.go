package opencode

import (
	"path/filepath"
	"strings"

	"github.com/agentharness/harness/adapters"
)

// mock points OpenCode at the scripted model (Agent.Mock): an
// OpenAI-compatible provider in a config file inside home, named by
// OPENCODE_CONFIG so that no opencode.json lands in the work directory.
func mock(baseURL, home, _ string) (string, []string, error) {
	const model = "mock/mock-model"
	provider, modelID, _ := strings.Cut(model, "/")
	stallMS := adapters.MockStall.Milliseconds()
	cfg := filepath.Join(home, "opencode-mock.json")
	var c adapters.MockConfig
	c.WriteJSON(cfg, map[string]any{
		"$schema":     "https://opencode.ai/config.json",
		"model":       model,
		"small_model": model,
		"autoupdate":  false,
		"share":       "disabled",
		"permission":  map[string]any{"bash": "allow", "edit": "allow", "webfetch": "deny"},
		"provider": map[string]any{provider: map[string]any{
			"npm":  "@ai-sdk/openai-compatible",
			"name": "Mock",
			"options": map[string]any{
				"baseURL": baseURL + "/v1", "apiKey": adapters.MockKey,
				"timeout": stallMS, "chunkTimeout": stallMS,
			},
			"models": map[string]any{modelID: map[string]any{"name": "Mock Model", "tool_call": true}},
		}},
	})
	c.Env("OPENCODE_CONFIG", cfg)
	for _, k := range []string{"OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_LSP_DOWNLOAD", "OPENCODE_DISABLE_MODELS_FETCH",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS", "OPENCODE_DISABLE_SHARE"} {
		c.Env(k, "1")
	}
	// OpenCode reaches for the npm registry for its config dir's plugins; it does not need
	// it, and a dead registry keeps the run offline.
	c.Env("npm_config_registry", "http://127.0.0.1:9/")
	return c.Result(model)
}
