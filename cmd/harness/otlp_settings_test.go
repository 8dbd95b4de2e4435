package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
