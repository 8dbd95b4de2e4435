package registry

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentharness/harness/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAgent(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"claude": "claude", "Claude-Code": "claude", "claudecode": "claude",
		"codex": "codex", "openai-codex": "codex",
		"cursor": "cursor", "cursor-agent": "cursor", "agent": "cursor",
		"opencode": "opencode", "open-code": "opencode",
		"gemini": "gemini", "gemini-cli": "gemini",
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a, ok := Agent(name)
			require.True(t, ok)
			require.Equal(t, want, a.ID)
			require.NotEmpty(t, a.Display)
			require.NotEmpty(t, a.CredentialEnv)
			require.NotEmpty(t, a.Flags)
		})
	}
	t.Run("unknown", func(t *testing.T) {
		t.Parallel()
		_, ok := Agent("aider")
		require.False(t, ok)
		_, ok = Canonical("")
		require.False(t, ok)
	})
	t.Run("copies-are-independent", func(t *testing.T) {
		t.Parallel()
		a, _ := Agent("claude")
		a.Flags[0] = "mutated"
		b, _ := Agent("claude")
		require.NotEqual(t, "mutated", b.Flags[0])
	})
	t.Run("aliases-unique", func(t *testing.T) {
		t.Parallel()
		seen := map[string]string{}
		for _, id := range AgentIDs() {
			a, _ := Agent(id)
			for _, n := range append([]string{a.ID}, a.Aliases...) {
				require.NotContains(t, seen, n, "name %q used by %s and %s", n, seen[n], a.ID)
				seen[n] = a.ID
			}
		}
		require.Equal(t, []string{"claude", "codex", "cursor", "opencode", "gemini", "oracle", "nop"}, AgentIDs())
	})
	t.Run("claude-flags", func(t *testing.T) {
		t.Parallel()
		a, _ := Agent("claude")
		require.Subset(t, a.Flags, []string{"--output-format", "--verbose", "--include-partial-messages"})
		c, _ := Agent("codex")
		require.Subset(t, c.Flags, []string{"exec", "--json"})
	})
}

func mustLoad(t *testing.T, cache string, project *File) *Models {
	t.Helper()
	m, err := Load(cache, project)
	require.NoError(t, err)
	return m
}

func TestBuiltinParses(t *testing.T) {
	t.Parallel()
	f, err := ParseFile("builtin", builtinTOML)
	require.NoError(t, err)
	require.NotEmpty(t, f.Updated)
	for _, alias := range []string{"sonnet", "opus", "haiku", "gpt-5", "gpt-5.5", "gpt-5-codex", "gemini-pro", "gemini-flash"} {
		require.Contains(t, f.Aliases, alias)
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	m := mustLoad(t, "", nil)
	cases := []struct {
		name, alias, agent, want string
		ok                       bool
	}{
		{"sonnet-claude", "sonnet", "claude", "claude-sonnet-4-5", true},
		{"sonnet-cursor", "sonnet", "cursor", "sonnet-4.5", true},
		{"sonnet-opencode", "Sonnet", "opencode", "anthropic/claude-sonnet-4-5", true},
		{"agent-alias", "sonnet", "claude-code", "claude-sonnet-4-5", true},
		{"gemini-pro", "gemini-pro", "gemini", "gemini-2.5-pro", true},
		{"unknown-alias-passes-through", "claude-opus-4-1-20250805", "claude", "claude-opus-4-1-20250805", false},
		{"alias-without-agent-id", "gemini-flash", "claude", "gemini-flash", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			id, ok := m.Resolve(c.alias, c.agent)
			require.Equal(t, c.want, id)
			require.Equal(t, c.ok, ok)
		})
	}
	require.True(t, m.IsAlias("gemini-flash"))
	require.False(t, m.IsAlias("gpt-4o"))
}

func TestPrice(t *testing.T) {
	t.Parallel()
	m := mustLoad(t, "", nil)
	sonnet := Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	cases := []struct {
		name, id string
		want     Price
		ok       bool
	}{
		{"exact", "claude-sonnet-4-5", sonnet, true},
		{"dated", "claude-sonnet-4-5-20250929", sonnet, true},
		{"vertex-dated", "claude-sonnet-4-5@20250929", sonnet, true},
		{"provider-prefix", "anthropic/claude-sonnet-4-5", sonnet, true},
		{"bracket-suffix", "claude-sonnet-4-5[1m]", sonnet, true},
		{"cursor-id", "sonnet-4.5", sonnet, true},
		{"alias-itself", "sonnet", sonnet, true},
		{"upper-case", "CLAUDE-SONNET-4-5", sonnet, true},
		{"openai-dated", "gpt-5-2025-08-07", Price{Input: 1.25, Output: 10, CacheRead: 0.125}, true},
		{"mini-is-not-gpt-5", "gpt-5-mini", Price{Input: 0.25, Output: 2, CacheRead: 0.025}, true},
		{"no-prefix-guessing", "gpt-5-nano", Price{}, false},
		{"unpriced", "gpt-5.5", Price{}, false},
		{"empty", "", Price{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for range 2 { // the second answer is the remembered one
				p, ok := m.Price(c.id)
				require.Equal(t, c.ok, ok)
				require.Equal(t, c.want, p)
			}
		})
	}
}

// BenchmarkPrice: a run looks its model's price up at every usage event.
func BenchmarkPrice(b *testing.B) {
	m, err := Load("", nil)
	require.NoError(b, err)
	for _, id := range []string{"claude-sonnet-4-5-20250929", "mock-model"} {
		b.Run(id, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.Price(id)
			}
		})
	}
}

func TestEstimate(t *testing.T) {
	t.Parallel()
	m := mustLoad(t, "", nil)
	u := event.Usage{InputTokens: 1_000_000, OutputTokens: 100_000, CacheReadTokens: 2_000_000,
		CacheWriteTokens: 10_000, ReasoningTokens: 50_000}
	usd, ok := m.Estimate("claude-sonnet-4-5-20250929", u)
	require.True(t, ok)
	require.InDelta(t, 3+1.5+0.6+0.0375, usd, 1e-9)
	_, ok = m.Estimate("mystery-model", u)
	require.False(t, ok)
}

func TestLayering(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cache := filepath.Join(dir, "models.toml")
	require.NoError(t, os.WriteFile(cache, []byte(`
[aliases.sonnet]
claude = "claude-sonnet-9"
[prices.claude-sonnet-9]
input = 1
output = 2
[prices."gpt-5.5"]
input = 5
output = 30
`), 0o600))

	t.Run("cache-over-builtin", func(t *testing.T) {
		t.Parallel()
		m := mustLoad(t, cache, nil)
		id, ok := m.Resolve("sonnet", "claude")
		require.True(t, ok)
		require.Equal(t, "claude-sonnet-9", id)
		id, _ = m.Resolve("sonnet", "cursor") // other agents of the alias stay
		require.Equal(t, "sonnet-4.5", id)
		p, ok := m.Price("gpt-5.5")
		require.True(t, ok)
		require.Equal(t, 30.0, p.Output)
		require.Equal(t, []string{"builtin", cache}, m.Sources())
	})
	t.Run("project-over-cache", func(t *testing.T) {
		t.Parallel()
		m := mustLoad(t, cache, &File{
			Aliases: map[string]map[string]string{"sonnet": {"claude-code": "claude-sonnet-project"}},
			Prices:  map[string]Price{"gpt-5.5": {Input: 7, Output: 7}},
		})
		id, _ := m.Resolve("sonnet", "claude")
		require.Equal(t, "claude-sonnet-project", id)
		p, _ := m.Price("gpt-5.5")
		require.Equal(t, Price{Input: 7, Output: 7}, p)
	})
	t.Run("missing-cache-is-fine", func(t *testing.T) {
		t.Parallel()
		mustLoad(t, filepath.Join(dir, "nope.toml"), nil)
	})
	t.Run("bad-cache-names-file", func(t *testing.T) {
		t.Parallel()
		bad := filepath.Join(t.TempDir(), "models.toml")
		require.NoError(t, os.WriteFile(bad, []byte("[prises.x]\ninput=1\n"), 0o600))
		_, err := Load(bad, nil)
		require.ErrorContains(t, err, bad)
		require.ErrorContains(t, err, "prises")
		var ce *CacheError
		require.ErrorAs(t, err, &ce, "a bad cache is told apart, so callers can fall back")
		require.Equal(t, bad, ce.Path)
		_, err = Load("", &File{Prices: map[string]Price{"m": {Input: -1}}})
		require.False(t, errors.As(err, &ce), "a bad project table is not the cache's fault")
	})
	t.Run("bad-project", func(t *testing.T) {
		t.Parallel()
		_, err := Load("", &File{Aliases: map[string]map[string]string{"x": {"aider": "m"}}})
		require.ErrorContains(t, err, `unknown agent "aider"`)
		_, err = Load("", &File{Prices: map[string]Price{"m": {Input: -1}}})
		require.ErrorContains(t, err, "prices.m.input")
	})
	t.Run("list", func(t *testing.T) {
		t.Parallel()
		m := mustLoad(t, "", nil)
		list := m.List()
		require.NotEmpty(t, list)
		for i := 1; i < len(list); i++ {
			require.Less(t, list[i-1].Alias, list[i].Alias)
		}
		require.NotEmpty(t, m.Prices())
	})
}

const goodModels = `
source = "test"
[aliases.fast]
codex = "gpt-fast"
[prices.gpt-fast]
input = 0.5
output = 1
`

func TestUpdate(t *testing.T) {
	t.Parallel()
	t.Run("from-file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		src := filepath.Join(dir, "src.toml")
		require.NoError(t, os.WriteFile(src, []byte(goodModels), 0o600))
		cache := filepath.Join(dir, "cache", "harness", "models.toml")
		res, err := Update(src, cache, nil)
		require.NoError(t, err)
		require.Equal(t, UpdateResult{Path: cache, Aliases: 1, Prices: 1}, res)
		m := mustLoad(t, cache, nil)
		id, ok := m.Resolve("fast", "codex")
		require.True(t, ok)
		require.Equal(t, "gpt-fast", id)
		entries, err := os.ReadDir(filepath.Dir(cache))
		require.NoError(t, err)
		require.Len(t, entries, 1, "no temporary file left behind")
	})
	t.Run("from-url", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/models.toml" {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write([]byte(goodModels))
		}))
		defer srv.Close()
		cache := filepath.Join(t.TempDir(), "models.toml")
		_, err := Update(srv.URL+"/models.toml", cache, nil)
		require.NoError(t, err)
		data, err := os.ReadFile(cache)
		require.NoError(t, err)
		require.Equal(t, goodModels, string(data))

		_, err = Update(srv.URL+"/missing", cache, nil)
		require.ErrorContains(t, err, "404")
	})
	t.Run("invalid-keeps-old-cache", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		cache := filepath.Join(dir, "models.toml")
		require.NoError(t, os.WriteFile(cache, []byte(goodModels), 0o600))
		for name, body := range map[string]string{
			"not-toml":      "this is { not toml",
			"unknown-key":   "[prises.x]\ninput = 1\n",
			"unknown-agent": "[aliases.x]\naider = \"m\"\n",
			"negative":      "[prices.x]\ninput = -3\n",
			"empty":         "source = \"x\"\n",
		} {
			_, err := Update("https://example.test/"+name, cache, func(string) ([]byte, error) {
				return []byte(body), nil
			})
			require.Error(t, err, name)
			data, rerr := os.ReadFile(cache)
			require.NoError(t, rerr)
			require.Equal(t, goodModels, string(data), name)
		}
	})
	t.Run("fetch-error", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("boom")
		_, err := Update("http://x/models.toml", filepath.Join(t.TempDir(), "m.toml"),
			func(string) ([]byte, error) { return nil, boom })
		require.ErrorIs(t, err, boom)
	})
	t.Run("missing-file", func(t *testing.T) {
		t.Parallel()
		_, err := Update(filepath.Join(t.TempDir(), "none.toml"), filepath.Join(t.TempDir(), "m.toml"), nil)
		require.ErrorIs(t, err, os.ErrNotExist)
	})
}

func TestDefaultCachePath(t *testing.T) {
	t.Parallel()
	got := DefaultCachePath(func(k string) string {
		if k == "XDG_CACHE_HOME" {
			return "/x/cache"
		}
		return ""
	})
	require.Equal(t, "/x/cache/harness/models.toml", got)
}

// The table is built on first use (Models.table): readers racing to be
// first all see the whole of it (go test -race).
func TestConcurrentFirstUse(t *testing.T) {
	t.Parallel()
	m := mustLoad(t, "", &File{Aliases: map[string]map[string]string{"mine": {"claude": "claude-mine-1"}}})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			id, ok := m.Resolve("mine", "claude")
			assert.True(t, ok)
			assert.Equal(t, "claude-mine-1", id)
			_, ok = m.Price("claude-sonnet-4-5")
			assert.True(t, ok)
		})
	}
	wg.Wait()
	require.Equal(t, []string{"builtin", "project"}, m.Sources())
}
