package mockmodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Setup is what one real CLI needs to talk to a Server instead of its vendor, inside a throwaway
// HOME, without reading or writing the user's own configuration.
type Setup struct {
	Agent string
	// Env holds KEY=VALUE pairs to add to (and override in) the CLI's environment. Append them
	// after the inherited environment: os/exec keeps the last value of a duplicated key.
	Env []string
	// Args are extra command-line arguments (the model flag); the prompt, output-format and
	// permission flags stay the caller's business.
	Args []string
	// Files are the files Prepare wrote, absolute.
	Files []string
	// Model is the model id the CLI is pointed at.
	Model string
	// Home is the throwaway HOME.
	Home string
}

// Options tune Prepare. The zero value means the defaults.
type Options struct {
	// StallTimeout is how long the CLI itself waits on a silent stream before it gives up,
	// where the CLI has a knob for it (default 60 s, down from about 300 s). Keep it longer
	// than the harness's own idle timeout when testing that one.
	StallTimeout time.Duration
	// Retries is how many times the CLI retries a failed request, where it has a knob (default
	// 0). OpenCode's retry count is fixed at 5; the server's retry-after-ms keeps those fast.
	Retries int
}

// Agents are the CLIs Prepare knows, with the model id each is pointed at.
var Agents = map[string]string{
	"claude":   "claude-sonnet-4-5",
	"codex":    "gpt-5.5",
	"opencode": "mock/mock-model",
	"gemini":   "gemini-2.5-flash",
}

// ErrUnknownAgent is returned by Prepare for an agent it does not know.
var ErrUnknownAgent = errors.New("mockmodel: unknown agent")

// DummyKey is the API key every CLI is given; the server ignores keys.
const DummyKey = "mock-dummy-key"

// Prepare is PrepareWith with default Options.
func Prepare(agent, baseURL, home, workdir string) (Setup, error) {
	return PrepareWith(agent, baseURL, home, workdir, Options{})
}

// PrepareWith writes under home everything agent needs to run against the server at baseURL
// (a Server.URL) in workdir, and returns the env and args to run it with. home is created if
// missing. Codex warns when its home is under /tmp, so pass a home outside /tmp for it.
func PrepareWith(agent, baseURL, home, workdir string, opts Options) (Setup, error) {
	model, ok := Agents[agent]
	if !ok {
		return Setup{}, fmt.Errorf("%w %q", ErrUnknownAgent, agent)
	}
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return Setup{}, fmt.Errorf("mockmodel: prepare: bad base URL %q", baseURL)
	}
	baseURL = strings.TrimSuffix(baseURL, "/")
	if home == "" || workdir == "" {
		return Setup{}, errors.New("mockmodel: prepare: empty home or workdir")
	}
	if home, err = filepath.Abs(home); err != nil {
		return Setup{}, fmt.Errorf("mockmodel: prepare: %w", err)
	}
	if workdir, err = filepath.Abs(workdir); err != nil {
		return Setup{}, fmt.Errorf("mockmodel: prepare: %w", err)
	}
	if fi, err := os.Stat(workdir); err != nil || !fi.IsDir() {
		return Setup{}, fmt.Errorf("mockmodel: prepare: workdir %q is not a directory", workdir)
	}
	if opts.StallTimeout <= 0 {
		opts.StallTimeout = 60 * time.Second
	}
	if opts.Retries < 0 {
		opts.Retries = 0
	}
	p := &preparer{s: Setup{Agent: agent, Model: model, Home: home}}
	p.mkdir(home)
	xdg := map[string]string{
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_DATA_HOME":   filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
	}
	p.env("HOME", home)
	// OpenCode takes its project directory from $PWD, not from the process's cwd: an inherited
	// PWD would make it run tools in the caller's directory.
	p.env("PWD", workdir)
	for _, k := range slices.Sorted(maps.Keys(xdg)) {
		p.mkdir(xdg[k])
		p.env(k, xdg[k])
	}
	stallMS := fmt.Sprint(opts.StallTimeout.Milliseconds())
	switch agent {
	case "claude":
		p.env("ANTHROPIC_BASE_URL", baseURL)
		p.env("ANTHROPIC_API_KEY", DummyKey)
		p.env("CLAUDE_CONFIG_DIR", filepath.Join(home, ".claude"))
		p.mkdir(filepath.Join(home, ".claude"))
		p.env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
		p.env("DISABLE_TELEMETRY", "1")
		p.env("DISABLE_AUTOUPDATER", "1")
		p.env("DISABLE_ERROR_REPORTING", "1")
		p.env("IS_SANDBOX", "1") // else --dangerously-skip-permissions refuses to run as root
		p.env("CLAUDE_CODE_MAX_RETRIES", fmt.Sprint(opts.Retries))
		p.env("CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS", stallMS)
		p.env("API_TIMEOUT_MS", stallMS)
		// Without this a dropped stall is retried as a non-streaming request, which stalls too.
		p.env("CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK", "1")
		// A scripted model calls MCP tools by name: they must be in the
		// request's tool list, not deferred behind ToolSearch.
		p.env("ENABLE_TOOL_SEARCH", "false")
		p.s.Args = []string{"--model", model}
	case "codex":
		codexHome := filepath.Join(home, ".codex")
		p.mkdir(codexHome)
		p.env("CODEX_HOME", codexHome)
		p.env("MOCK_OPENAI_KEY", DummyKey)
		p.write(filepath.Join(codexHome, "config.toml"), codexConfig(model, baseURL, opts.Retries, stallMS))
		p.s.Args = []string{"-m", model}
	case "opencode":
		cfg := filepath.Join(home, "opencode-mock.json")
		p.write(cfg, opencodeConfig(model, baseURL, opts.StallTimeout.Milliseconds()))
		p.env("OPENCODE_CONFIG", cfg) // keeps opencode.json out of the workdir
		for _, k := range []string{"OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_LSP_DOWNLOAD", "OPENCODE_DISABLE_MODELS_FETCH",
			"OPENCODE_DISABLE_DEFAULT_PLUGINS", "OPENCODE_DISABLE_SHARE"} {
			p.env(k, "1")
		}
		// OpenCode reaches for the npm registry for its config dir's plugins; it does not need
		// it, and a dead registry keeps the run offline.
		p.env("npm_config_registry", "http://127.0.0.1:9/")
		p.s.Args = []string{"-m", model}
	case "gemini":
		p.mkdir(filepath.Join(home, ".gemini"))
		p.write(filepath.Join(home, ".gemini", "settings.json"), geminiSettings(opts.Retries))
		p.env("GEMINI_API_KEY", DummyKey)
		p.env("GOOGLE_GEMINI_BASE_URL", baseURL)
		p.env("GEMINI_CLI_TRUST_WORKSPACE", "true") // an untrusted folder is fatal headless
		p.env("GEMINI_CLI_NO_RELAUNCH", "true")     // one process, so SIGTERM to the pid works
		p.s.Args = []string{"-m", model}
	}
	if p.err != nil {
		return Setup{}, fmt.Errorf("mockmodel: prepare %s: %w", agent, p.err)
	}
	return p.s, nil
}

type preparer struct {
	s   Setup
	err error
}

func (p *preparer) env(k, v string) { p.s.Env = append(p.s.Env, k+"="+v) }

func (p *preparer) mkdir(dir string) {
	if p.err == nil {
		p.err = os.MkdirAll(dir, 0o700)
	}
}

func (p *preparer) write(path string, data []byte) {
	if p.err != nil {
		return
	}
	if p.err = os.WriteFile(path, data, 0o600); p.err == nil {
		p.s.Files = append(p.s.Files, path)
	}
}

func codexConfig(model, baseURL string, retries int, stallMS string) []byte {
	return fmt.Appendf(nil, `# Written by mockmodel.Prepare: Codex against the scripted model server.
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
stream_idle_timeout_ms = %s
`, model, baseURL+"/v1", retries, retries, stallMS)
}

func opencodeConfig(model, baseURL string, stallMS int64) []byte {
	provider, modelID, _ := strings.Cut(model, "/")
	cfg := map[string]any{
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
				"baseURL": baseURL + "/v1", "apiKey": DummyKey,
				"timeout": stallMS, "chunkTimeout": stallMS,
			},
			"models": map[string]any{modelID: map[string]any{"name": "Mock Model", "tool_call": true}},
		}},
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	return append(b, '\n')
}

func geminiSettings(retries int) []byte {
	cfg := map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general": map[string]any{
			"disableAutoUpdate": true, "disableUpdateNag": true,
			// Attempts, not retries: the first try counts.
			"maxAttempts": retries + 1,
		},
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	return append(b, '\n')
}
