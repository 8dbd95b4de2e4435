package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness/registry"
	"github.com/stretchr/testify/require"
)

// loadError loads body as the project file and returns its error, which
// must be an *Error (exit 2).
func loadError(t *testing.T, body string) error {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, ProjectFileName), body)
	_, _, err := Load(LoadOptions{Cwd: dir})
	require.Error(t, err)
	var ce *Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, 2, ce.ExitCode())
	return err
}

// TestDeepModelsTableIsOneShortLine: [models] was encoded again and
// decoded by the registry, a cost quadratic in how deep its tables nest
// (5000 levels, a 10 KB file, hung every command), and the unknown-key
// error named every level: a, a.a, a.a.a, …. Keys nested past any
// setting are refused where they are, and an unknown key of [models] is
// named alone, without descending into it; many unknown keys make one
// short line.
func TestDeepModelsTableIsOneShortLine(t *testing.T) {
	t.Parallel()
	deep := func(n int) string { return "[models." + strings.Repeat("a.", n-1) + "a]\n" }
	err := loadError(t, deep(300))
	require.EqualError(t, err, fmt.Sprintf("harness.toml:1:%d: keys nested more than 16 deep", len("[models.a.")+2*15-1))
	// Under the depth bound: the first unknown key, alone.
	err = loadError(t, deep(12))
	require.EqualError(t, err, "harness.toml: models: unknown key: a")
	// Many unknown keys, one long: the first three, cut, and a count.
	var b strings.Builder
	b.WriteString("[models]\n" + strings.Repeat("z", 300) + " = 1\n")
	for i := range 100 {
		fmt.Fprintf(&b, "k%02d = 1\n", i)
	}
	b.WriteString("[models.prices.m]\ninputt = 1\n")
	err = loadError(t, b.String())
	require.EqualError(t, err, "harness.toml: models: unknown keys: k00, k01, k02 and 99 more")
	err = loadError(t, "[models]\n"+strings.Repeat("z", 300)+" = 1\n[models.prices.m]\ninputt = 1\n")
	require.EqualError(t, err, "harness.toml: models: unknown keys: prices.m.inputt, "+strings.Repeat("z", 40)+"…")
}

// TestLogDirIsTheFiles: log_dir = "~/harness-logs", the example's own
// value, made a directory named "~" in every directory harness ran in,
// and a relative log_dir was the working directory's while a relative
// binary in the same file was the file's. A leading "~/" is the home
// directory, a relative path the directory of the file that sets it; from
// the environment, a relative path stays the working directory's.
func TestLogDirIsTheFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	repo := filepath.Join(root, "repo")
	cwd := filepath.Join(repo, "sub")
	require.NoError(t, os.MkdirAll(cwd, 0o755))
	project := filepath.Join(repo, ProjectFileName)
	load := func(logDir string, env map[string]string, home string) (Config, error) {
		write(t, project, fmt.Sprintf("log_dir = %q\n", logDir))
		c, _, err := Load(LoadOptions{Cwd: cwd, Getenv: envMap(env), Home: home})
		return c, err
	}
	for _, tc := range []struct{ value, want string }{
		{"~/harness-logs", filepath.Join(home, "harness-logs")},
		{"~", home},
		{"logs", filepath.Join(repo, "logs")},
		{"../shared/logs", filepath.Join(root, "shared", "logs")},
		{"/var/log/harness", "/var/log/harness"},
	} {
		c, err := load(tc.value, nil, home)
		require.NoError(t, err, tc.value)
		require.Equal(t, tc.want, c.LogDir, tc.value)
	}
	c, err := load("logs", map[string]string{"HARNESS_LOG_DIR": "~/env-logs"}, home)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(home, "env-logs"), c.LogDir)
	c, err = load("logs", map[string]string{"HARNESS_LOG_DIR": "env-logs"}, home)
	require.NoError(t, err)
	require.Equal(t, "env-logs", c.LogDir)

	_, err = load("~/logs", nil, "")
	require.EqualError(t, err, `../harness.toml: log_dir: "~/logs" starts with ~ but the home directory is not known (HOME is not set)`)
	_, err = load("~bob/logs", nil, home)
	require.EqualError(t, err, `../harness.toml: log_dir: "~bob/logs" names another user's home (~NAME), which harness does not expand: use ~/ or another path`)
}

// TestConfigThatCannotBeLookedAtIsAnError: a user config that could not
// be stat'ed (a symbolic link loop, a link to nothing, a directory that
// cannot be searched) was skipped as if absent, its settings silently
// dropped, while the same project file stopped harness. Only a file that
// does not exist is skipped; anything else is an error naming it, for
// either file.
func TestConfigThatCannotBeLookedAtIsAnError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	loop := filepath.Join(dir, "loop", "config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(loop), 0o755))
	require.NoError(t, os.Symlink("config.toml", loop))
	dangling := filepath.Join(dir, "dangling", "config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(dangling), 0o755))
	require.NoError(t, os.Symlink("elsewhere.toml", dangling))

	_, _, err := Load(LoadOptions{UserFile: loop})
	require.EqualError(t, err, loop+": too many levels of symbolic links")
	var ce *Error
	require.ErrorAs(t, err, &ce)
	_, _, err = Load(LoadOptions{UserFile: dangling})
	require.EqualError(t, err, dangling+": a symbolic link to nothing")
	// The project file found by the walk up says the same.
	_, _, err = Load(LoadOptions{Cwd: filepath.Dir(dangling + "x")})
	require.NoError(t, err, "no harness.toml here")
	require.NoError(t, os.Symlink("elsewhere.toml", filepath.Join(filepath.Dir(dangling), ProjectFileName)))
	_, _, err = Load(LoadOptions{Cwd: filepath.Dir(dangling)})
	require.EqualError(t, err, filepath.Join(filepath.Dir(dangling), ProjectFileName)+": a symbolic link to nothing")

	// What is not there is skipped, its directory missing too.
	for _, p := range []string{filepath.Join(dir, "none.toml"), filepath.Join(dir, "no", "dir", "config.toml")} {
		present, err := Present(p)
		require.NoError(t, err, p)
		require.False(t, present, p)
		_, _, err = Load(LoadOptions{UserFile: p})
		require.NoError(t, err, p)
	}

	if os.Geteuid() != 0 { // root searches any directory
		locked := filepath.Join(dir, "locked")
		write(t, filepath.Join(locked, "config.toml"), "linger = \"1s\"\n")
		require.NoError(t, os.Chmod(locked, 0o600))
		t.Cleanup(func() { os.Chmod(locked, 0o700) })
		_, _, err = Load(LoadOptions{UserFile: filepath.Join(locked, "config.toml")})
		require.EqualError(t, err, filepath.Join(locked, "config.toml")+": permission denied")
	}
}

// TestModelNamesIgnoringCase: two aliases (or prices) of one file that
// differ only in case resolved at random (the registry lowercases names
// while walking a map); they are an error. Across files, the later one's
// replaces the earlier one's whatever its case, as the registry looks
// them up, and an agent named by an alias replaces its canonical name.
func TestModelNamesIgnoringCase(t *testing.T) {
	t.Parallel()
	err := loadError(t, "[models.aliases.Fast]\nclaude = \"one\"\n[models.aliases.fast]\nclaude = \"two\"\n")
	require.EqualError(t, err, `harness.toml: models.aliases: "Fast" and "fast" differ only in case (alias names ignore case)`)
	err = loadError(t, "[models.prices.GPT-X]\ninput = 1\n[models.prices.gpt-x]\ninput = 2\n")
	require.EqualError(t, err, `harness.toml: models.prices: "GPT-X" and "gpt-x" differ only in case (model ids ignore case)`)
	err = loadError(t, "[models.aliases.fast]\nclaude = \"one\"\nclaude-code = \"two\"\n")
	require.EqualError(t, err, `harness.toml: models.aliases.fast: "claude" and "claude-code" name the same agent`)

	root := t.TempDir()
	user := write(t, filepath.Join(root, "user.toml"), "[models.aliases.Fast]\nclaude-code = \"user\"\ncodex = \"user-codex\"\n[models.prices.GPT-X]\ninput = 1\n")
	write(t, filepath.Join(root, "p", ProjectFileName), "[models.aliases.fast]\nclaude = \"project\"\n[models.prices.gpt-x]\ninput = 2\n")
	c, _, err := Load(LoadOptions{Cwd: filepath.Join(root, "p"), UserFile: user})
	require.NoError(t, err)
	m, err := registry.Load("", &c.Models)
	require.NoError(t, err)
	id, _ := m.Resolve("FAST", "claude")
	require.Equal(t, "project", id)
	id, _ = m.Resolve("fast", "codex")
	require.Equal(t, "user-codex", id)
	p, _ := m.Price("gpt-x")
	require.Equal(t, 2.0, p.Input)
}

// TestWrongTypeForATableIsAnError: a value where harness reads a table
// (tool_timeouts = "5m") was warned as an unknown key and ignored, while
// a table where a value belongs was an error; both are errors now.
func TestWrongTypeForATableIsAnError(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`tool_timeouts = "5m"`:  `harness.toml: tool_timeouts: is a single value, not a table (write [tool_timeouts] and its keys below it)`,
		`mcp = ["1m"]`:          `harness.toml: mcp: is an array, not a table (write [mcp] and its keys below it)`,
		`bench = 4`:             `harness.toml: bench: is a single value, not a table (write [bench] and its keys below it)`,
		"[idle_timeout]\nx = 1": `harness.toml: idle_timeout: is a table, not a single value`,
	} {
		require.EqualError(t, loadError(t, body), want, body)
	}
}

// TestPricesAreBounded: a price of 1e308 made every estimate of its model
// infinite (and the warning blamed the agent); a price must be a number
// from 0 to registry.MaxPrice.
func TestPricesAreBounded(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		"input = 1e308":     `harness.toml: models.prices.m.input: 1e+308 is not a price (USD per million tokens, 0 to 1000000)`,
		"output = 1000001":  `harness.toml: models.prices.m.output: 1.000001e+06 is not a price (USD per million tokens, 0 to 1000000)`,
		"cache_read = inf":  `harness.toml: models.prices.m.cache_read: +Inf is not a price (USD per million tokens, 0 to 1000000)`,
		"cache_write = nan": `harness.toml: models.prices.m.cache_write: NaN is not a price (USD per million tokens, 0 to 1000000)`,
		`input = "1"`:       `harness.toml: models.prices.m.input: must be a number (USD per million tokens)`,
	} {
		require.EqualError(t, loadError(t, "[models.prices.m]\n"+body+"\n"), want, body)
	}
	c, _, err := Load(LoadOptions{ProjectFile: write(t, filepath.Join(t.TempDir(), ProjectFileName), "[models.prices.m]\ninput = 1000000\noutput = 0\n")})
	require.NoError(t, err)
	require.Equal(t, registry.MaxPrice, c.Models.Prices["m"].Input)
}
