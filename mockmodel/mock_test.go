package mockmodel

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/internal/privtmp"
)

// TestPoint: an agent is wired by its own wiring (given the server's URL
// and a fresh HOME, set in its env), an agent without one cannot use the
// mock; Close removes every home.
func TestPoint(t *testing.T) {
	m, err := StartMock("text", "")
	require.NoError(t, err)
	work := t.TempDir()

	var home string
	model, env, err := m.Point("toy", work, func(baseURL, h, workdir string) (string, []string, error) {
		home = h
		require.Equal(t, m.srv.URL(), baseURL)
		require.Equal(t, work, workdir)
		require.DirExists(t, h)
		return "toy-model", []string{"TOY_BASE_URL=" + baseURL}, nil
	})
	require.NoError(t, err)
	require.Equal(t, "toy-model", model)
	require.Equal(t, []string{"HOME=" + home, "PWD=" + work,
		"XDG_CACHE_HOME=" + home + "/.cache", "XDG_CONFIG_HOME=" + home + "/.config",
		"XDG_DATA_HOME=" + home + "/.local/share", "XDG_STATE_HOME=" + home + "/.local/state",
		"TOY_BASE_URL=" + m.srv.URL()}, env)

	_, _, err = m.Point("toy", work, func(string, string, string) (string, []string, error) { return "", nil, errors.New("boom") })
	require.ErrorContains(t, err, "boom")
	_, _, err = m.Point("cursor", work, builtin(t, "cursor").Mock)
	require.EqualError(t, err, "mock: cursor cannot run on the scripted model (it talks to its own service only)")
	_, _, err = m.Point("claude", filepath.Join(work, "missing"), builtin(t, "claude").Mock)
	require.ErrorContains(t, err, "is not a directory")

	require.NoError(t, m.Close())
	_, err = os.Stat(filepath.Dir(home))
	require.True(t, os.IsNotExist(err), "the homes are removed")
}

// pointed is what Point gave one built-in agent.
type pointed struct {
	model string
	env   map[string]string
	home  string
	files []string // written under home
}

// TestBuiltinWiring: each built-in agent's wiring, through Point, gives
// the CLI a throwaway home with its config, the server's URL and a dummy
// key, and leaves the work directory alone.
func TestBuiltinWiring(t *testing.T) {
	m, err := StartMock("text", "")
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	base := m.srv.URL()
	point := func(t *testing.T, id string) pointed {
		t.Helper()
		a := builtin(t, id)
		work := t.TempDir()
		model, envs, err := m.Point(a.Info.ID, work, a.Mock)
		require.NoError(t, err)
		env := envMap(t, envs)
		p := pointed{model: model, env: env, home: env["HOME"]}
		require.True(t, strings.HasPrefix(p.home, m.root+"/"), p.home)
		require.Equal(t, work, env["PWD"])
		for _, k := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
			require.True(t, strings.HasPrefix(env[k], p.home+"/"), k)
			require.DirExists(t, env[k])
		}
		require.NoError(t, filepath.WalkDir(p.home, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				fi, err := d.Info()
				require.NoError(t, err)
				require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), path)
				p.files = append(p.files, path)
			}
			return err
		}))
		entries, err := os.ReadDir(work)
		require.NoError(t, err)
		require.Empty(t, entries, "the workdir is not polluted")
		return p
	}

	t.Run("claude", func(t *testing.T) {
		p := point(t, "claude")
		require.Equal(t, "claude-sonnet-4-5", p.model)
		require.Empty(t, p.files)
		require.Equal(t, base, p.env["ANTHROPIC_BASE_URL"])
		require.Equal(t, adapters.MockKey, p.env["ANTHROPIC_API_KEY"])
		require.Equal(t, "1", p.env["IS_SANDBOX"])
		require.Equal(t, "1", p.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"])
		require.Equal(t, "0", p.env["CLAUDE_CODE_MAX_RETRIES"])
		require.Equal(t, "60000", p.env["CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS"])
		require.Equal(t, "60000", p.env["API_TIMEOUT_MS"])
		require.Equal(t, "1", p.env["CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK"])
		require.Equal(t, filepath.Join(p.home, ".claude"), p.env["CLAUDE_CONFIG_DIR"])
		require.DirExists(t, p.env["CLAUDE_CONFIG_DIR"])
	})

	t.Run("codex", func(t *testing.T) {
		p := point(t, "codex")
		require.Equal(t, "gpt-5.5", p.model)
		codexHome := filepath.Join(p.home, ".codex")
		require.Equal(t, codexHome, p.env["CODEX_HOME"])
		require.Equal(t, adapters.MockKey, p.env["MOCK_OPENAI_KEY"])
		require.Equal(t, []string{filepath.Join(codexHome, "config.toml")}, p.files)
		data, err := os.ReadFile(p.files[0])
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
		require.False(t, cfg.CheckForUpdate)
		pr := cfg.Providers["mock"]
		require.Equal(t, base+"/v1", pr.BaseURL)
		require.Equal(t, "MOCK_OPENAI_KEY", pr.EnvKey)
		require.Equal(t, "responses", pr.WireAPI)
		require.Equal(t, 0, pr.RequestRetry)
		require.Equal(t, 0, pr.StreamRetry)
		require.Equal(t, 60000, pr.IdleMS)
		fi, err := os.Stat(codexHome)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
		// Wiring the same home again rewrites the config.
		_, _, err = builtin(t, "codex").Mock(base, p.home, p.env["PWD"])
		require.NoError(t, err)
	})

	t.Run("opencode", func(t *testing.T) {
		p := point(t, "opencode")
		require.Equal(t, "mock/mock-model", p.model)
		require.Len(t, p.files, 1)
		require.Equal(t, p.files[0], p.env["OPENCODE_CONFIG"])
		for _, k := range []string{"OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_MODELS_FETCH", "OPENCODE_DISABLE_DEFAULT_PLUGINS"} {
			require.Equal(t, "1", p.env[k], k)
		}
		cfg := readJSON(t, p.files[0])
		require.Equal(t, "mock/mock-model", cfg["model"])
		require.Equal(t, "mock/mock-model", cfg["small_model"])
		prov := obj(obj(cfg["provider"])["mock"])
		require.Equal(t, "@ai-sdk/openai-compatible", prov["npm"])
		opts := obj(prov["options"])
		require.Equal(t, base+"/v1", opts["baseURL"])
		require.Equal(t, float64(60000), opts["chunkTimeout"])
		require.Equal(t, float64(60000), opts["timeout"])
		require.Equal(t, true, obj(obj(prov["models"])["mock-model"])["tool_call"])
		require.Equal(t, "allow", obj(cfg["permission"])["bash"])
	})

	t.Run("gemini", func(t *testing.T) {
		p := point(t, "gemini")
		require.Equal(t, "gemini-2.5-flash", p.model)
		require.Equal(t, []string{filepath.Join(p.home, ".gemini", "settings.json")}, p.files)
		require.Equal(t, base, p.env["GOOGLE_GEMINI_BASE_URL"])
		require.Equal(t, adapters.MockKey, p.env["GEMINI_API_KEY"])
		require.Equal(t, "true", p.env["GEMINI_CLI_TRUST_WORKSPACE"])
		require.Equal(t, "true", p.env["GEMINI_CLI_NO_RELAUNCH"])
		cfg := readJSON(t, p.files[0])
		require.Equal(t, "gemini-api-key", obj(obj(cfg["security"])["auth"])["selectedType"])
		require.Equal(t, float64(1), obj(cfg["general"])["maxAttempts"])
	})

	t.Run("unwritable-home", func(t *testing.T) {
		blocker := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(blocker, nil, 0o600))
		_, _, err := builtin(t, "gemini").Mock(base, filepath.Join(blocker, "home"), t.TempDir())
		require.Error(t, err, "home under a regular file cannot be created")
	})
}

// builtin is a built-in agent, as the CLI looks it up.
func builtin(t *testing.T, id string) harness.Agent {
	t.Helper()
	a, err := harness.Lookup(id)
	require.NoError(t, err)
	return a
}

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

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(data, &cfg))
	return cfg
}

// TestMockHomesSweptWhenStale: a Mock's homes are a locked directory of
// the user's cache: one a harness killed with SIGKILL left (unlocked, not
// modified for a while) goes with the next StartMock, one of a live Mock
// (however old) or one too young to tell stays, and Close removes its
// own, what an agent left read-only there too. Before, each was a plain
// temporary directory, left for ever by a killed bench.
func TestMockHomesSweptWhenStale(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	old := time.Now().Add(-2 * privtmp.StaleAge)
	live, err := StartMock("text", "")
	require.NoError(t, err)
	base := filepath.Dir(live.root)
	killed := filepath.Join(base, "run-killed")
	young := filepath.Join(base, "run-young")
	for _, dir := range []string{killed, young} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "claude-1", "go", "pkg", "mod"), 0o700))
		require.NoError(t, os.Chmod(filepath.Join(dir, "claude-1", "go", "pkg", "mod"), 0o500))
	}
	for _, dir := range []string{killed, live.root} {
		require.NoError(t, os.Chtimes(dir, old, old))
	}

	next, err := StartMock("text", "")
	require.NoError(t, err)
	require.NoDirExists(t, killed, "left by a killed harness")
	require.DirExists(t, live.root, "in use")
	require.DirExists(t, young, "too young to tell")

	_, _, err = next.Point("toy", t.TempDir(), func(_, home, _ string) (string, []string, error) {
		return "toy", nil, os.Chmod(filepath.Join(home, ".cache"), 0o500)
	})
	require.NoError(t, err)
	require.NoError(t, next.Close())
	require.NoError(t, live.Close())
	require.NoDirExists(t, next.root)
	require.NoDirExists(t, live.root)
	require.NoError(t, os.Chmod(filepath.Join(young, "claude-1", "go", "pkg", "mod"), 0o700))
}

// TestPointKept: PointKept gives an agent in a workdir the same home from
// one Mock (one harness) to the next, with what the last run left there
// (the sessions a resume needs), and Close keeps it; while another Mock
// holds it, a throwaway home, removed on Close, serves; another workdir
// has a home of its own (the same one through a link); a kept home
// unused for keptUnused is removed. An
// agent that calls no model gets no home: nothing is kept, and nothing
// is thrown away.
func TestPointKept(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	work, other := t.TempDir(), t.TempDir()
	homeOf := func(m *Mock, workdir string, wantThrowaway bool) string {
		var home string
		_, _, throwaway, err := m.PointKept("toy", workdir, func(_, h, _ string) (string, []string, error) {
			home = h
			return "toy", nil, nil
		})
		require.NoError(t, err)
		require.Equal(t, wantThrowaway, throwaway, home)
		return home
	}
	first, err := StartMock("text", "")
	require.NoError(t, err)
	kept := homeOf(first, work, false)
	require.Equal(t, filepath.Dir(first.root), filepath.Dir(kept))
	require.Regexp(t, `^kept-toy-[0-9a-f]{16}$`, filepath.Base(kept))
	require.NoError(t, os.WriteFile(filepath.Join(kept, "session"), []byte("s"), 0o600))

	second, err := StartMock("text", "")
	require.NoError(t, err)
	throwaway := homeOf(second, work, true)
	require.Equal(t, second.root, filepath.Dir(throwaway), "held by the first: a throwaway home")
	otherKept := homeOf(second, other, false)
	require.NotEqual(t, kept, otherKept)
	require.Equal(t, filepath.Dir(kept), filepath.Dir(otherKept))

	require.NoError(t, first.Close())
	require.NoError(t, second.Close())
	require.FileExists(t, filepath.Join(kept, "session"), "kept after Close")
	require.DirExists(t, otherKept)
	require.NoDirExists(t, throwaway)

	old := time.Now().Add(-keptUnused - time.Hour)
	require.NoError(t, os.Chtimes(otherKept, old, old))
	third, err := StartMock("text", "")
	require.NoError(t, err)
	require.Equal(t, kept, homeOf(third, work, false))
	require.FileExists(t, filepath.Join(kept, "session"), "what the first run left, for the next")
	require.NoDirExists(t, otherKept, "unused for too long")

	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(work, link))
	require.NoError(t, third.Close())
	fourth, err := StartMock("text", "")
	require.NoError(t, err)
	defer fourth.Close()
	require.Equal(t, kept, homeOf(fourth, link, false), "the directory through a link")

	model, env, none, err := fourth.PointKept("nop", work, nil)
	require.NoError(t, err)
	require.False(t, none)
	require.Empty(t, model)
	require.Empty(t, env)
}

// TestServerIDsDifferFromServerToServer: two servers never give the same
// id, so that a session resumed against a new server (run --mock
// --resume) gets ids unlike those of the calls it holds.
func TestServerIDsDifferFromServerToServer(t *testing.T) {
	var ids []string
	for range 2 {
		s, err := Start(Config{})
		require.NoError(t, err)
		ids = append(ids, s.nextID("toolu_mock"))
		require.NoError(t, s.Close())
	}
	require.NotEqual(t, ids[0], ids[1])
	for _, id := range ids {
		require.Regexp(t, `^toolu_mock[0-9a-f]{8}000001$`, id)
	}
}
