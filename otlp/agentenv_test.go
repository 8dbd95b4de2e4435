package otlp

import (
	"slices"
	"strings"
	"testing"
)

// TestAgentEnvKeepsTheAgentsContentOff: Claude Code's exporter sends
// straight to the collector, unredacted, so harness turns every one of
// its content variables off, --otlp-content or not; the other agents get
// nothing.
func TestAgentEnvKeepsTheAgentsContentOff(t *testing.T) {
	cfg := Config{TracesURL: "http://127.0.0.1:4318/v1/traces"}
	for _, content := range []bool{false, true} {
		cfg.Content = content
		env := AgentEnv("claude", cfg)
		if !slices.Contains(env, "CLAUDE_CODE_ENABLE_TELEMETRY=1") {
			t.Fatalf("content %v: Claude Code's telemetry is not on: %q", content, env)
		}
		for _, k := range []string{"OTEL_LOG_USER_PROMPTS", "OTEL_LOG_ASSISTANT_RESPONSES", "OTEL_LOG_TOOL_DETAILS",
			"OTEL_LOG_TOOL_CONTENT", "OTEL_LOG_RAW_API_BODIES"} {
			if !slices.Contains(env, k+"=0") {
				t.Errorf("content %v: %s is not set to 0", content, k)
			}
		}
		for _, kv := range env {
			if strings.HasPrefix(kv, "OTEL_LOG_") && !strings.HasSuffix(kv, "=0") {
				t.Errorf("content %v: %s", content, kv)
			}
		}
	}
	for _, agent := range []string{"codex", "gemini", "cursor", "opencode"} {
		if env := AgentEnv(agent, cfg); env != nil {
			t.Errorf("%s: %q", agent, env)
		}
	}
}

// TestAgentArgs: where harness turns Claude Code's exporter on, its
// arguments get a --settings whose env turns every content variable off
// (its settings files' env is applied over its environment, --settings
// over them). Claude Code reads only the last --settings, so a user's own
// is merged into harness's, in its place: their keys kept, ours winning.
func TestAgentArgs(t *testing.T) {
	cfg := Config{TracesURL: "http://127.0.0.1:4318/v1/traces"}
	off := `"OTEL_LOG_ASSISTANT_RESPONSES":"0","OTEL_LOG_RAW_API_BODIES":"0","OTEL_LOG_TOOL_CONTENT":"0","OTEL_LOG_TOOL_DETAILS":"0","OTEL_LOG_USER_PROMPTS":"0"`
	ours := `--settings={"env":{` + off + `}}`
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"none", nil, []string{ours}},
		{"first, before a user's --", []string{"--debug", "--", "--settings={}"}, []string{ours, "--debug", "--", "--settings={}"}},
		{"inline, merged in its place", []string{"--x", `--settings= {"model":"m","env":{"FOO":"bar","OTEL_LOG_USER_PROMPTS":"1","otel_log_tool_content":"1"}} `, "--y"},
			[]string{"--x", `--settings={"env":{"FOO":"bar",` + off + `},"model":"m"}`, "--y"}},
		{"two arguments, one merged", []string{"--settings", `{"env":null}`, "--y"}, []string{ours, "--y"}},
		{"the last one counts", []string{"--settings={\"a\":1}", "--settings", `{"b":2}`},
			[]string{"--settings={\"a\":1}", `--settings={"b":2,"env":{` + off + `}}`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, protocol := range []string{"", "cli", "stream-json"} {
				got, err := AgentArgs("claude", protocol, cfg, c.args)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("protocol %q:\n got %q\nwant %q", protocol, got, c.want)
				}
			}
		})
	}

	// Nothing where harness turns no exporter on: another agent, ACP (its
	// adapter passes Claude Code no argument of harness's), or traces not
	// sent to an OTLP base URL.
	args := []string{"--settings", "{bad"}
	for _, c := range []struct {
		agent, protocol string
		cfg             Config
	}{{"codex", "", cfg}, {"gemini", "", cfg}, {"claude", "acp", cfg}, {"claude", "", Config{}},
		{"claude", "", Config{TracesURL: "http://c/custom"}}} {
		if got, err := AgentArgs(c.agent, c.protocol, c.cfg, args); err != nil || !slices.Equal(got, args) {
			t.Errorf("%s over %q to %q: %q, %v", c.agent, c.protocol, c.cfg.TracesURL, got, err)
		}
	}
}

// TestAgentArgsRefuses: a --settings harness cannot merge is refused in
// one line that quotes none of it (it may hold secrets). A settings file
// is refused too: merged, its content would go on the command line, where
// any local user reads it.
func TestAgentArgsRefuses(t *testing.T) {
	cfg := Config{TracesURL: "http://127.0.0.1:4318/v1/traces"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--settings"}, "claude: --settings has no value"},
		{[]string{"--settings= "}, "claude: --settings has no value"},
		{[]string{`--settings={"k":"sekrit",}`}, "claude: --settings (inline JSON) is not a JSON object"},
		{[]string{`--settings={"k":"sekrit"`}, "claude: --settings (inline JSON) is not a JSON object"},
		{[]string{"--settings", "[1]"}, "claude: --settings names a file, which --otlp cannot merge"}, // not inline: a file, as Claude Code reads it
		{[]string{"--settings", `{"env":["sekrit"]}`}, "claude: the env of --settings is not a JSON object"},
		{[]string{"--settings", "sekrit.json"}, "claude: --settings names a file, which --otlp cannot merge"},
		{[]string{"--settings=/abs/sekrit.json"}, "give the settings inline (--settings '{...}'), or run without --otlp"},
	} {
		_, err := AgentArgs("claude", "", cfg, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "sekrit") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestAgentExports: the exporter is turned on (AgentEnv) only where
// AgentArgs can keep its content off.
func TestAgentExports(t *testing.T) {
	cfg := Config{TracesURL: "http://127.0.0.1:4318/v1/traces"}
	for _, c := range []struct {
		agent, protocol string
		want            bool
	}{{"claude", "", true}, {"claude", "cli", true}, {"claude", "stream-json", true}, {"claude", "acp", false},
		{"codex", "", false}, {"opencode", "acp", false}} {
		if got := AgentExports(c.agent, c.protocol, cfg); got != c.want {
			t.Errorf("%s over %q: %v", c.agent, c.protocol, got)
		}
	}
}
