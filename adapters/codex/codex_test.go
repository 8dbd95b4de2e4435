package codex

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

const testdata = "../../testdata/codex"

func TestGolden(t *testing.T) {
	t.Parallel()
	adaptertest.Golden(t, Agent, testdata, event.TypeSessionStart, event.TypeMessage, event.TypeReasoning,
		event.TypeToolStart, event.TypeToolEnd, event.TypeUsage, event.TypeWarning, event.TypeError, event.TypeResult)
}

func TestCommand(t *testing.T) {
	t.Parallel()
	base := []string{"codex", "exec", "--json", "--skip-git-repo-check"}
	adaptertest.Commands(t, Agent, "codex", []adaptertest.CommandCase{
		{Name: "default-full-access", Task: adapters.Task{Prompt: "hi"},
			Argv: slices.Concat(base, []string{"--dangerously-bypass-approvals-and-sandbox", "--", "hi"})},
		{Name: "read-only-model-cwd", Task: adapters.Task{Prompt: "hi", Model: "gpt-5.5", Cwd: "/w", Permissions: adapters.ReadOnly},
			Argv: slices.Concat(base, []string{"-m", "gpt-5.5", "-C", "/w", "-s", "read-only", "--", "hi"})},
		{Name: "resume-after-options", Task: adapters.Task{Prompt: "more", Resume: "01a1fc8c-0bca", ExtraArgs: []string{"-c", "x=1"}},
			Argv: slices.Concat(base, []string{"--dangerously-bypass-approvals-and-sandbox", "-c", "x=1", "resume", "01a1fc8c-0bca", "--", "more"})},
		{Name: "prompt-starting-with-dash", Task: adapters.Task{Prompt: "--help me"},
			Argv: slices.Concat(base, []string{"--dangerously-bypass-approvals-and-sandbox", "--", "--help me"})},
		{Name: "prompt-named-like-subcommand", Task: adapters.Task{Prompt: "resume"},
			Argv: slices.Concat(base, []string{"--dangerously-bypass-approvals-and-sandbox", "--", "resume"})},
		{Name: "append-system-prompt", Task: adapters.Task{Prompt: "hi", AppendSystemPrompt: "Be \"brief\"\n\\ok"},
			Argv: slices.Concat(base, []string{"--dangerously-bypass-approvals-and-sandbox", "-c", `developer_instructions="Be \"brief\"\n\\ok"`, "--", "hi"})},
	})
}

func TestTOMLString(t *testing.T) {
	t.Parallel()
	require.Equal(t, `"true"`, tomlString("true"))
	require.Equal(t, `"a\u0001b\tc"`, tomlString("a\x01b\tc"))
	require.Equal(t, `"é"`, tomlString("é"))
}

func TestParseUsage(t *testing.T) {
	t.Parallel()
	bodies, known := adaptertest.ParseLines(newParser(), `{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"interim"}}`,
		`{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"final"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":600,"cache_write_input_tokens":100,"output_tokens":50,"reasoning_output_tokens":20}}`)
	require.Equal(t, []bool{true, true, true, true}, known)
	require.Len(t, bodies, 4)
	require.Equal(t, &event.Usage{InputTokens: 300, CacheReadTokens: 600, CacheWriteTokens: 100, OutputTokens: 50, ReasoningTokens: 20}, bodies[2])
	require.Equal(t, &event.Result{Status: event.ResultSuccess, Text: "final",
		Usage: event.Usage{InputTokens: 300, CacheReadTokens: 600, CacheWriteTokens: 100, OutputTokens: 50, ReasoningTokens: 20}}, bodies[3])
}

// TestParseUsageIsTheThreadTotal: turn.completed reports the thread's
// running total (codex exec's usage_from_last_total), so a second turn in
// one stream counts only what it added, and the usage events sum to the
// result's totals.
func TestParseUsageIsTheThreadTotal(t *testing.T) {
	t.Parallel()
	bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"turn.started"}`,
		`{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10}}`,
		`{"type":"turn.started"}`,
		`{"type":"turn.completed","usage":{"input_tokens":300,"cached_input_tokens":100,"output_tokens":30,"reasoning_output_tokens":5}}`)
	var sum event.Usage
	var last *event.Result
	for _, b := range bodies {
		switch b := b.(type) {
		case *event.Usage:
			sum.Add(*b)
		case *event.Result:
			last = b
		}
	}
	require.Equal(t, &event.Usage{InputTokens: 100, CacheReadTokens: 100, OutputTokens: 20, ReasoningTokens: 5}, bodies[2])
	require.Equal(t, event.Usage{InputTokens: 200, CacheReadTokens: 100, OutputTokens: 30, ReasoningTokens: 5}, sum)
	require.Equal(t, sum, last.Usage)
}

// TestInterimCommentaryIsNotTheAnswer: a message followed by a tool call
// was commentary; a turn that ends without a later message has no answer.
func TestInterimCommentaryIsNotTheAnswer(t *testing.T) {
	t.Parallel()
	bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Let me check."}}`,
		`{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"ls","status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls","exit_code":0,"status":"completed"}}`,
		`{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}`)
	r := bodies[len(bodies)-1].(*event.Result)
	require.Equal(t, event.ResultError, r.Status)
	require.Empty(t, r.Text)
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
			// A command seen only completed yields a start and an end.
			require.Equal(t, []event.Body{
				&event.ToolStart{CallID: "item_0", Name: "command_execution", Kind: event.KindShell, Command: "ls", Input: []byte(`{"command":"ls"}`)},
				&event.ToolEnd{CallID: "item_0", Name: "command_execution", Kind: event.KindShell, Status: tc.status, ExitCode: tc.exit, Output: "out"},
			}, adaptertest.Bodies(newParser(), `{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"ls","aggregated_output":"out",`+tc.item+`}}`))
		})
	}
}

func TestParseFileChangeDiff(t *testing.T) {
	t.Parallel()
	end := func(changes string) *event.ToolEnd {
		bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"item.completed","item":{"id":"i","type":"file_change","changes":`+changes+`,"status":"completed"}}`)
		return bodies[1].(*event.ToolEnd)
	}
	for name, tc := range map[string]struct{ changes, diff, skipped string }{
		"add-is-the-new-file": {`[{"path":"/w/a.go","kind":"add","diff":"x\n"}]`, "--- /dev/null\n+++ b/w/a.go\n@@ -0,0 +1 @@\n+x\n", ""},
		"delete-is-the-old-file": {`[{"path":"a.go","kind":"delete","diff":"x"}]`,
			"--- a/a.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n\\ No newline at end of file\n", ""},
		"update-hunks-get-headers": {`[{"path":"a.go","kind":{"type":"update","move_path":null},"unified_diff":"@@ -1 +1 @@\n-x\n+y"}]`,
			"--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n", ""},
		"a-move-has-no-diff":         {`[{"path":"a.go","kind":"update","diff":"@@ -1 +1 @@\n-x\n+y\n\n\nMoved to: b.go"}]`, "", event.DiffSkippedUnknown},
		"hunk-counts-must-hold":      {`[{"path":"a.go","kind":"update","diff":"@@ -1,2 +1 @@\n-x\n+y\n"}]`, "", event.DiffSkippedUnknown},
		"a-full-diff-is-not-trusted": {`[{"path":"a.go","kind":"update","diff":"--- a/b.go\n+++ b/b.go\n@@ -1 +1 @@\n-x\n+y\n"}]`, "", event.DiffSkippedUnknown},
		"no-text-no-diff":            {`[{"path":"a.go","kind":"update"}]`, "", event.DiffSkippedUnknown},
		"one-unknown-change-no-diff": {`[{"path":"a.go","kind":"add","diff":"x\n"},{"path":"b.go","kind":"update"}]`, "", event.DiffSkippedUnknown},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			te := end(tc.changes)
			require.Equal(t, tc.diff, te.Diff)
			require.Equal(t, tc.skipped, te.DiffSkipped)
			require.NotEmpty(t, te.Paths)
		})
	}
}

// TestFileChangeStartNamesThePaths: the live harness reads the files a
// change will touch at tool_start, before Codex applies the patch.
func TestFileChangeStartNamesThePaths(t *testing.T) {
	t.Parallel()
	bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"item.started","item":{"id":"i","type":"file_change","changes":[{"path":"/w/a.go","kind":"update"},{"path":"/w/b.go","kind":"add"}],"status":"in_progress"}}`)
	require.Len(t, bodies, 1)
	ts := bodies[0].(*event.ToolStart)
	require.Equal(t, "/w/a.go", ts.Path)
	require.JSONEq(t, `{"changes":[{"path":"/w/a.go","kind":"update"},{"path":"/w/b.go","kind":"add"}]}`, string(ts.Input))
}

func TestParseTodoLifecycle(t *testing.T) {
	t.Parallel()
	bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"item.started","item":{"id":"t","type":"todo_list","items":[{"text":"a","completed":false}]}}`,
		`{"type":"item.updated","item":{"id":"t","type":"todo_list","items":[{"text":"a","completed":true}]}}`,
		`{"type":"item.completed","item":{"id":"t","type":"todo_list","items":[{"text":"a","completed":true}]}}`)
	require.Len(t, bodies, 2)
	require.IsType(t, &event.ToolStart{}, bodies[0])
	require.Equal(t, "[x] a\n", bodies[1].(*event.ToolEnd).Output)
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"error","message":"Reconnecting... 2/5 (stream disconnected before completion: idle timeout waiting for SSE)"}`,
		`{"type":"error","message":"unexpected status 429 Too Many Requests"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `+"`gpt-5-codex`"+` not found."}}`,
		`{"type":"turn.failed","error":{"message":"stream disconnected before completion: idle timeout waiting for SSE"}}`)
	require.Equal(t, event.WarnAgentRetry, bodies[0].(*event.Warning).Code)
	e := bodies[1].(*event.Error)
	require.Equal(t, event.ClassRateLimit, e.Class)
	require.Equal(t, 429, e.Status)
	require.False(t, e.Fatal, "an error that no turn.failed followed is not the terminal one")
	require.Equal(t, event.WarnAgentWarning, bodies[2].(*event.Warning).Code)
	e = bodies[3].(*event.Error)
	require.Equal(t, event.ErrAgentError, e.Code)
	require.Equal(t, event.ClassNetwork, e.Class)
	require.True(t, e.Fatal, "the terminal error of a failed run")
	require.NotNil(t, e.Partial)
	require.Equal(t, event.ResultError, bodies[4].(*event.Result).Status)
	require.Len(t, bodies, 5)
}

// TestTerminalErrorShape: the same failure has the same shape on every
// agent. Codex words an HTTP 500 "high demand" (CodexErr::InternalServerError,
// raised for status 500 only): a server error with http_status 500, once,
// fatal, and no error text in the result.
func TestTerminalErrorShape(t *testing.T) {
	t.Parallel()
	const demand = "We’re currently experiencing high demand, which may cause temporary errors."
	for name, tc := range map[string]struct {
		msg, class string
		status     int
	}{
		"500-high-demand":   {demand, event.ClassServerError, 500},
		"502-unexpected":    {"unexpected status 502 Bad Gateway: upstream, request id: r1", event.ClassServerError, 502},
		"503-at-capacity":   {"Selected model is at capacity. Please try a different model.", event.ClassOverloaded, 0},
		"retry-limit-429":   {"exceeded retry limit, last status: 429 Too Many Requests", event.ClassRateLimit, 429},
		"no-status-network": {"stream disconnected before completion: idle timeout waiting for SSE", event.ClassNetwork, 0},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bodies, _ := adaptertest.ParseLines(newParser(), `{"type":"turn.started"}`,
				`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Working on it."}}`,
				`{"type":"error","message":"`+tc.msg+`"}`,
				`{"type":"turn.failed","error":{"message":"`+tc.msg+`"}}`)
			require.Len(t, bodies, 3, "the message, one error, the result")
			e := bodies[1].(*event.Error)
			require.Equal(t, tc.class, e.Class)
			require.Equal(t, tc.status, e.Status)
			require.True(t, e.Fatal)
			require.NotNil(t, e.Partial)
			r := bodies[2].(*event.Result)
			require.Equal(t, event.ResultError, r.Status)
			require.Equal(t, "Working on it.", r.Text, "the last complete answer, never the error")
		})
	}
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
			bodies, known := adaptertest.ParseLines(newParser(), lines...)
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
		bodies, known := adaptertest.ParseLines(newParser(), l)
		require.Empty(t, bodies, "line %q", l)
		require.Equal(t, []bool{false}, known, "line %q", l)
	}
}

// The fuzz target and the benchmarks make bench reads: adaptertest holds
// them for every adapter.
func FuzzParse(f *testing.F)          { adaptertest.FuzzParse(f, Agent) }
func BenchmarkNormalize(b *testing.B) { adaptertest.BenchNormalize(b, Agent) }
func BenchmarkParse(b *testing.B)     { adaptertest.BenchParse(b, Agent) }

// TestGoldenDiffsApply replays every diff of the goldens with git apply,
// in order, on a directory that starts empty: a file a diff creates or
// removes comes from Codex's own content, and an update must apply to what
// the earlier diffs left. After each diff, every file whose content the
// native line states (added: the new file; deleted: gone) is checked.
func TestGoldenDiffsApply(t *testing.T) {
	t.Parallel()
	for _, c := range adaptertest.DiffCaptures(t, testdata) {
		changes := map[string]gjson.Result{}
		for _, l := range c.Native {
			if it := gjson.Get(l, "item"); gjson.Get(l, "type").Str == "item.completed" && it.Get("type").Str == "file_change" {
				changes[it.Get("id").Str] = it.Get("changes")
			}
		}
		dir := t.TempDir()
		for _, te := range c.Diffs {
			before, after := map[string]*string{}, map[string]*string{}
			for _, ch := range changes[te.CallID].Array() {
				text := ch.Get("diff").Str
				switch ch.Get("kind").Str {
				case "add": // the new file
					after[ch.Get("path").Str] = &text
				case "delete": // the removed file, as Codex read it
					before[ch.Get("path").Str], after[ch.Get("path").Str] = &text, nil
				}
			}
			adaptertest.ApplyDiff(t, dir, te.Diff, before, after)
		}
	}
}

// BenchmarkHugeBlock streams one plan of 256 MiB as item.plan.delta lines
// of 64 KiB (the only text Codex streams) and reports the heap in use at
// the end (MB-heap): the parser keeps nothing of the deltas, so it stays
// flat whatever the size.
func BenchmarkHugeBlock(b *testing.B) {
	line := []byte(`{"type":"item.plan.delta","item_id":"item_0","delta":"` + strings.Repeat("x", 64<<10) + `"}`)
	adaptertest.BenchHeldHeap(b, Agent, line, 4096)
}
