package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/execfile"
)

// TestDryRunShowsOTLPSettings: with --otlp, Claude Code runs with a
// --settings that keeps its exporter's content off (merged with the
// user's own, in its place), and --dry-run shows it as it would run; not
// without --otlp, nor over ACP (whose exporter harness leaves off). A
// --settings harness cannot merge is refused in one line that quotes
// none of it.
func TestDryRunShowsOTLPSettings(t *testing.T) {
	home := isolate(t)
	const off = `"OTEL_LOG_ASSISTANT_RESPONSES":"0","OTEL_LOG_RAW_API_BODIES":"0","OTEL_LOG_TOOL_CONTENT":"0","OTEL_LOG_TOOL_DETAILS":"0","OTEL_LOG_USER_PROMPTS":"0"`
	argv := func(args ...string) []string {
		t.Helper()
		r := invoke(t, "", append([]string{"run", "-a", "claude", "--binary", "/bin/true", "--dry-run", "--cwd", home, "-p", "hi"}, args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		var d struct{ Argv []string }
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
		return d.Argv
	}
	otlp := []string{"--otlp", "http://127.0.0.1:4318"}
	require.Contains(t, argv(otlp...), `--settings={"env":{`+off+`}}`)
	got := argv(append(otlp, "--", "--x", "--settings", `{"model":"m","env":{"A":"b","OTEL_LOG_TOOL_DETAILS":"1"}}`)...)
	require.Equal(t, []string{"--x", `--settings={"env":{"A":"b",` + off + `},"model":"m"}`, "--", "hi"}, got[len(got)-4:])
	for _, args := range [][]string{nil, append(otlp, "--protocol", "acp")} {
		for _, a := range argv(args...) {
			require.False(t, strings.HasPrefix(a, "--settings"), "%q: %s", args, a)
		}
	}

	r := invoke(t, "", append([]string{"run", "-a", "claude", "--binary", "/bin/true", "--dry-run", "-p", "hi"},
		append(otlp, "--", `--settings={"apiKey":"sekrit"`)...)...)
	require.Equal(t, exitUsage, r.code)
	require.Equal(t, "harness: --otlp: claude: --settings (inline JSON) is not a JSON object\n", r.stderr)
}

// TestDryRunListsOTLPEnv: with --otlp, --dry-run's env_keys hold the
// variables each run is given at its start (TRACEPARENT; Claude Code's
// own exporter's, where harness turns it on), exactly those a run gives
// the agent: a script that dumps its environment is run with the same
// flags.
func TestDryRunListsOTLPEnv(t *testing.T) {
	home := isolate(t)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OTEL_") || k == "TRACEPARENT" {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	dump := filepath.Join(home, "env.out")
	bin := filepath.Join(home, "agent")
	require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\nenv > "+dump+"\n"), 0o755))
	added := func(keys []string) []string {
		var out []string
		for _, k := range keys {
			if strings.HasPrefix(k, "OTEL_") || strings.HasPrefix(k, "CLAUDE_CODE_") || k == "TRACEPARENT" {
				out = append(out, k)
			}
		}
		sort.Strings(out)
		return out
	}
	for _, tc := range []struct {
		agent  string
		args   []string
		claude bool // Claude Code's exporter is on
	}{
		{"claude", []string{"--otlp", "http://127.0.0.1:9/"}, true},
		{"claude", []string{"--otlp", "http://127.0.0.1:9/", "--protocol", "acp"}, false},
		{"codex", []string{"--otlp", "http://127.0.0.1:9/"}, false},
		{"claude", nil, false},
	} {
		name := fmt.Sprintf("%s %q", tc.agent, tc.args)
		args := append([]string{"run", "-a", tc.agent, "--binary", bin, "--cwd", home, "-p", "hi", "--no-log"}, tc.args...)
		r := invoke(t, "", append(args, "--dry-run")...)
		require.Equal(t, 0, r.code, r.stderr)
		var d struct {
			EnvKeys []string `json:"env_keys"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), name)
		shown := added(d.EnvKeys)
		require.Equal(t, len(tc.args) > 0, slices.Contains(shown, "TRACEPARENT"), name)
		require.Equal(t, tc.claude, slices.Contains(shown, "OTEL_LOG_TOOL_DETAILS"), name)
		os.Remove(dump)
		invoke(t, "", args...) // over ACP the script's silence fails the run: its environment is what counts
		b, err := os.ReadFile(dump)
		require.NoError(t, err, name)
		var got []string
		for _, kv := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			k, _, _ := strings.Cut(kv, "=")
			got = append(got, k)
		}
		require.Equal(t, shown, added(got), name)
	}
}
