package gemini

import (
	"path/filepath"

	"github.com/agentharness/harness/adapters"
)

// mock points the Gemini CLI at the scripted model (Agent.Mock): a base
// URL and key in its environment, its settings.json inside home.
func mock(baseURL, home, _ string) (string, []string, error) {
	var c adapters.MockConfig
	c.WriteJSON(filepath.Join(home, ".gemini", "settings.json"), map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general": map[string]any{
			"disableAutoUpdate": true, "disableUpdateNag": true,
			// Attempts, not retries: the first try counts.
			"maxAttempts": adapters.MockRetries + 1,
		},
	})
	c.Env("GEMINI_API_KEY", adapters.MockKey)
	c.Env("GOOGLE_GEMINI_BASE_URL", baseURL)
	c.Env("GEMINI_CLI_TRUST_WORKSPACE", "true") // an untrusted folder is fatal headless
	c.Env("GEMINI_CLI_NO_RELAUNCH", "true")     // one process, so SIGTERM to the pid works
	return c.Result("gemini-2.5-flash")
}
