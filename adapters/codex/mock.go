package codex

import (
	"fmt"
	"path/filepath"

	"github.com/agentharness/harness/adapters"
)

// mock points Codex at the scripted model (Agent.Mock): a model provider
// in the config.toml of its own CODEX_HOME inside home.
//
// Codex refuses to make its helper commands (apply_patch and the
// sandbox's) under the temporary directory, so with CODEX_HOME there it
// edits nothing over ACP and warns on every start. The mock's homes are in
// the user's cache directory, which may itself be under /tmp
// (XDG_CACHE_HOME=/tmp/...): TMPDIR points inside home, beside
// CODEX_HOME, so that CODEX_HOME is never under it.
func mock(baseURL, home, _ string) (string, []string, error) {
	const model = "gpt-5.5"
	codexHome, tmp := filepath.Join(home, ".codex"), filepath.Join(home, ".tmp")
	var c adapters.MockConfig
	c.Mkdir(codexHome)
	c.Mkdir(tmp)
	c.Env("CODEX_HOME", codexHome)
	c.Env("TMPDIR", tmp)
	c.Env("MOCK_OPENAI_KEY", adapters.MockKey)
	c.Write(filepath.Join(codexHome, "config.toml"), fmt.Appendf(nil, `# Written by harness --mock: Codex against the scripted model server.
model = %q
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = %q
env_key = "MOCK_OPENAI_KEY"
wire_api = "responses"
request_max_retries = %d
stream_max_retries = %d
stream_idle_timeout_ms = %d
`, model, baseURL+"/v1", adapters.MockRetries, adapters.MockRetries, adapters.MockStall.Milliseconds()))
	return c.Result(model)
}
