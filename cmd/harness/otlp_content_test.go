package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/agentharness/harness/internal/otlptest"
)

// rawCollector is an OTLP/HTTP endpoint on 127.0.0.1 that keeps every
// request body, whatever its signal (Claude Code's exporter sends logs
// too, which otlptest.Receiver refuses).
type rawCollector struct {
	URL    string
	mu     sync.Mutex
	bodies map[string][][]byte // by path
}

func newRawCollector(t *testing.T) *rawCollector {
	c := &rawCollector{bodies: map[string][][]byte{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.bodies[r.URL.Path] = append(c.bodies[r.URL.Path], body)
		c.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

func (c *rawCollector) got() map[string][][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][][]byte{}
	for k, v := range c.bodies {
		out[k] = append([][]byte(nil), v...)
	}
	return out
}

// realClaude is the pinned Claude Code of 'make agents' (make test
// installs it): HARNESS_AGENTS_DIR, else the repository's .agents. Read
// before isolate, which clears HARNESS_*.
func realClaude(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("HARNESS_AGENTS_DIR")
	if dir == "" {
		dir = filepath.Join(pkgDir, "..", "..", ".agents")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", "claude")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the real Claude Code is not installed (%v): run 'make agents' (make test does)", err)
	}
	return bin
}

// TestOTLPContentStaysInHarness: with --otlp --otlp-content, the real
// Claude Code (on the scripted model) exports its own traces and logs to
// the collector, and neither carries an --env value or a secret a tool
// printed: harness cannot redact what the agent's exporter sends, so it
// keeps the agent's content variables off, over the environment it
// inherits and over --env, and, with a --settings of its own, over the
// env of Claude Code's settings files (user settings, ~/.claude.json;
// its project settings can only turn them off), merged with the user's
// own --settings, whose other keys stay. Over ACP, where no argument of
// harness's reaches Claude Code, its exporter is not turned on. Harness's
// own content spans are there, redacted.
func TestOTLPContentStaysInHarness(t *testing.T) {
	claude := realClaude(t)
	const envSecret, printed = "envsekrit789", "hunter2abc"
	on := `{"env": {"OTEL_LOG_USER_PROMPTS": "1", "OTEL_LOG_ASSISTANT_RESPONSES": "1", "OTEL_LOG_TOOL_DETAILS": "1",
		"OTEL_LOG_TOOL_CONTENT": "1", "OTEL_LOG_RAW_API_BODIES": "1"}}`
	for _, c := range []struct {
		name     string
		env      map[string]string // harness's own environment
		settings bool              // Claude Code's settings files turn every content variable on
		args     []string
		mine     string // what the tool prints of MINE, set by the user's own --settings
		acp      bool
	}{
		{name: "flag"},
		{name: "inherited and --env", env: map[string]string{"OTEL_LOG_USER_PROMPTS": "1",
			"OTEL_LOG_ASSISTANT_RESPONSES": "1", "OTEL_LOG_TOOL_DETAILS": "1", "OTEL_LOG_TOOL_CONTENT": "1",
			"OTEL_LOG_RAW_API_BODIES": "1"}, args: []string{"--env", "OTEL_LOG_TOOL_DETAILS=1", "--env", "OTEL_LOG_USER_PROMPTS=true"}},
		{name: "settings files", settings: true},
		{name: "own --settings", settings: true, mine: "kept",
			args: []string{"--", "--settings", `{"env": {"MINE": "kept", "OTEL_LOG_TOOL_DETAILS": "1", "OTEL_LOG_USER_PROMPTS": "1"}}`}},
		{name: "stream-json", settings: true, args: []string{"--protocol", "stream-json"}},
		// Exported as it goes, not at an exit ACP may not wait for: were
		// the exporter on, it would send.
		{name: "acp", settings: true, acp: true, args: []string{"--protocol", "acp"},
			env: map[string]string{"OTEL_TRACES_EXPORT_INTERVAL": "100", "OTEL_LOGS_EXPORT_INTERVAL": "100"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := isolate(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			scenario := filepath.Join(home, "secret.toml")
			require.NoError(t, os.WriteFile(scenario, []byte(`name = "secret"
[[turn]]
text = ["running"]
[[turn.tool]]
kind = "shell"
command = "echo `+envSecret+` password=`+printed+` mine=$MINE"
[[turn]]
text = ["DONE"]
`), 0o644))
			col := newRawCollector(t)
			bin := claude
			if c.acp {
				bin = filepath.Join(filepath.Dir(claude), "claude-agent-acp")
			}
			args := []string{"run", "-a", "claude", "--binary", bin, "--mock", scenario, "-p", "hi",
				"--otlp", col.URL, "--otlp-content", "--env", "MYKEY=" + envSecret, "--idle-timeout", "90s", "--timeout", "2m"}
			if c.settings {
				// --mock gives Claude Code a home of its own: its user
				// settings are where CLAUDE_CONFIG_DIR says, ~/.claude.
				dot := filepath.Join(home, ".claude")
				project := filepath.Join(home, "project")
				for _, f := range []string{filepath.Join(dot, "settings.json"), filepath.Join(dot, ".claude.json"),
					filepath.Join(project, ".claude", "settings.json"), filepath.Join(project, ".claude", "settings.local.json")} {
					require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o755))
					require.NoError(t, os.WriteFile(f, []byte(on), 0o644))
				}
				args = append(args, "--env", "CLAUDE_CONFIG_DIR="+dot, "--cwd", project)
			}
			res := invoke(t, "", append(args, c.args...)...)
			require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
			require.Empty(t, res.stderr)
			require.Contains(t, res.stdout, printed, "the tool ran: its output is in the stream")
			if c.mine != "" {
				require.Contains(t, res.stdout, "mine="+c.mine, "the user's --settings reached the tool's environment")
			}

			// Claude Code flushes its exporter before it prints its
			// result, harness its own before it exits: all is here.
			got := col.got()
			for path, bodies := range got {
				for _, b := range bodies {
					for _, secret := range []string{envSecret, printed} {
						require.False(t, bytes.Contains(b, []byte(secret)), "%q reached the collector in a request to %s", secret, path)
					}
				}
			}
			var agent, ours []ptrace.Span
			for _, b := range got["/v1/traces"] {
				req := ptraceotlp.NewExportRequest()
				require.NoError(t, req.UnmarshalProto(b))
				for _, s := range otlptest.Spans(req.Traces()) {
					if strings.HasPrefix(s.Name(), "claude_code.") {
						agent = append(agent, s)
					}
					if _, ok := s.Attributes().Get("gen_ai.tool.call.arguments"); ok {
						ours = append(ours, s)
					}
				}
			}
			if c.acp {
				require.Empty(t, got["/v1/logs"], "Claude Code's exporter, over ACP")
				require.Empty(t, agent, "Claude Code's exporter, over ACP")
			} else {
				require.NotEmpty(t, got["/v1/logs"], "Claude Code's exporter sent no logs")
				require.True(t, slices.ContainsFunc(agent, func(s ptrace.Span) bool { return s.Name() == "claude_code.tool" }),
					"Claude Code's exporter sent no claude_code.tool span")
			}
			require.Len(t, ours, 1, "harness's content span of the tool call")
			if args0, _ := ours[0].Attributes().Get("gen_ai.tool.call.arguments"); !c.acp { // ACP's tool_start carries no input
				require.Contains(t, args0.Str(), "[REDACTED]", "harness's content, redacted")
			}
		})
	}
}
