package mockmodel

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/stretchr/testify/require"
)

func envMap(t *testing.T, env []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		require.True(t, ok, kv)
		_, dup := m[k]
		require.False(t, dup, "duplicate env key %s", k)
		m[k] = v
	}
	return m
}

func prepare(t *testing.T, agent string, opts Options) (Setup, map[string]string, string, string) {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	work := filepath.Join(root, "work")
	require.NoError(t, os.Mkdir(work, 0o755))
	s, err := PrepareWith(agent, "http://127.0.0.1:4242/", home, work, opts)
	require.NoError(t, err)
	env := envMap(t, s.Env)
	require.Equal(t, home, env["HOME"])
	require.Equal(t, home, s.Home)
	require.Equal(t, work, env["PWD"])
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		require.True(t, strings.HasPrefix(env[k], home+"/"), k)
		fi, err := os.Stat(env[k])
		require.NoError(t, err)
		require.True(t, fi.IsDir())
	}
	for _, f := range s.Files {
		require.True(t, strings.HasPrefix(f, home+"/"), "files stay in home: %s", f)
		fi, err := os.Stat(f)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), f)
	}
	entries, err := os.ReadDir(work)
	require.NoError(t, err)
	require.Empty(t, entries, "the workdir is not polluted")
	require.Equal(t, Agents[agent], s.Model)
	require.Equal(t, s.Model, s.Args[len(s.Args)-1])
	return s, env, home, work
}

func TestPrepareClaude(t *testing.T) {
	t.Parallel()
	s, env, home, _ := prepare(t, "claude", Options{})
	require.Empty(t, s.Files)
	require.Equal(t, []string{"--model", "claude-sonnet-4-5"}, s.Args)
	require.Equal(t, "http://127.0.0.1:4242", env["ANTHROPIC_BASE_URL"])
	require.Equal(t, DummyKey, env["ANTHROPIC_API_KEY"])
	require.Equal(t, "1", env["IS_SANDBOX"])
	require.Equal(t, "1", env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"])
	require.Equal(t, "0", env["CLAUDE_CODE_MAX_RETRIES"])
	require.Equal(t, "60000", env["CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS"])
	require.Equal(t, "60000", env["API_TIMEOUT_MS"])
	require.Equal(t, "1", env["CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK"])
	require.Equal(t, filepath.Join(home, ".claude"), env["CLAUDE_CONFIG_DIR"])
}

func TestPrepareCodex(t *testing.T) {
	t.Parallel()
	s, env, home, _ := prepare(t, "codex", Options{Retries: 2, StallTimeout: 5 * time.Second})
	codexHome := filepath.Join(home, ".codex")
	require.Equal(t, codexHome, env["CODEX_HOME"])
	require.Equal(t, DummyKey, env["MOCK_OPENAI_KEY"])
	require.Equal(t, []string{filepath.Join(codexHome, "config.toml")}, s.Files)
	data, err := os.ReadFile(s.Files[0])
	require.NoError(t, err)
	var cfg struct {
		Model          string `toml:"model"`
		ModelProvider  string `toml:"model_provider"`
		CheckForUpdate bool   `toml:"check_for_update_on_startup"`
		Providers      map[string]struct {
			BaseURL      string `toml:"base_url"`
			EnvKey       string `toml:"env_key"`
			WireAPI      string `toml:"wire_api"`
			RequestRetry int    `toml:"request_max_retries"`
			StreamRetry  int    `toml:"stream_max_retries"`
			IdleMS       int    `toml:"stream_idle_timeout_ms"`
		} `toml:"model_providers"`
	}
	require.NoError(t, toml.Unmarshal(data, &cfg))
	require.Equal(t, "gpt-5.5", cfg.Model)
	require.Equal(t, "mock", cfg.ModelProvider)
	p := cfg.Providers["mock"]
	require.Equal(t, "http://127.0.0.1:4242/v1", p.BaseURL)
	require.Equal(t, "MOCK_OPENAI_KEY", p.EnvKey)
	require.Equal(t, "responses", p.WireAPI)
	require.Equal(t, 2, p.RequestRetry)
	require.Equal(t, 2, p.StreamRetry)
	require.Equal(t, 5000, p.IdleMS)
	fi, err := os.Stat(codexHome)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}

func TestPrepareOpenCode(t *testing.T) {
	t.Parallel()
	s, env, _, _ := prepare(t, "opencode", Options{})
	require.Len(t, s.Files, 1)
	require.Equal(t, s.Files[0], env["OPENCODE_CONFIG"])
	for _, k := range []string{"OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_MODELS_FETCH", "OPENCODE_DISABLE_DEFAULT_PLUGINS"} {
		require.Equal(t, "1", env[k], k)
	}
	data, err := os.ReadFile(s.Files[0])
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(data, &cfg))
	require.Equal(t, "mock/mock-model", cfg["model"])
	require.Equal(t, "mock/mock-model", cfg["small_model"])
	prov := obj(obj(cfg["provider"])["mock"])
	require.Equal(t, "@ai-sdk/openai-compatible", prov["npm"])
	opts := obj(prov["options"])
	require.Equal(t, "http://127.0.0.1:4242/v1", opts["baseURL"])
	require.Equal(t, float64(60000), opts["chunkTimeout"])
	require.Equal(t, float64(60000), opts["timeout"])
	require.Equal(t, true, obj(obj(prov["models"])["mock-model"])["tool_call"])
	require.Equal(t, "allow", obj(cfg["permission"])["bash"])
}

func TestPrepareGemini(t *testing.T) {
	t.Parallel()
	s, env, home, _ := prepare(t, "gemini", Options{})
	require.Equal(t, []string{filepath.Join(home, ".gemini", "settings.json")}, s.Files)
	require.Equal(t, "http://127.0.0.1:4242", env["GOOGLE_GEMINI_BASE_URL"])
	require.Equal(t, DummyKey, env["GEMINI_API_KEY"])
	require.Equal(t, "true", env["GEMINI_CLI_TRUST_WORKSPACE"])
	require.Equal(t, "true", env["GEMINI_CLI_NO_RELAUNCH"])
	data, err := os.ReadFile(s.Files[0])
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(data, &cfg))
	require.Equal(t, "gemini-api-key", obj(obj(cfg["security"])["auth"])["selectedType"])
	require.Equal(t, float64(1), obj(cfg["general"])["maxAttempts"])
}

func TestPrepareIsIdempotent(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for range 2 {
		_, err := Prepare("codex", "http://127.0.0.1:1", filepath.Join(root, "h"), root)
		require.NoError(t, err)
	}
}

func TestPrepareErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Prepare("cursor", "http://127.0.0.1:1", dir, dir)
	require.ErrorIs(t, err, ErrUnknownAgent)
	for _, u := range []string{"", "127.0.0.1:1", "https://127.0.0.1:1", "http://"} {
		_, err = Prepare("claude", u, dir, dir)
		require.Error(t, err, u)
	}
	_, err = Prepare("claude", "http://127.0.0.1:1", "", dir)
	require.Error(t, err)
	_, err = Prepare("claude", "http://127.0.0.1:1", dir, "")
	require.Error(t, err)
	_, err = Prepare("claude", "http://127.0.0.1:1", dir, filepath.Join(dir, "missing"))
	require.Error(t, err)
	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	_, err = Prepare("gemini", "http://127.0.0.1:1", filepath.Join(blocker, "home"), dir)
	require.Error(t, err, "home under a regular file cannot be created")
}
