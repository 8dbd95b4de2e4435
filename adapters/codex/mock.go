package codex

import (
	"fmt"
	"path/filepath"

	"github.com/agentharness/harness/adapters"
)

// mock points Codex at the scripted model (Agent.Mock): a model provider
// in the config.toml of its own CODEX_HOME inside home. Codex warns when
// its home is under /tmp, which the mock's homes are not.
func mock(baseURL, home, _ string) (string, []string, error) {
	const model = "gpt-5.5"
	codexHome := filepath.Join(home, ".codex")
	var c adapters.MockConfig
	c.Mkdir(codexHome)
	c.Env("CODEX_HOME", codexHome)
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
