package codex

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

const testdata = "../../testdata/codex"

func TestGolden(t *testing.T) {
	t.Parallel()
	seen := adaptertest.Golden(t, New(), testdata)
	for _, tp := range []event.Type{event.TypeSessionStart, event.TypeMessage, event.TypeReasoning,
		event.TypeToolStart, event.TypeToolEnd, event.TypeUsage, event.TypeWarning, event.TypeError, event.TypeResult} {
		require.True(t, seen[tp], "no golden has a %s event", tp)
	}
}

func TestCommand(t *testing.T) {
	t.Parallel()
	base := []string{"codex", "exec", "--json", "--skip-git-repo-check"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name string
		task adapters.Task
		want []string
	}{
		{"default-full-access", adapters.Task{Prompt: "hi"},
			cat(base, []string{"--dangerously-bypass-approvals-and-sandbox", "--", "hi"})},
		{"read-only-model-cwd", adapters.Task{Prompt: "hi", Model: "gpt-5.5", Cwd: "/w", Permissions: adapters.ReadOnly},
			cat(base, []string{"-m", "gpt-5.5", "-C", "/w", "-s", "read-only", "--", "hi"})},
		{"resume-after-options", adapters.Task{Prompt: "more", Resume: "01a1fc8c-0bca", ExtraArgs: []string{"-c", "x=1"}},
			cat(base, []string{"--dangerously-bypass-approvals-and-sandbox", "-c", "x=1", "resume", "01a1fc8c-0bca", "--", "more"})},
		{"prompt-starting-with-dash", adapters.Task{Prompt: "--help me"},
			cat(base, []string{"--dangerously-bypass-approvals-and-sandbox", "--", "--help me"})},
		{"prompt-named-like-subcommand", adapters.Task{Prompt: "resume"},
			cat(base, []string{"--dangerously-bypass-approvals-and-sandbox", "--", "resume"})},
		{"append-system-prompt", adapters.Task{Prompt: "hi", AppendSystemPrompt: "Be \"brief\"\n\\ok"},
			cat(base, []string{"--dangerously-bypass-approvals-and-sandbox", "-c", `developer_instructions="Be \"brief\"\n\\ok"`, "--", "hi"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd, err := New().Command("codex", tt.task)
			require.NoError(t, err)
			require.Equal(t, tt.want, cmd.Argv)
			require.Equal(t, len(cmd.Argv)-1, cmd.PromptIndex)
			require.Equal(t, tt.task.Prompt, cmd.Argv[cmd.PromptIndex])
			require.Empty(t, cmd.Stdin)
		})
	}
}

func TestCommandErrors(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		task adapters.Task
		want error
	}{
		"max-turns":     {adapters.Task{Prompt: "x", MaxTurns: 3}, ErrMaxTurns},
		"system-prompt": {adapters.Task{Prompt: "x", SystemPrompt: "you are"}, ErrSystemPrompt},
		"bad-mode":      {adapters.Task{Prompt: "x", Permissions: "yolo"}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := New().Command("codex", tc.task)
			require.Error(t, err)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
			}
		})
	}
}

func TestTOMLString(t *testing.T) {
	t.Parallel()
	require.Equal(t, `"true"`, tomlString("true"))
	require.Equal(t, `"a\u0001b\tc"`, tomlString("a\x01b\tc"))
	require.Equal(t, `"é"`, tomlString("é"))
}

// parse runs lines through one parser and returns every body.
func parse(t *testing.T, lines ...string) ([]event.Body, []bool) {
	t.Helper()
	return adaptertest.ParseLines(New().NewParser(), lines...)
}

func TestParseUsage(t *testing.T) {
	t.Parallel()
	bodies, known := parse(t,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"interim"}}`,
		`{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"final"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":600,"cache_write_input_tokens":100,"output_tokens":50,"reasoning_output_tokens":20}}`)
	require.Equal(t, []bool{true, true, true, true}, known)
	require.Len(t, bodies, 4)
	require.Equal(t, &event.Usage{InputTokens: 300, CacheReadTokens: 600, CacheWriteTokens: 100, OutputTokens: 50, ReasoningTokens: 20}, bodies[2])
	require.Equal(t, &event.Result{Status: event.ResultSuccess, Text: "final"}, bodies[3])
}

func TestParseCommandStatus(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		item, status string
		exit         *int
	}{
		"ok":       {`"exit_code":0,"status":"completed"`, event.StatusOK, event.Int(0)},
		"nonzero":  {`"exit_code":2,"status":"completed"`, event.StatusError, event.Int(2)},
		"failed":   {`"exit_code":null,"status":"failed"`, event.StatusError, nil},
		"declined": {`"exit_code":null,"status":"declined"`, event.StatusDenied, nil},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bodies, _ := parse(t, `{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"ls","aggregated_output":"out",`+tc.item+`}}`)
			require.Len(t, bodies, 2, "a command seen only completed yields a start and an end")
			ts := bodies[0].(*event.ToolStart)
			require.Equal(t, "ls", ts.Command)
			require.Equal(t, event.KindShell, ts.Kind)
			te := bodies[1].(*event.ToolEnd)
			require.Equal(t, tc.status, te.Status)
			require.Equal(t, tc.exit, te.ExitCode)
			require.Equal(t, "out", te.Output)
		})
	}
}

func TestParseFileChangeDiff(t *testing.T) {
	t.Parallel()
	bodies, _ := parse(t, `{"type":"item.completed","item":{"id":"i","type":"file_change","changes":[{"path":"a.go","kind":"update","unified_diff":"--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n"},{"path":"b.go","kind":"update"}],"status":"completed"}}`)
	te := bodies[1].(*event.ToolEnd)
	require.Equal(t, event.KindEdit, te.Kind)
	require.Equal(t, []string{"a.go", "b.go"}, te.Paths)
	require.Equal(t, "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n", te.Diff)
}

func TestParseTodoLifecycle(t *testing.T) {
	t.Parallel()
	bodies, _ := parse(t,
		`{"type":"item.started","item":{"id":"t","type":"todo_list","items":[{"text":"a","completed":false}]}}`,
		`{"type":"item.updated","item":{"id":"t","type":"todo_list","items":[{"text":"a","completed":true}]}}`,
		`{"type":"item.completed","item":{"id":"t","type":"todo_list","items":[{"text":"a","completed":true}]}}`)
	require.Len(t, bodies, 2)
	require.IsType(t, &event.ToolStart{}, bodies[0])
	require.Equal(t, "[x] a\n", bodies[1].(*event.ToolEnd).Output)
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	bodies, _ := parse(t,
		`{"type":"error","message":"Reconnecting... 2/5 (stream disconnected before completion: idle timeout waiting for SSE)"}`,
		`{"type":"error","message":"unexpected status 429 Too Many Requests"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `+"`gpt-5-codex`"+` not found."}}`,
		`{"type":"turn.failed","error":{"message":"stream disconnected before completion: idle timeout waiting for SSE"}}`)
	require.Equal(t, event.WarnAgentRetry, bodies[0].(*event.Warning).Code)
	e := bodies[1].(*event.Error)
	require.Equal(t, event.ClassRateLimit, e.Class)
	require.False(t, e.Fatal)
	require.Equal(t, event.WarnAgentWarning, bodies[2].(*event.Warning).Code)
	e = bodies[3].(*event.Error)
	require.Equal(t, event.ErrAgentError, e.Code)
	require.Equal(t, event.ClassNetwork, e.Class)
	require.Equal(t, event.ResultError, bodies[4].(*event.Result).Status)
}

func TestParseLegacyReportedOnce(t *testing.T) {
	t.Parallel()
	for name, lines := range map[string][]string{
		"legacy": {`{"id":"0","msg":{"type":"task_started"}}`, `{"id":"0","msg":{"type":"agent_message","message":"x"}}`,
			`{"type":"turn.completed","usage":{"input_tokens":1}}`},
		"transitional": {`{"type":"session.created","session_id":"s"}`,
			`{"type":"item.completed","item":{"id":"i","item_type":"assistant_message","text":"x"}}`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bodies, known := parse(t, lines...)
			require.Len(t, bodies, 1)
			e := bodies[0].(*event.Error)
			require.Equal(t, event.ErrParseError, e.Code)
			require.Contains(t, e.Message, "codex ≤ 0.43")
			require.Contains(t, e.Message, "upgrade")
			for _, k := range known {
				require.False(t, k)
			}
		})
	}
}

func TestParseGarbage(t *testing.T) {
	t.Parallel()
	for _, l := range []string{"", "Reading additional input from stdin...", "{", `{"type":"x"}`, `[]`, `{"type":"item.completed"}`, `{"type":"item.completed","item":{"type":"zzz"}}`} {
		bodies, known := parse(t, l)
		require.Empty(t, bodies, "line %q", l)
		require.Equal(t, []bool{false}, known, "line %q", l)
	}
}

func FuzzParse(f *testing.F) {
	adaptertest.Seed(f, testdata)
	f.Fuzz(func(t *testing.T, data []byte) {
		adaptertest.Fuzz(t, New(), data)
	})
}

// BenchmarkNormalize times parser, event.Stream and encoder together on a
// stream built from the testdata, as harness parse runs them.
func BenchmarkNormalize(b *testing.B) {
	adaptertest.BenchNormalize(b, New(), adaptertest.BenchStream(b, "codex", 4<<20, "*"))
}

// BenchmarkParse times the parser alone on the same stream.
func BenchmarkParse(b *testing.B) {
	adaptertest.BenchParse(b, New(), adaptertest.BenchStream(b, "codex", 4<<20, "*"))
}

// TestBenchStreamIsValid keeps the benchmark honest: its input must
// normalize to a valid stream with real work in it.
func TestBenchStreamIsValid(t *testing.T) {
	t.Parallel()
	out := adaptertest.Normalize(New(), adaptertest.BenchStream(t, "codex", 64<<10, "*"), false)
	adaptertest.CheckStream(t, out)
	require.Greater(t, strings.Count(string(out), `"type":"tool_end"`), 10)
}
