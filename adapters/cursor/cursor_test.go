package cursor

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

const testdata = "../../testdata/cursor"

func TestGolden(t *testing.T) {
	t.Parallel()
	seen := adaptertest.Golden(t, New(), testdata)
	for _, tp := range []event.Type{event.TypeSessionStart, event.TypeTextDelta, event.TypeReasoningDelta,
		event.TypeMessage, event.TypeReasoning, event.TypeToolStart, event.TypeToolEnd, event.TypeUsage,
		event.TypeError, event.TypeResult, event.TypeNative} {
		require.True(t, seen[tp], "no golden shows a %s event", tp)
	}
}

func FuzzParse(f *testing.F) {
	adaptertest.Seed(f, testdata)
	f.Fuzz(func(t *testing.T, data []byte) {
		adaptertest.Fuzz(t, New(), data)
	})
}

func TestAdapter(t *testing.T) {
	t.Parallel()
	a := New()
	require.Equal(t, "cursor", a.Name())
	require.Equal(t, []string{"cursor-agent", "agent"}, a.Binaries())
}

func TestCommand(t *testing.T) {
	t.Parallel()
	base := []string{"cursor-agent", "-p", "--output-format", "stream-json"}
	cases := []struct {
		name string
		task adapters.Task
		want []string
	}{
		{"default-full-access", adapters.Task{Prompt: "hi"},
			append(append([]string{}, base...), "--stream-partial-output", "--force", "--trust", "--", "hi")},
		{"read-only", adapters.Task{Prompt: "hi", Permissions: adapters.ReadOnly},
			append(append([]string{}, base...), "--stream-partial-output", "--mode", "ask", "--trust", "--", "hi")},
		{"model-resume-cwd-extra-no-partial", adapters.Task{Prompt: "go on", Model: "sonnet-4.5", Resume: "c6b62c6f",
			Cwd: "/w", Permissions: adapters.FullAccess, ExtraArgs: []string{"--approve-mcps"}, NoPartial: true},
			append(append([]string{}, base...), "--model", "sonnet-4.5", "--resume", "c6b62c6f", "--force", "--trust",
				"--workspace", "/w", "--approve-mcps", "--", "go on")},
		{"prompt-starting-with-dash", adapters.Task{Prompt: "--- monitor ---\n- item"},
			append(append([]string{}, base...), "--stream-partial-output", "--force", "--trust", "--", "--- monitor ---\n- item")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cmd, err := New().Command("cursor-agent", c.task)
			require.NoError(t, err)
			require.Equal(t, c.want, cmd.Argv)
			require.Equal(t, len(cmd.Argv)-1, cmd.PromptIndex)
			require.Equal(t, c.task.Prompt, cmd.Argv[cmd.PromptIndex])
			require.Equal(t, "--", cmd.Argv[cmd.PromptIndex-1])
			require.Empty(t, cmd.Stdin)
			require.Empty(t, cmd.Env)
		})
	}
}

func TestCommandErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		task adapters.Task
		want error
	}{
		{"max-turns", adapters.Task{Prompt: "x", MaxTurns: 3}, ErrMaxTurns},
		{"system-prompt", adapters.Task{Prompt: "x", SystemPrompt: "be brief"}, ErrSystemPrompt},
		{"append-system-prompt", adapters.Task{Prompt: "x", AppendSystemPrompt: "be brief"}, ErrSystemPrompt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := New().Command("cursor-agent", c.task)
			require.ErrorIs(t, err, c.want)
		})
	}
	t.Run("unknown-permission", func(t *testing.T) {
		t.Parallel()
		_, err := New().Command("cursor-agent", adapters.Task{Prompt: "x", Permissions: "yolo"})
		require.ErrorContains(t, err, `unknown permission mode "yolo"`)
	})
}

// parseAll runs a fresh parser over lines and returns every body and the
// known flag of each line.
func parseAll(t *testing.T, lines ...string) ([]event.Body, []bool) {
	t.Helper()
	return adaptertest.ParseLines(newParser(), lines...)
}

func TestPartialOutputDedup(t *testing.T) {
	t.Parallel()
	bodies, _ := parseAll(t,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"A"}]},"timestamp_ms":1}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"B"}]},"timestamp_ms":2}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"AB"}]},"model_call_id":"m-0","timestamp_ms":3}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"AB"}]}}`,
		`{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"x"}}}}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"C"}]},"timestamp_ms":4}`,
	)
	require.Equal(t, []event.Body{
		&event.TextDelta{Text: "A"},
		&event.TextDelta{Text: "B"},
		&event.Message{Role: event.RoleAssistant, Text: "AB"},
		&event.ToolStart{CallID: "c1", Name: "readToolCall", Kind: event.KindRead, Input: []byte(`{"path":"x"}`), Path: "x"},
		&event.TextDelta{Text: "C"},
		&event.Message{Role: event.RoleAssistant, Text: "C"}, // closed by Flush
	}, bodies)
}

func TestWithoutPartialEveryAssistantIsAMessage(t *testing.T) {
	t.Parallel()
	bodies, _ := parseAll(t,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"one"}]},"model_call_id":"m-0","timestamp_ms":3}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"two"}]}}`,
	)
	require.Equal(t, []event.Body{
		&event.Message{Role: event.RoleAssistant, Text: "one"},
		&event.Message{Role: event.RoleAssistant, Text: "two"},
	}, bodies)
}

func TestToolEnvelopes(t *testing.T) {
	t.Parallel()
	line := func(key, body string) string {
		return `{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"` + key + `":` + body + `}}`
	}
	cases := []struct {
		name, key, body string
		status          string
		output          string
		exit            *int
	}{
		{"shell-nonzero-success", "shellToolCall", `{"args":{"command":"false"},"result":{"success":{"exitCode":3,"stdout":"o\n","stderr":"e"}}}`, event.StatusError, "o\ne", event.Int(3)},
		{"shell-zero", "shellToolCall", `{"args":{"command":"true"},"result":{"success":{"exitCode":0,"stdout":"ok"}}}`, event.StatusOK, "ok", event.Int(0)},
		{"failure", "shellToolCall", `{"result":{"failure":{"exitCode":1,"stderr":"boom"}}}`, event.StatusError, "boom", event.Int(1)},
		{"rejected", "shellToolCall", `{"result":{"rejected":{"command":"ls","reason":""}}}`, event.StatusDenied, "rejected", nil},
		{"error", "readToolCall", `{"result":{"error":{"message":"File not found"}}}`, event.StatusError, "File not found", nil},
		{"unknown-envelope", "readToolCall", `{"result":{"cancelled":{}}}`, event.StatusError, `{"cancelled":{}}`, nil},
		{"mcp-is-error", "mcpToolCall", `{"result":{"success":{"content":[{"text":{"text":"bad"}}],"isError":true}}}`, event.StatusError, "bad", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bodies, known := parseAll(t, line(c.key, c.body))
			require.Equal(t, []bool{true}, known)
			require.Len(t, bodies, 2) // a start synthesized from the completion, then the end
			st := bodies[0].(*event.ToolStart)
			require.Equal(t, "c", st.CallID)
			end := bodies[1].(*event.ToolEnd)
			require.Equal(t, c.status, end.Status)
			require.Equal(t, c.output, end.Output)
			require.Equal(t, c.exit, end.ExitCode)
		})
	}
}

func TestToolKeys(t *testing.T) {
	t.Parallel()
	cases := []struct{ key, name string }{
		{"readToolCall", "read"}, {"writeToolCall", "write"}, {"editToolCall", "edit"},
		{"deleteToolCall", "delete"}, {"shellToolCall", "shell"}, {"lsToolCall", "ls"},
		{"globToolCall", "glob"}, {"grepToolCall", "grep"}, {"semSearchToolCall", "semSearch"},
		{"updateTodosToolCall", "updateTodos"}, {"todoToolCall", "todo"}, {"mcpToolCall", "mcp"},
		{"readLintsToolCall", "readLints"}, {"webSearchToolCall", "webSearch"},
		{"webFetchToolCall", "webFetch"}, {"taskToolCall", "task"}, {"fooBarToolCall", "fooBar"},
	}
	want := map[string]event.Kind{"read": event.KindRead, "write": event.KindWrite, "edit": event.KindEdit,
		"delete": event.KindDelete, "shell": event.KindShell, "ls": event.KindSearch, "glob": event.KindSearch,
		"grep": event.KindSearch, "semSearch": event.KindSearch, "updateTodos": event.KindTodo, "todo": event.KindTodo,
		"mcp": event.KindMCP, "readLints": event.KindRead, "webSearch": event.KindWeb, "webFetch": event.KindWeb,
		"task": event.KindTask, "fooBar": event.KindOther}
	for _, c := range cases {
		bodies, _ := parseAll(t, `{"type":"tool_call","subtype":"started","call_id":"k","tool_call":{"`+c.key+`":{"args":{}}}}`)
		require.Len(t, bodies, 1, c.key)
		st := bodies[0].(*event.ToolStart)
		require.Equal(t, c.key, st.Name, "the agent's own tool name")
		require.Equal(t, want[c.name], st.Kind, c.key)
	}
}

func TestFileChanges(t *testing.T) {
	t.Parallel()
	t.Run("write-diff-from-empty", func(t *testing.T) {
		t.Parallel()
		bodies, _ := parseAll(t, `{"type":"tool_call","subtype":"completed","call_id":"w","tool_call":{"writeToolCall":{"args":{"path":"a.txt","fileText":"hi\n"},"result":{"success":{"path":"/p/a.txt"}}}}}`)
		end := bodies[1].(*event.ToolEnd)
		require.Equal(t, []string{"/p/a.txt"}, end.Paths)
		require.Equal(t, adapters.UnifiedDiff("/p/a.txt", "", "hi\n"), end.Diff)
		require.Contains(t, end.Diff, "+hi")
	})
	t.Run("edit-diffString-wins", func(t *testing.T) {
		t.Parallel()
		bodies, _ := parseAll(t, `{"type":"tool_call","subtype":"completed","call_id":"e","tool_call":{"editToolCall":{"args":{"path":"a","strReplace":{"oldText":"x","newText":"y"}},"result":{"success":{"diffString":"--- a\n+++ b\n"}}}}}`)
		end := bodies[1].(*event.ToolEnd)
		require.Equal(t, "--- a\n+++ b\n", end.Diff)
		require.Equal(t, []string{"a"}, end.Paths)
	})
	t.Run("edit-from-strReplace", func(t *testing.T) {
		t.Parallel()
		bodies, _ := parseAll(t, `{"type":"tool_call","subtype":"completed","call_id":"e","tool_call":{"editToolCall":{"args":{"path":"a","strReplace":{"oldText":"x\n","newText":"y\n"}},"result":{"success":{}}}}}`)
		end := bodies[1].(*event.ToolEnd)
		require.Equal(t, adapters.UnifiedDiff("a", "x\n", "y\n"), end.Diff)
	})
	t.Run("failed-edit-has-no-paths", func(t *testing.T) {
		t.Parallel()
		bodies, _ := parseAll(t, `{"type":"tool_call","subtype":"completed","call_id":"e","tool_call":{"editToolCall":{"args":{"path":"a"},"result":{"failure":{"message":"no match"}}}}}`)
		end := bodies[1].(*event.ToolEnd)
		require.Empty(t, end.Paths)
		require.Empty(t, end.Diff)
	})
}

func TestCallIDWithNewline(t *testing.T) {
	t.Parallel()
	bodies, _ := parseAll(t,
		`{"type":"tool_call","subtype":"started","call_id":"a\nb","tool_call":{"readToolCall":{"args":{"path":"x"}}}}`,
		`{"type":"tool_call","subtype":"completed","call_id":"a\nb","tool_call":{"readToolCall":{"args":{"path":"x"},"result":{"success":{"content":"c"}}}}}`,
	)
	require.Len(t, bodies, 2, "the completion pairs with its start: no second start")
	require.Equal(t, "a\nb", bodies[0].(*event.ToolStart).CallID)
	require.Equal(t, "a\nb", bodies[1].(*event.ToolEnd).CallID)
}

func TestStdoutText(t *testing.T) {
	t.Parallel()
	bodies, known := parseAll(t, "", "   ", "Press any key to sign in...", "\x1b[31mT: 429 rate limit\x1b[0m",
		`{"type":"assistant","message":`, "null", `{"type":"brand_new"}`, "\x1b[0m")
	require.Equal(t, []bool{true, true, true, true, false, false, false, true}, known)
	require.Equal(t, []event.Body{
		&event.Error{Code: event.ErrAgentError, Message: "Press any key to sign in...", Class: event.ClassAuth},
		&event.Error{Code: event.ErrAgentError, Message: "T: 429 rate limit", Class: event.ClassRateLimit},
	}, bodies)
}

func TestResult(t *testing.T) {
	t.Parallel()
	t.Run("success-with-usage", func(t *testing.T) {
		t.Parallel()
		bodies, _ := parseAll(t, `{"type":"result","subtype":"success","duration_ms":12,"is_error":false,"result":"done","session_id":"s","usage":{"inputTokens":10,"outputTokens":2,"cacheReadTokens":5}}`)
		u := event.Usage{InputTokens: 10, OutputTokens: 2, CacheReadTokens: 5}
		require.Equal(t, []event.Body{&u, &event.Result{Status: event.ResultSuccess, Text: "done", SessionID: "s", DurationMS: 12, Usage: u}}, bodies)
	})
	t.Run("is-error", func(t *testing.T) {
		t.Parallel()
		bodies, _ := parseAll(t, `{"type":"result","subtype":"error","is_error":true,"result":"Unauthorized: invalid API key","session_id":"s"}`)
		require.Equal(t, []event.Body{
			&event.Error{Code: event.ErrAgentError, Message: "Unauthorized: invalid API key", Class: event.ClassAuth},
			&event.Result{Status: event.ResultError, SessionID: "s"},
		}, bodies)
	})
	t.Run("is-error-without-text", func(t *testing.T) {
		t.Parallel()
		bodies, _ := parseAll(t, `{"type":"result","subtype":"error","is_error":true}`)
		require.Equal(t, "cursor reported an error (error)", bodies[0].(*event.Error).Message)
	})
}

func TestThinking(t *testing.T) {
	t.Parallel()
	bodies, _ := parseAll(t,
		`{"type":"thinking","subtype":"delta","text":"a"}`,
		`{"type":"thinking","subtype":"delta","text":"b"}`,
		`{"type":"thinking","subtype":"completed"}`,
		`{"type":"thinking","subtype":"delta","text":"c"}`,
	)
	require.Equal(t, []event.Body{
		&event.ReasoningDelta{Text: "a"}, &event.ReasoningDelta{Text: "b"}, &event.Reasoning{Text: "ab"},
		&event.ReasoningDelta{Text: "c"}, &event.Reasoning{Text: "c"},
	}, bodies)
}

func TestBenchStreamIsValid(t *testing.T) {
	t.Parallel()
	native := adaptertest.BenchStream(t, "cursor", 64<<10, "*")
	out := adaptertest.Normalize(New(), native, false)
	adaptertest.CheckStream(t, out)
	require.True(t, strings.Count(string(out), `"type":"tool_end"`) > 10)
}

func TestToolDurationFromTimestamps(t *testing.T) {
	t.Parallel()
	bodies, _ := parseAll(t,
		`{"type":"tool_call","subtype":"started","call_id":"g","tool_call":{"globToolCall":{"args":{}}},"timestamp_ms":1000}`,
		`{"type":"tool_call","subtype":"completed","call_id":"g","tool_call":{"globToolCall":{"args":{},"result":{"success":{"files":["a","b"]}}}},"timestamp_ms":1116}`,
	)
	end := bodies[1].(*event.ToolEnd)
	require.EqualValues(t, 116, end.DurationMS)
	require.Equal(t, "a\nb\n", end.Output)
}

func TestClassify(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"T: Named models unavailable Free plans can only use Auto.": event.ClassBadRequest,
		"Press any key to sign in...":                               event.ClassAuth,
		"Error: 429 Too Many Requests":                              event.ClassRateLimit,
		"something odd happened":                                    "",
	}
	for text, want := range cases {
		require.Equal(t, want, classify(text), text)
	}
}

func TestEmptyCallIDPairs(t *testing.T) {
	t.Parallel()
	bodies, _ := parseAll(t, `{"type":"tool_call","subtype":"completed","tool_call":{"readToolCall":{"args":{"path":"x"},"result":{"success":{}}}}}`)
	require.Equal(t, "call", bodies[0].(*event.ToolStart).CallID)
	require.Equal(t, "call", bodies[1].(*event.ToolEnd).CallID)
	out := adaptertest.Normalize(New(), []byte(`{"type":"tool_call","subtype":"completed"}`), false)
	adaptertest.CheckStream(t, out)
}

// BenchmarkNormalize times parser, event.Stream and encoder together on a
// stream built from the testdata, as harness parse runs them.
func BenchmarkNormalize(b *testing.B) {
	adaptertest.BenchNormalize(b, New(), adaptertest.BenchStream(b, "cursor", 4<<20, "*"))
}

// BenchmarkParse times the parser alone on the same stream.
func BenchmarkParse(b *testing.B) {
	adaptertest.BenchParse(b, New(), adaptertest.BenchStream(b, "cursor", 4<<20, "*"))
}
