package cursor

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

const testdata = "../../testdata/cursor"

func TestGolden(t *testing.T) {
	t.Parallel()
	adaptertest.Golden(t, Agent, testdata, event.TypeSessionStart, event.TypeTextDelta, event.TypeReasoningDelta,
		event.TypeMessage, event.TypeReasoning, event.TypeToolStart, event.TypeToolEnd, event.TypeUsage,
		event.TypeError, event.TypeResult, event.TypeNative)
}

// The fuzz target and the benchmarks make bench reads: adaptertest holds
// them for every adapter.
func FuzzParse(f *testing.F)          { adaptertest.FuzzParse(f, Agent) }
func BenchmarkNormalize(b *testing.B) { adaptertest.BenchNormalize(b, Agent) }
func BenchmarkParse(b *testing.B)     { adaptertest.BenchParse(b, Agent) }

func TestAdapter(t *testing.T) {
	t.Parallel()
	a := Agent
	require.Equal(t, "cursor", a.Name())
	require.Equal(t, []string{"cursor-agent", "agent"}, a.Binaries())
}

func TestCommand(t *testing.T) {
	t.Parallel()
	base := []string{"cursor-agent", "-p", "--output-format", "stream-json"}
	adaptertest.Commands(t, Agent, "cursor-agent", []adaptertest.CommandCase{
		{Name: "default-full-access", Task: adapters.Task{Prompt: "hi"},
			Argv: slices.Concat(base, []string{"--stream-partial-output", "--force", "--trust", "--", "hi"})},
		{Name: "read-only", Task: adapters.Task{Prompt: "hi", Permissions: adapters.ReadOnly},
			Argv: slices.Concat(base, []string{"--stream-partial-output", "--mode", "ask", "--trust", "--", "hi"})},
		{Name: "model-resume-cwd-extra-no-partial", Task: adapters.Task{Prompt: "go on", Model: "sonnet-4.5", Resume: "c6b62c6f",
			Cwd: "/w", Permissions: adapters.FullAccess, ExtraArgs: []string{"--approve-mcps"}, NoPartial: true},
			Argv: slices.Concat(base, []string{"--model", "sonnet-4.5", "--resume", "c6b62c6f", "--force", "--trust",
				"--workspace", "/w", "--approve-mcps", "--", "go on"})},
		{Name: "prompt-starting-with-dash", Task: adapters.Task{Prompt: "--- monitor ---\n- item"},
			Argv: slices.Concat(base, []string{"--stream-partial-output", "--force", "--trust", "--", "--- monitor ---\n- item"})},
	})
}

func TestPartialOutputDedup(t *testing.T) {
	t.Parallel()
	bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"assistant","message":{"content":[{"type":"text","text":"A"}]},"timestamp_ms":1}`,
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
		&event.TextDelta{Text: "C"}, // never completed: a delta, not a message
	}, bodies)
}

func TestWithoutPartialEveryAssistantIsAMessage(t *testing.T) {
	t.Parallel()
	bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"assistant","message":{"content":[{"type":"text","text":"one"}]},"model_call_id":"m-0","timestamp_ms":3}`,
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
			bodies, known := adaptertest.ParseLines(newParser(), line(c.key, c.body))
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
		bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"tool_call","subtype":"started","call_id":"k","tool_call":{"`+c.key+`":{"args":{}}}}`)
		require.Len(t, bodies, 1, c.key)
		st := bodies[0].(*event.ToolStart)
		require.Equal(t, c.key, st.Name, "the agent's own tool name")
		require.Equal(t, want[c.name], st.Kind, c.key)
	}
}

func TestFileChanges(t *testing.T) {
	t.Parallel()
	end := func(t *testing.T, lines ...string) *event.ToolEnd {
		t.Helper()
		bodies, _ := adaptertest.ParseLines(newParser(), lines...)
		return bodies[len(bodies)-1].(*event.ToolEnd)
	}
	const init = `{"type":"system","subtype":"init","cwd":"/p","session_id":"s"}`
	t.Run("edit-from-full-contents", func(t *testing.T) {
		t.Parallel()
		e := end(t, init, `{"type":"tool_call","subtype":"completed","call_id":"e","tool_call":{"editToolCall":{"args":{"path":"a"},"result":{"success":{"path":"/p/a","diffString":"--- a\n+++ b\n","beforeFullFileContent":"x\n","afterFullFileContent":"y\n"}}}}}`)
		require.Equal(t, "--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n", e.Diff, "headers name the file, relative to the run's directory")
		require.Equal(t, []string{"/p/a"}, e.Paths)
	})
	t.Run("edit-creating-a-file", func(t *testing.T) {
		t.Parallel()
		e := end(t, `{"type":"tool_call","subtype":"completed","call_id":"e","tool_call":{"editToolCall":{"args":{"path":"/q/n.md"},"result":{"success":{"diffString":"--- /dev/null\n+++ b/n.md\n@@ -0,0 +1 @@\n+n","afterFullFileContent":"n"}}}}}`)
		require.Equal(t, adapters.Diff("/q/n.md", adapters.File{}, adapters.Present("n")), e.Diff)
	})
	t.Run("a-file-no-header-can-name-is-unknown", func(t *testing.T) {
		t.Parallel()
		e := end(t, init, `{"type":"tool_call","subtype":"completed","call_id":"e","tool_call":{"editToolCall":{"args":{"path":"a\tb"},"result":{"success":{"path":"/p/a\tb","beforeFullFileContent":"x\n","afterFullFileContent":"y\n"}}}}}`)
		require.Empty(t, e.Diff)
		require.Equal(t, event.DiffSkippedUnknown, e.DiffSkipped)
	})
	t.Run("delete-from-prevContent", func(t *testing.T) {
		t.Parallel()
		e := end(t, init, `{"type":"tool_call","subtype":"completed","call_id":"d","tool_call":{"deleteToolCall":{"args":{"path":"/p/o.txt"},"result":{"success":{"path":"/p/o.txt","prevContent":"gone\n"}}}}}`)
		require.Equal(t, "--- a/o.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n", e.Diff)
	})
	for name, line := range map[string]string{
		"write-over-an-unknown-file":  `{"type":"tool_call","subtype":"completed","call_id":"w","tool_call":{"writeToolCall":{"args":{"path":"a.txt","fileText":"hi\n"},"result":{"success":{"path":"/p/a.txt"}}}}}`,
		"edit-with-only-a-diffString": `{"type":"tool_call","subtype":"completed","call_id":"e","tool_call":{"editToolCall":{"args":{"path":"a","strReplace":{"oldText":"x","newText":"y"}},"result":{"success":{"diffString":"--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y"}}}}}`,
		"edit-from-strReplace":        `{"type":"tool_call","subtype":"completed","call_id":"e","tool_call":{"editToolCall":{"args":{"path":"a","strReplace":{"oldText":"x\n","newText":"y\n"}},"result":{"success":{}}}}}`,
		"after-without-before":        `{"type":"tool_call","subtype":"completed","call_id":"e","tool_call":{"editToolCall":{"args":{"path":"a"},"result":{"success":{"afterFullFileContent":"y\n"}}}}}`,
		"delete-without-prevContent":  `{"type":"tool_call","subtype":"completed","call_id":"d","tool_call":{"deleteToolCall":{"args":{"path":"a"},"result":{"success":{}}}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := end(t, init, line)
			require.Empty(t, e.Diff, "no exact data: no diff")
			require.Equal(t, event.DiffSkippedUnknown, e.DiffSkipped)
			require.NotEmpty(t, e.Paths)
		})
	}
	t.Run("write-over-a-content-the-stream-showed", func(t *testing.T) {
		t.Parallel()
		edit := `{"type":"tool_call","subtype":"completed","call_id":"e","tool_call":{"editToolCall":{"args":{"path":"/p/a"},"result":{"success":{"beforeFullFileContent":"x\n","afterFullFileContent":"y\n"}}}}}`
		write := `{"type":"tool_call","subtype":"completed","call_id":"w","tool_call":{"writeToolCall":{"args":{"path":"a","fileText":"z\n"},"result":{"success":{"path":"/p/a"}}}}}`
		shell := `{"type":"tool_call","subtype":"completed","call_id":"s","tool_call":{"shellToolCall":{"args":{"command":"echo q > a"},"result":{"success":{"exitCode":0}}}}}`
		require.Equal(t, "--- a/a\n+++ b/a\n@@ -1 +1 @@\n-y\n+z\n", end(t, init, edit, write).Diff)
		require.Empty(t, end(t, init, edit, shell, write).Diff, "a shell command may have changed the file")
	})
	t.Run("failed-edit-has-no-paths", func(t *testing.T) {
		t.Parallel()
		e := end(t, `{"type":"tool_call","subtype":"completed","call_id":"e","tool_call":{"editToolCall":{"args":{"path":"a"},"result":{"failure":{"message":"no match"}}}}}`)
		require.Empty(t, e.Paths)
		require.Empty(t, e.Diff)
		require.Empty(t, e.DiffSkipped)
	})
}

func TestCallIDWithNewline(t *testing.T) {
	t.Parallel()
	bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"tool_call","subtype":"started","call_id":"a\nb","tool_call":{"readToolCall":{"args":{"path":"x"}}}}`,
		`{"type":"tool_call","subtype":"completed","call_id":"a\nb","tool_call":{"readToolCall":{"args":{"path":"x"},"result":{"success":{"content":"c"}}}}}`,
	)
	require.Len(t, bodies, 2, "the completion pairs with its start: no second start")
	require.Equal(t, "a\nb", bodies[0].(*event.ToolStart).CallID)
	require.Equal(t, "a\nb", bodies[1].(*event.ToolEnd).CallID)
}

// TestStdoutText: Cursor's plain-text lines are its errors; a blank line
// is not understood, as by every other adapter (docs/events.md,
// unparsed_line).
func TestStdoutText(t *testing.T) {
	t.Parallel()
	bodies, known := adaptertest.ParseLines(newParser(), "", "   ", "Press any key to sign in...", "\x1b[31mT: 429 rate limit\x1b[0m",
		`{"type":"assistant","message":`, "null", `{"type":"brand_new"}`, "\x1b[0m")
	require.Equal(t, []bool{false, false, true, true, false, false, false, true}, known)
	require.Equal(t, []event.Body{
		&event.Error{Code: event.ErrAgentError, Message: "Press any key to sign in...", Class: event.ClassAuth},
		&event.Error{Code: event.ErrAgentError, Message: "T: 429 rate limit", Class: event.ClassRateLimit},
	}, bodies)
}

func TestResult(t *testing.T) {
	t.Parallel()
	t.Run("success-with-usage", func(t *testing.T) {
		t.Parallel()
		bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"result","subtype":"success","duration_ms":12,"is_error":false,"result":"done","session_id":"s","usage":{"inputTokens":10,"outputTokens":2,"cacheReadTokens":5}}`)
		u := event.Usage{InputTokens: 10, OutputTokens: 2, CacheReadTokens: 5}
		require.Equal(t, []event.Body{&u, &event.Result{Status: event.ResultSuccess, Text: "done", SessionID: "s", DurationMS: 12, DurationNative: true, Usage: u}}, bodies)
	})
	t.Run("is-error", func(t *testing.T) {
		t.Parallel()
		bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"result","subtype":"error","is_error":true,"result":"Unauthorized: invalid API key","session_id":"s"}`)
		require.Equal(t, []event.Body{
			&event.Error{Code: event.ErrAgentError, Message: "Unauthorized: invalid API key", Class: event.ClassAuth,
				Fatal: true, Partial: &event.Partial{}},
			&event.Result{Status: event.ResultError, SessionID: "s"},
		}, bodies)
	})
	t.Run("is-error-without-text", func(t *testing.T) {
		t.Parallel()
		bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"result","subtype":"error","is_error":true}`)
		require.Equal(t, "cursor reported an error (error)", bodies[0].(*event.Error).Message)
	})
}

func TestThinking(t *testing.T) {
	t.Parallel()
	bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"thinking","subtype":"delta","text":"a"}`,
		`{"type":"thinking","subtype":"delta","text":"b"}`,
		`{"type":"thinking","subtype":"completed"}`,
		`{"type":"thinking","subtype":"delta","text":"c"}`,
	)
	require.Equal(t, []event.Body{
		&event.ReasoningDelta{Text: "a"}, &event.ReasoningDelta{Text: "b"}, &event.Reasoning{Text: "ab"},
		&event.ReasoningDelta{Text: "c"}, // never completed
	}, bodies)
}

func TestBenchStreamIsValid(t *testing.T) {
	t.Parallel()
	native := adaptertest.BenchStream(t, "cursor", 64<<10, "*")
	out := adaptertest.Normalize(Agent, native, false)
	adaptertest.CheckStream(t, out)
	require.True(t, strings.Count(string(out), `"type":"tool_end"`) > 10)
}

func TestToolDurationFromTimestamps(t *testing.T) {
	t.Parallel()
	bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"tool_call","subtype":"started","call_id":"g","tool_call":{"globToolCall":{"args":{}}},"timestamp_ms":1000}`,
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
	bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"tool_call","subtype":"completed","tool_call":{"readToolCall":{"args":{"path":"x"},"result":{"success":{}}}}}`)
	require.Equal(t, "call", bodies[0].(*event.ToolStart).CallID)
	require.Equal(t, "call", bodies[1].(*event.ToolEnd).CallID)
	out := adaptertest.Normalize(Agent, []byte(`{"type":"tool_call","subtype":"completed"}`), false)
	adaptertest.CheckStream(t, out)
}

// TestResultTextIsTheFinalAnswer: Cursor's result runs every assistant
// segment together; the answer is the text after the last tool call, and
// an error's text is never the answer.
func TestResultTextIsTheFinalAnswer(t *testing.T) {
	t.Parallel()
	const (
		tool   = `{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"readToolCall":{"args":{"path":"x"},"result":{"success":{"content":"c"}}}}}`
		result = `{"type":"result","subtype":"success","is_error":false,"result":"Looking.Found it. Done."}`
	)
	msg := func(text string) string {
		return `{"type":"assistant","message":{"content":[{"type":"text","text":"` + text + `"}]}}`
	}
	last := func(lines ...string) *event.Result {
		bodies, _ := adaptertest.ParseLines(newParser(), lines...)
		return bodies[len(bodies)-1].(*event.Result)
	}
	require.Equal(t, "Found it. Done.", last(msg("Looking."), tool, msg("Found it."), msg(" Done."), result).Text)
	require.Empty(t, last(msg("Looking."), tool, result).Text, "commentary before a tool call is no answer")
	require.Equal(t, "Looking.Found it. Done.", last(result).Text, "no assistant lines: the result's own text")
	r := last(msg("Partial answer."), `{"type":"result","subtype":"error","is_error":true,"result":"boom"}`)
	require.Equal(t, "Partial answer.", r.Text)
}

// TestUnfinishedTextIsNotAMessage: streamed text and reasoning that the
// end of the stream or a failure cut off stay deltas.
func TestUnfinishedTextIsNotAMessage(t *testing.T) {
	t.Parallel()
	chunk := func(text string) string {
		return `{"type":"assistant","message":{"content":[{"type":"text","text":"` + text + `"}]},"timestamp_ms":1}`
	}
	for name, end := range map[string]string{
		"stream-ends":  "",
		"error-result": `{"type":"result","subtype":"error","is_error":true,"result":"request failed with status 500"}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"thinking","subtype":"delta","text":"hm"}`, chunk("All tests"), chunk(" pass, bec"), end)
			for _, b := range bodies {
				if m, ok := b.(*event.Message); ok {
					t.Fatalf("unfinished text became a message: %q", m.Text)
				}
				if r, ok := b.(*event.Result); ok {
					require.Empty(t, r.Text)
				}
			}
			require.Contains(t, bodies, event.Body(&event.TextDelta{Text: " pass, bec"}))
		})
	}
}

// TestHugeBlockIsCapped: what the parser keeps of one streamed block for
// its complete message is capped and the cut marked, while every delta is
// still streamed whole.
func TestHugeBlockIsCapped(t *testing.T) {
	t.Parallel()
	piece := strings.Repeat("x", 64<<10)
	lines := make([]string, 0, 12)
	for range 10 { // 640 KiB, over event.MaxTextBytes
		lines = append(lines, `{"type":"thinking","subtype":"delta","text":"`+piece+`"}`)
	}
	lines = append(lines, `{"type":"thinking","subtype":"completed"}`)
	for range 10 {
		lines = append(lines, `{"type":"assistant","message":{"content":[{"type":"text","text":"`+piece+`"}]},"timestamp_ms":1}`)
	}
	lines = append(lines, `{"type":"result","subtype":"success","is_error":false,"result":"r"}`)
	bodies, _ := adaptertest.ParseLines(newParser(), lines...)
	deltas := 0
	for _, b := range bodies {
		switch b := b.(type) {
		case *event.TextDelta:
			require.Len(t, b.Text, len(piece))
			deltas++
		case *event.Message:
			require.LessOrEqual(t, len(b.Text), event.MaxTextBytes+1)
			require.True(t, b.Truncated)
		case *event.Reasoning:
			require.LessOrEqual(t, len(b.Text), event.MaxTextBytes+1)
			require.True(t, b.Truncated)
		}
	}
	require.Equal(t, 10, deltas)
	out := adaptertest.Normalize(Agent, []byte(strings.Join(lines, "\n")+"\n"), false)
	adaptertest.CheckStream(t, out)
	evs, err := event.ReadAll(bytes.NewReader(out))
	require.NoError(t, err)
	for _, ev := range evs {
		switch b := ev.Body.(type) {
		case *event.Message:
			require.Len(t, b.Text, event.MaxTextBytes)
			require.True(t, b.Truncated)
		case *event.Result:
			require.Len(t, b.Text, event.MaxTextBytes)
			require.True(t, b.TextTruncated)
		}
	}
}

// BenchmarkHugeBlock streams one text block of 256 MiB in 64 KiB chunks
// through the parser and reports the heap in use at the end (MB-heap):
// what is kept of the block is capped, so it stays flat whatever the size.
func BenchmarkHugeBlock(b *testing.B) {
	line := []byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"` + strings.Repeat("x", 64<<10) + `"}]},"timestamp_ms":1}`)
	adaptertest.BenchHeldHeap(b, Agent, line, 4096, `{"type":"result","subtype":"success","result":"r"}`)
}

// TestDurations: in harness parse a tool's duration is Cursor's own (its
// stamps on the call, or the lines' timestamp_ms, or a shell's
// executionTime); a live run measures it itself (UseWallClock).
func TestDurations(t *testing.T) {
	t.Parallel()
	stamped := []string{
		`{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"toolCallId":"c","shellToolCall":{"args":{"command":"ls"}},"startedAtMs":"5000"},"timestamp_ms":1000}`,
		`{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"toolCallId":"c","shellToolCall":{"args":{"command":"ls"},"result":{"success":{"exitCode":0,"executionTime":7}}},"startedAtMs":"5000","completedAtMs":5042},"timestamp_ms":1116}`,
	}
	end := func(p adapters.Parser, lines ...string) *event.ToolEnd {
		bodies, _ := adaptertest.ParseLines(p, lines...)
		return bodies[len(bodies)-1].(*event.ToolEnd)
	}
	e := end(newParser(), stamped...)
	require.Equal(t, "shellToolCall", e.Name, "bookkeeping members do not name the tool")
	require.EqualValues(t, 42, e.DurationMS)
	require.EqualValues(t, 7, end(newParser(), `{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"shellToolCall":{"args":{"command":"ls"},"result":{"success":{"exitCode":0,"executionTime":7}}}}}`).DurationMS)
	live := newParser()
	live.UseWallClock()
	require.Zero(t, end(live, stamped...).DurationMS, "live: the harness's clock decides")
}

func TestHTTPStatus(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]struct {
		status int
		class  string
	}{
		"Error: request failed with status 500: Internal Server Error": {500, event.ClassServerError},
		"HTTP 502 Bad Gateway":                        {502, event.ClassServerError},
		"request failed with status code 529":         {529, event.ClassOverloaded},
		"Error: request failed with status 429: slow": {429, event.ClassRateLimit},
		"exit status 2":                               {0, ""},
		"took 15000 ms":                               {0, ""},
	} {
		e := agentError(text)
		require.Equal(t, want.status, e.Status, text)
		require.Equal(t, want.class, e.Class, text)
	}
}

// TestGoldenDiffsApply applies every diff of the goldens with git apply,
// in order, in a directory that starts empty: the file before each call is
// what Cursor's line states (beforeFullFileContent, prevContent) or what
// the earlier diffs left; after it, the file must be what the line states
// (afterFullFileContent, fileText, gone).
func TestGoldenDiffsApply(t *testing.T) {
	t.Parallel()
	for _, c := range adaptertest.DiffCaptures(t, testdata) {
		calls, cwd := map[string]gjson.Result{}, ""
		for _, l := range c.Native {
			if gjson.Get(l, "subtype").Str == "init" {
				cwd = gjson.Get(l, "cwd").Str
			}
			if gjson.Get(l, "subtype").Str == "completed" {
				calls[gjson.Get(l, "call_id").Str] = gjson.Get(l, "tool_call")
			}
		}
		dir := t.TempDir()
		for _, te := range c.Diffs {
			var tool gjson.Result
			calls[te.CallID].ForEach(func(k, v gjson.Result) bool {
				if strings.HasSuffix(k.Str, "ToolCall") {
					tool = v
				}
				return true
			})
			res := tool.Get("result.success")
			file := adapters.DisplayPath(cwd, te.Paths[0])
			before, after := map[string]*string{}, map[string]*string{file: nil} // a deleted file is gone
			for _, b := range []gjson.Result{res.Get("beforeFullFileContent"), res.Get("prevContent")} {
				if b.Exists() {
					before[file] = &b.Str
				}
			}
			for _, a := range []gjson.Result{res.Get("afterFullFileContent"), tool.Get("args.fileText")} {
				if a.Exists() && after[file] == nil {
					after[file] = &a.Str
				}
			}
			adaptertest.ApplyDiff(t, dir, te.Diff, before, after)
		}
	}
}

// A key given twice counts as its last value, as gjson reads it, nested
// members and all: the parser reads nested values in the same pass and
// clears what an earlier duplicate left only when there is one.
func TestDuplicateKeysLastWins(t *testing.T) {
	t.Parallel()
	first := `{"shellToolCall":{"args":{"command":"old"},"result":{"success":{"exitCode":1}}},"startedAtMs":1,"completedAtMs":9}`
	last := `{"shellToolCall":{"result":{"success":{"exitCode":0,"stdout":"ok"}}}}`
	p := newParser()
	for i := range 2 { // the second parse reads into the slot the first one left
		// Ids of their own each time: a completion given again is dropped.
		n := strconv.Itoa(i)
		bodies, _ := adaptertest.ParseLines(p,
			`{"type":"tool_call","subtype":"completed","call_id":"c`+n+`","tool_call":`+first+`,"tool_call":`+last+`}`,
			`{"type":"assistant","message":{"content":"one"},"message":{"role":"assistant"}}`,
			`{"type":"tool_call","subtype":"completed","call_id":"r`+n+`","tool_call":{"shellToolCall":{"result":{"success":{"exitCode":1,"stdout":"old"}},"result":{"success":{"exitCode":0}}}}}`)
		require.Len(t, bodies, 4)
		require.Equal(t, event.StatusOK, bodies[3].(*event.ToolEnd).Status, "the last result")
		require.Empty(t, bodies[3].(*event.ToolEnd).Output, "the last result")
		st, end := bodies[0].(*event.ToolStart), bodies[1].(*event.ToolEnd)
		require.Empty(t, st.Command, "the args of the first tool_call")
		require.Equal(t, event.StatusOK, end.Status)
		require.Equal(t, "ok", end.Output)
		require.Zero(t, end.DurationMS, "the stamps of the first tool_call")
	}
}
