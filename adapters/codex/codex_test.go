package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/linescan"
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
		// Creating or removing an empty file has no diff (docs/events.md):
		// nothing about it is unknown. Without a text it is.
		"an-empty-file-added-has-no-diff":   {`[{"path":"/w/e","kind":"add","diff":""}]`, "", ""},
		"an-empty-file-deleted-has-no-diff": {`[{"path":"/w/e","kind":"delete","diff":""}]`, "", ""},
		"an-empty-file-adds-nothing": {`[{"path":"/w/e","kind":"add","diff":""},{"path":"/w/a.go","kind":"add","diff":"x\n"}]`,
			"--- /dev/null\n+++ b/w/a.go\n@@ -0,0 +1 @@\n+x\n", ""},
		"an-add-without-text-is-unknown": {`[{"path":"/w/e","kind":"add"}]`, "", event.DiffSkippedUnknown},
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
// native line states (added: the new file; deleted: gone) is checked, but
// for empty ones, which no diff shows.
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
				if text == "" {
					// An empty file created or removed: no diff shows it
					// (docs/events.md), so git apply leaves it be.
					continue
				}
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

// The app-server captures (testdata/appserver) are the stdout of the
// pinned codex 0.169 `codex app-server`, driven against the scripted model
// (harness mock) with the requests the Client writes: converse (two
// turns, the converse scenario), interrupt (turn/interrupt during a
// `sleep 30` tool call, then a second turn), ask (approval policy
// untrusted: a command accepted, a file change declined), errors (error
// replies to requests codex refused), resume (thread/resume of a thread
// whose one earlier turn, the converse scenario's first, made two model
// calls; then its second prompt and a third, "Say it again."). resume.jsonl
// was captured before the Client asked excludeTurns: its thread/resume
// answer still holds the earlier turn, and Codex's deprecationNotice
// asks for excludeTurns (TestAppServerResumeBaselineWithoutTurns replays
// it as Codex answers excludeTurns).
const appServerData = "testdata/appserver"

// resumedThread is the thread resume.jsonl continues.
const resumedThread = "01a225af-0309-7dc1-9d58-708fa62ec323"

// replay is a live session replayed from a capture: the Client driven as
// the harness drives it (prompts queued, each approval answered by allow
// in turn, an interrupt at the first tool_start when interrupt is set),
// fed the captured lines. It returns the stream and what the Client wrote
// to Codex's stdin.
type replay struct {
	prompts   []string
	ask       bool
	allow     []bool
	interrupt bool
	cwd       string
	resume    string // the thread continued (Task.Resume)
	// promptAfter, when set, holds the prompts back until a line holding
	// it was read (a caller slower than Codex to start); else they are
	// queued before the first line.
	promptAfter string
}

func (r replay) run(t *testing.T, native []byte) (stream, sent []byte) {
	t.Helper()
	var out, stdin bytes.Buffer
	s := adaptertest.Stream(Agent, false, &out)
	c := NewAppServer()
	c.Converse(r.ask)
	require.NoError(t, c.Begin(&stdin, adapters.Task{Cwd: r.cwd, Resume: r.resume}))
	prompt := func() {
		for _, p := range r.prompts {
			bodies, err := c.Prompt(p)
			require.NoError(t, err)
			if r.promptAfter == "" {
				require.Empty(t, bodies, "queued until the thread is open")
			} else if len(bodies) > 0 {
				s.Emit(bodies...) // the turn's start: the thread is open, no turn in flight
			}
		}
		c.End()
	}
	held := r.promptAfter != ""
	if !held {
		prompt()
	}
	allow := r.allow
	interrupt := r.interrupt
	require.NoError(t, linescan.Scan(bytes.NewReader(native), 0, func(line []byte, _ int64) error {
		bodies, known := c.Parse(nil, line)
		s.Line(event.StreamStdout, line, !known, bodies)
		if held && bytes.Contains(line, []byte(r.promptAfter)) {
			held = false
			prompt()
		}
		for _, b := range bodies {
			switch v := b.(type) {
			case *event.PermissionRequest:
				require.NotEmpty(t, allow, "an approval not scripted")
				answered, _ := c.Answer(v.CallID, allow[0])
				require.True(t, answered)
				allow = allow[1:]
			case *event.ToolStart:
				if interrupt {
					interrupt = false
					require.True(t, c.Cancel())
				}
			}
		}
		return nil
	}))
	require.Empty(t, allow, "approvals left unasked")
	require.True(t, c.Done(), "the session ends once the last turn ended")
	s.Emit(&event.Result{Status: event.ResultSuccess})
	s.Finish(event.Outcome{NoProcess: true})
	return out.Bytes(), stdin.Bytes()
}

// TestAppServerGolden replays each capture as a live session: the stream
// (turns, tool calls, usage) is the golden's, it holds the invariants, and
// what the Client wrote is exactly the requests and answers the capture
// was made with.
func TestAppServerGolden(t *testing.T) {
	t.Parallel()
	for name, r := range map[string]replay{
		"converse":  {prompts: []string{"Write first.txt (context-mark-alpha7).", "Now write second.txt (turn-mark-beta9)."}, cwd: "/tmp/cxs/w1"},
		"interrupt": {prompts: []string{"Sleep please (context-mark-alpha7).", "Now write second.txt (turn-mark-beta9)."}, interrupt: true, cwd: "/tmp/cxs/w2"},
		"ask":       {prompts: []string{"Do it (context-mark-alpha7)."}, ask: true, allow: []bool{true, false}, cwd: "/tmp/cxs/w3"},
		"resume":    {prompts: []string{"Now write second.txt (turn-mark-beta9).", "Say it again."}, cwd: "/tmp/cxs/w4", resume: resumedThread},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			native, err := os.ReadFile(filepath.Join(appServerData, name+".jsonl"))
			require.NoError(t, err)
			got, sent := r.run(t, native)
			adaptertest.CheckStream(t, got)
			golden(t, filepath.Join(appServerData, name+".live.ndjson"), got)
			golden(t, filepath.Join(appServerData, name+".sent.golden"), sent)
		})
	}
}

func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	if os.Getenv("UPDATE_APPSERVER_GOLDEN") != "" {
		require.NoError(t, os.WriteFile(file, got, 0o644))
		return
	}
	want, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "%s; UPDATE_APPSERVER_GOLDEN=1 rewrites it", file)
}

// turnEnds are the turn_end events of a stream.
func turnEnds(t *testing.T, stream []byte) []*event.TurnEnd {
	t.Helper()
	evs, err := event.ReadAll(bytes.NewReader(stream))
	require.NoError(t, err)
	var ends []*event.TurnEnd
	for _, ev := range evs {
		if e, ok := ev.Body.(*event.TurnEnd); ok {
			ends = append(ends, e)
		}
	}
	return ends
}

// TestAppServerCaptureGolden: a logged app-server session re-normalized
// (harness parse, sessions reparse): the same items and usage, each turn's
// end a result, as exec's turns are.
func TestAppServerCaptureGolden(t *testing.T) {
	t.Parallel()
	a, err := AppServer("codex", &Agent, nil)
	require.NoError(t, err)
	adaptertest.Golden(t, a, appServerData, event.TypeSessionStart, event.TypeTextDelta, event.TypeMessage,
		event.TypeToolStart, event.TypeToolEnd, event.TypeUsage, event.TypeResult)
}

// TestAppServerNumbers: what each turn reports is what the scripted model
// served it (DefaultUsage, 120 input and 25 output tokens a call): the
// converse turns make two calls each, the interrupted turn one, the ask
// turn three; the resumed thread's first turn two and its second one
// (Codex's own "last" of each update is one call, 120/25), none of them
// charged the thread's earlier 240/50, which Codex reports right after
// thread/resume; statuses and answers are the turns'.
func TestAppServerNumbers(t *testing.T) {
	t.Parallel()
	call := event.Usage{InputTokens: 120, OutputTokens: 25}
	calls := func(n int64) event.Usage {
		return event.Usage{InputTokens: n * call.InputTokens, OutputTokens: n * call.OutputTokens}
	}
	for name, want := range map[string][]event.TurnEnd{
		"converse": {{Status: event.ResultSuccess, Text: "DONE: first file", Usage: calls(2)},
			{Status: event.ResultSuccess, Text: "DONE: second file", Usage: calls(2)}},
		"interrupt": {{Status: event.ResultCancelled, Usage: calls(1)},
			{Status: event.ResultSuccess, Text: "DONE: second file", Usage: calls(2)}},
		"ask": {{Status: event.ResultSuccess, Text: "DONE: asked", Usage: calls(3)}},
		"resume": {{Status: event.ResultSuccess, Text: "DONE: second file", Usage: calls(2)},
			{Status: event.ResultSuccess, Text: "DONE: second file", Usage: calls(1)}},
	} {
		native, err := os.ReadFile(filepath.Join(appServerData, name+".jsonl"))
		require.NoError(t, err)
		r := replay{prompts: []string{"one", "two"}[:len(want)], interrupt: name == "interrupt"}
		switch name {
		case "ask":
			r.ask, r.allow = true, []bool{true, false}
		case "resume":
			r.resume = resumedThread
		}
		stream, _ := r.run(t, native)
		ends := turnEnds(t, stream)
		require.Len(t, ends, len(want), name)
		for i, e := range ends {
			require.Equal(t, want[i].Status, e.Status, "%s turn %d", name, i+1)
			require.Equal(t, want[i].Text, e.Text, "%s turn %d", name, i+1)
			require.Equal(t, want[i].Usage, e.Usage, "%s turn %d", name, i+1)
		}
	}
}

// TestAppServerResumeBaseline: the thread's earlier usage (240/50, two
// model calls of the thread's first session), which Codex reports right
// after thread/resume with that turn's id, is no turn's of the resumed
// session, whether the first prompt went before it (the turn's id not
// known yet) or only after it (between turns): the turns report 240/50
// and 120/25, what their model calls cost.
func TestAppServerResumeBaseline(t *testing.T) {
	t.Parallel()
	native, err := os.ReadFile(filepath.Join(appServerData, "resume.jsonl"))
	require.NoError(t, err)
	call := event.Usage{InputTokens: 120, OutputTokens: 25}
	for name, after := range map[string]string{"prompt-first": "", "prompt-after-the-report": "thread/goal/cleared"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := replay{prompts: []string{"one", "two"}, resume: resumedThread, promptAfter: after}
			stream, _ := r.run(t, native)
			adaptertest.CheckStream(t, stream)
			ends := turnEnds(t, stream)
			require.Len(t, ends, 2)
			require.Equal(t, event.Usage{InputTokens: 2 * call.InputTokens, OutputTokens: 2 * call.OutputTokens}, ends[0].Usage)
			require.Equal(t, call, ends[1].Usage)
		})
	}
}

// lines are JSON-RPC lines of a fake exchange, as codex writes them.
func exchange(c *Client, lines ...string) ([]event.Body, []bool) {
	var all []event.Body
	var known []bool
	for _, l := range lines {
		b, k := c.Parse(nil, []byte(l))
		all = append(all, b...)
		known = append(known, k)
	}
	return all, known
}

// Lines of the captures, for the fault tests.
const (
	initAnswer   = `{"id":1,"result":{"userAgent":"harness/0.169.0 (Debian 12.0.0; x86_64) xterm (harness; 1)","codexHome":"/h/.codex","platformFamily":"unix","platformOs":"linux"}}`
	threadAnswer = `{"id":2,"result":{"thread":{"id":"01a21188-5573-7943-8473-14f418aa20c3"},"model":"gpt-5.5"}}`
	// codex's error reply to a turn/start on a thread it does not know
	// (errors.jsonl, its id made the Client's).
	turnRefused = `{"error":{"code":-32600,"message":"thread not found: 01a21189-0000-7000-8000-000000000000"},"id":3}`
)

// open is a live Client whose thread is open, writing to stdin.
func open(t *testing.T, ask bool) (*Client, *bytes.Buffer) {
	t.Helper()
	var stdin bytes.Buffer
	c := NewAppServer()
	c.Converse(ask)
	require.NoError(t, c.Begin(&stdin, adapters.Task{Cwd: "/w"}))
	bodies, _ := exchange(c, initAnswer, threadAnswer)
	require.Len(t, bodies, 1)
	require.Equal(t, "0.169.0", bodies[0].(*event.SessionStart).AgentVersion)
	return c, &stdin
}

// sentMethods are the methods of the requests written to stdin.
func sentMethods(t *testing.T, stdin *bytes.Buffer) []string {
	t.Helper()
	var methods []string
	for _, l := range strings.Split(strings.TrimSpace(stdin.String()), "\n") {
		var m struct {
			Method string `json:"method"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		methods = append(methods, m.Method)
	}
	return methods
}

// TestAppServerFaults: the app-server misbehaves, or is asked what it
// cannot do; the session goes on where it can, and ends with a fatal
// protocol error where it cannot.
func TestAppServerFaults(t *testing.T) {
	t.Parallel()
	t.Run("error-reply-to-turn-start", func(t *testing.T) {
		t.Parallel()
		c, stdin := open(t, false)
		_, err := c.Prompt("one")
		require.NoError(t, err)
		_, err = c.Prompt("two")
		require.NoError(t, err)
		bodies, known := exchange(c, turnRefused)
		require.Equal(t, []bool{true}, known)
		require.Len(t, bodies, 3, "the turn's error, its end, the next turn's start")
		e := bodies[0].(*event.Error)
		require.False(t, e.Fatal, "the turn's failure, not the session's")
		require.Contains(t, e.Message, "thread not found")
		require.Equal(t, event.ResultError, bodies[1].(*event.TurnEnd).Status)
		require.Equal(t, "two", bodies[2].(*event.TurnStart).Prompt)
		require.Equal(t, []string{"initialize", "initialized", "thread/start", "turn/start", "turn/start"}, sentMethods(t, stdin))
		require.False(t, c.Done())
	})
	t.Run("error-reply-to-thread-start", func(t *testing.T) {
		t.Parallel()
		var stdin bytes.Buffer
		c := NewAppServer()
		c.Converse(false)
		require.NoError(t, c.Begin(&stdin, adapters.Task{Cwd: "/w"}))
		bodies, _ := exchange(c, initAnswer, `{"error":{"code":-32600,"message":"invalid thread id"},"id":2}`, threadAnswer)
		require.Len(t, bodies, 2)
		e := bodies[0].(*event.Error)
		require.True(t, e.Fatal)
		require.Equal(t, event.ClassProtocol, e.Class)
		require.Equal(t, event.ResultError, bodies[1].(*event.Result).Status)
		require.True(t, c.Done(), "the session is over: stdin is closed")
		_, err := c.Prompt("late")
		require.Error(t, err)
	})
	t.Run("garbage-line", func(t *testing.T) {
		t.Parallel()
		c, _ := open(t, false)
		_, err := c.Prompt("one")
		require.NoError(t, err)
		bodies, known := exchange(c, "WARNING: not json", `{"id":3,"result":{"turn":{"id":"t1"}}}`,
			`{"method":"turn/completed","params":{"threadId":"x","turn":{"id":"t1","items":[],"status":"completed"}}}`)
		require.Equal(t, []bool{false, true, true}, known, "the bad line is unparsed, the next ones read")
		require.Equal(t, event.ResultSuccess, bodies[0].(*event.TurnEnd).Status)
	})
	t.Run("interrupt-with-no-turn", func(t *testing.T) {
		t.Parallel()
		c, stdin := open(t, false)
		require.False(t, c.Cancel(), "no turn in flight: nothing to ask")
		require.False(t, c.Busy())
		_, err := c.Prompt("one")
		require.NoError(t, err)
		require.True(t, c.Cancel(), "the turn's id is not known yet: asked once it is")
		require.NotContains(t, sentMethods(t, stdin), "turn/interrupt")
		exchange(c, `{"id":3,"result":{"turn":{"id":"t1"}}}`)
		require.Equal(t, "turn/interrupt", sentMethods(t, stdin)[4])
		bodies, _ := exchange(c, `{"error":{"code":-32600,"message":"no active turn"},"id":4}`,
			`{"method":"turn/completed","params":{"threadId":"x","turn":{"id":"t1","items":[],"status":"interrupted"}}}`)
		require.Equal(t, event.WarnAgentWarning, bodies[0].(*event.Warning).Code, "a late interrupt's refusal is no failure")
		require.Equal(t, event.ResultCancelled, bodies[1].(*event.TurnEnd).Status)
	})
	t.Run("turn-never-sent", func(t *testing.T) {
		t.Parallel()
		c, _ := open(t, false)
		bodies, known := exchange(c,
			`{"method":"item/completed","params":{"turnId":"t9","item":{"type":"agentMessage","id":"m","text":"stray"}}}`,
			`{"method":"thread/tokenUsage/updated","params":{"turnId":"t9","tokenUsage":{"total":{"inputTokens":5,"outputTokens":1,"cachedInputTokens":0,"reasoningOutputTokens":0,"totalTokens":6}}}}`,
			`{"method":"turn/completed","params":{"turn":{"id":"t9","items":[],"status":"completed"}}}`)
		require.Equal(t, []bool{true, true, true}, known)
		require.Empty(t, bodies, "nothing of a turn harness never sent")
		_, err := c.Prompt("one")
		require.NoError(t, err)
		bodies, _ = exchange(c, `{"id":3,"result":{"turn":{"id":"t1"}}}`,
			`{"method":"turn/completed","params":{"turn":{"id":"t9","items":[],"status":"completed"}}}`)
		require.Empty(t, bodies, "the end of another turn does not end this one")
		require.True(t, c.Busy())
	})
	t.Run("late-notification-of-the-last-turn", func(t *testing.T) {
		t.Parallel()
		// An item of turn t1 that completes after t1's turn/completed,
		// when the next turn/start is sent but not answered yet: nothing
		// of t2's, and an interrupt then is t2's.
		c, stdin := open(t, false)
		for _, p := range []string{"one", "two"} {
			_, err := c.Prompt(p)
			require.NoError(t, err)
		}
		bodies, _ := exchange(c, `{"id":3,"result":{"turn":{"id":"t1","items":[],"status":"inProgress"}}}`,
			`{"method":"turn/started","params":{"threadId":"01a21188-5573-7943-8473-14f418aa20c3","turn":{"id":"t1","status":"inProgress"}}}`,
			`{"method":"item/completed","params":{"threadId":"01a21188-5573-7943-8473-14f418aa20c3","turnId":"t1","item":{"type":"agentMessage","id":"m1","text":"Done 1."}}}`,
			`{"method":"thread/tokenUsage/updated","params":{"threadId":"01a21188-5573-7943-8473-14f418aa20c3","turnId":"t1","tokenUsage":{"total":{"inputTokens":10,"cachedInputTokens":0,"outputTokens":5,"reasoningOutputTokens":0,"totalTokens":15}}}}`,
			`{"method":"turn/completed","params":{"threadId":"01a21188-5573-7943-8473-14f418aa20c3","turn":{"id":"t1","status":"completed"}}}`)
		require.Equal(t, "two", bodies[len(bodies)-1].(*event.TurnStart).Prompt)
		late, known := exchange(c, `{"method":"item/completed","params":{"threadId":"01a21188-5573-7943-8473-14f418aa20c3","turnId":"t1","item":{"type":"commandExecution","id":"c1","command":"sleep 5","status":"completed","aggregatedOutput":"","exitCode":0}}}`,
			`{"method":"thread/tokenUsage/updated","params":{"threadId":"01a21188-5573-7943-8473-14f418aa20c3","turnId":"t1","tokenUsage":{"total":{"inputTokens":12,"cachedInputTokens":0,"outputTokens":6,"reasoningOutputTokens":0,"totalTokens":18}}}}`)
		require.Equal(t, []bool{true, true}, known)
		require.Empty(t, late, "t1's news is not t2's")
		require.True(t, c.Cancel())
		bodies, _ = exchange(c, `{"id":4,"result":{"turn":{"id":"t2","items":[],"status":"inProgress"}}}`)
		require.Empty(t, bodies)
		sent := strings.Split(strings.TrimSpace(stdin.String()), "\n")
		require.Equal(t, `{"id":5,"method":"turn/interrupt","params":{"threadId":"01a21188-5573-7943-8473-14f418aa20c3","turnId":"t2"}}`,
			sent[len(sent)-1], "the interrupt is t2's")
		bodies, _ = exchange(c, `{"method":"item/completed","params":{"threadId":"01a21188-5573-7943-8473-14f418aa20c3","turnId":"t2","item":{"type":"agentMessage","id":"m2","text":"Done 2."}}}`,
			`{"method":"thread/tokenUsage/updated","params":{"threadId":"01a21188-5573-7943-8473-14f418aa20c3","turnId":"t2","tokenUsage":{"total":{"inputTokens":22,"cachedInputTokens":0,"outputTokens":11,"reasoningOutputTokens":0,"totalTokens":33}}}}`,
			`{"method":"turn/completed","params":{"threadId":"01a21188-5573-7943-8473-14f418aa20c3","turn":{"id":"t2","status":"interrupted"}}}`)
		end := bodies[len(bodies)-1].(*event.TurnEnd)
		require.Equal(t, event.ResultCancelled, end.Status)
		require.Equal(t, event.Usage{InputTokens: 10, OutputTokens: 5}, end.Usage, "t2's own growth: t1's late report is no turn's")
		require.False(t, c.Busy(), "no turn in flight")
	})
	t.Run("output-streamed-not-aggregated", func(t *testing.T) {
		t.Parallel()
		c, _ := open(t, false)
		_, err := c.Prompt("one")
		require.NoError(t, err)
		bodies, _ := exchange(c, `{"id":3,"result":{"turn":{"id":"t1"}}}`,
			`{"method":"item/started","params":{"turnId":"t1","item":{"type":"commandExecution","id":"call_1","command":"ls","status":"inProgress","aggregatedOutput":null}}}`,
			`{"method":"item/commandExecution/outputDelta","params":{"turnId":"t1","itemId":"call_1","delta":"a\n"}}`,
			`{"method":"item/commandExecution/outputDelta","params":{"turnId":"t1","itemId":"call_9","delta":"stray"}}`,
			`{"method":"item/commandExecution/outputDelta","params":{"turnId":"t1","itemId":"call_1","delta":"b\n"}}`,
			`{"method":"item/completed","params":{"turnId":"t1","item":{"type":"commandExecution","id":"call_1","command":"ls","status":"completed","exitCode":0,"aggregatedOutput":null}}}`)
		end := bodies[len(bodies)-1].(*event.ToolEnd)
		require.Equal(t, "a\nb\n", end.Output, "what was streamed, for an item that ends without its output")
		require.Empty(t, c.output, "kept only while the command runs")
	})
	t.Run("unanswerable-requests", func(t *testing.T) {
		t.Parallel()
		c, stdin := open(t, false)
		bodies, known := exchange(c, `{"id":7,"method":"item/tool/call","params":{"tool":"x"}}`)
		require.Equal(t, []bool{true}, known)
		require.Equal(t, event.WarnAgentWarning, bodies[0].(*event.Warning).Code)
		require.Contains(t, stdin.String(), `{"error":{"code":-32601,"message":"harness does not answer item/tool/call"},"id":7}`)
	})
	t.Run("resolved-approval-waits-for-no-answer", func(t *testing.T) {
		t.Parallel()
		// Codex resolved its request unanswered: the caller's answer
		// finds nothing waiting, and nothing is written for it.
		c, stdin := open(t, true)
		_, err := c.Prompt("one")
		require.NoError(t, err)
		bodies, known := exchange(c, `{"id":3,"result":{"turn":{"id":"t1"}}}`,
			`{"method":"item/commandExecution/requestApproval","id":0,"params":{"itemId":"call_1","turnId":"t1","command":"ls"}}`,
			`{"method":"serverRequest/resolved","params":{"threadId":"01a21188-5573-7943-8473-14f418aa20c3","requestId":0}}`)
		require.Equal(t, []bool{true, true, true}, known)
		require.IsType(t, &event.PermissionRequest{}, bodies[len(bodies)-1])
		sent := stdin.Len()
		answered, _ := c.Answer("call_1", true)
		require.False(t, answered)
		require.Equal(t, sent, stdin.Len(), "no reply to a resolved request")
	})
	t.Run("read-only-declines-approvals", func(t *testing.T) {
		t.Parallel()
		var stdin bytes.Buffer
		c := NewAppServer()
		c.Converse(false)
		require.NoError(t, c.Begin(&stdin, adapters.Task{Cwd: "/w", Permissions: adapters.ReadOnly}))
		exchange(c, initAnswer, threadAnswer)
		require.Contains(t, stdin.String(), `"sandbox":"read-only"`)
		exchange(c, `{"method":"item/fileChange/requestApproval","id":0,"params":{"itemId":"call_1","turnId":"t1"}}`)
		require.Contains(t, stdin.String(), `{"id":0,"result":{"decision":"decline"}}`)
	})
}

// TestAppServerRun: without Converse the Client runs one turn, the
// task's prompt, and its end is the run's result (no turn events). A run
// that resumes a thread ('harness run --resume') sends its turn/start at
// the thread/resume answer, before Codex reports the thread's earlier
// usage with the earlier turn's id: that turn is not the run's, and its
// usage is not either.
func TestAppServerRun(t *testing.T) {
	t.Parallel()
	for name, task := range map[string]adapters.Task{
		"converse": {Cwd: "/tmp/cxs/w1", Prompt: "Write first.txt (context-mark-alpha7)."},
		"resume":   {Cwd: "/tmp/cxs/w4", Prompt: "Now write second.txt (turn-mark-beta9).", Resume: resumedThread},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			native, err := os.ReadFile(filepath.Join(appServerData, name+".jsonl"))
			require.NoError(t, err)
			var stdin bytes.Buffer
			c := NewAppServer()
			require.NoError(t, c.Begin(&stdin, task))
			var all []event.Body
			for _, line := range bytes.Split(native, []byte("\n")) {
				b, _ := c.Parse(nil, line)
				all = append(all, b...)
				if c.Done() {
					break
				}
			}
			require.True(t, c.Done(), "the turn ended")
			res := all[len(all)-1].(*event.Result)
			require.Equal(t, event.ResultSuccess, res.Status)
			want := "DONE: first file"
			if name == "resume" {
				want = "DONE: second file"
			}
			require.Equal(t, want, res.Text)
			require.Equal(t, event.Usage{InputTokens: 240, OutputTokens: 50}, res.Usage, "two model calls")
			var sum event.Usage
			for _, b := range all {
				require.False(t, event.SessionOnly(b.EventType()), "a run has no turns")
				if u, ok := b.(*event.Usage); ok {
					sum.Add(*u)
				}
			}
			require.Equal(t, res.Usage, sum)
		})
	}
}

// TestAppServerCommand: `codex app-server`, the options after it; the
// protocol is Codex's only.
func TestAppServerCommand(t *testing.T) {
	t.Parallel()
	a, err := AppServer("codex", &Agent, nil)
	require.NoError(t, err)
	cmd, err := a.Command("/bin/codex", adapters.Task{Prompt: "x", ExtraArgs: []string{"-c", "x=1"}})
	require.NoError(t, err)
	require.Equal(t, []string{"/bin/codex", "app-server", "-c", "x=1"}, cmd.Argv)
	require.True(t, cmd.Session)
	require.Equal(t, -1, cmd.PromptIndex)
	_, err = a.Command("/bin/codex", adapters.Task{MaxTurns: 3})
	require.ErrorIs(t, err, ErrMaxTurns)
	_, err = AppServer("claude", &adapters.Agent{}, nil)
	require.ErrorContains(t, err, "Codex's own")
}

// FuzzAppServer: whatever codex prints, a live session's stream holds the
// invariants, and a capture's too; nothing panics.
func FuzzAppServer(f *testing.F) {
	adaptertest.Seed(f, appServerData)
	a, _ := AppServer("codex", &Agent, nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		adaptertest.Fuzz(t, a, data)
		var out, stdin bytes.Buffer
		s := adaptertest.Stream(Agent, false, &out)
		c := NewAppServer()
		c.Converse(true)
		if err := c.Begin(&stdin, adapters.Task{Cwd: "/w"}); err != nil {
			t.Fatal(err)
		}
		c.Prompt("one")
		_ = linescan.Scan(bytes.NewReader(data), 0, func(line []byte, _ int64) error {
			b, known := c.Parse(nil, line)
			s.Line(event.StreamStdout, line, !known, b)
			for _, x := range b {
				if r, ok := x.(*event.PermissionRequest); ok {
					c.Answer(r.CallID, false)
				}
			}
			return nil
		})
		s.Finish(event.Outcome{NoProcess: true})
		if err := event.CheckNDJSON(out.Bytes()); err != nil {
			t.Fatalf("invariants broken for input %q: %v\n%s", data, err, out.Bytes())
		}
	})
}

// TestWellFormedHunksAsEventReadsThem: the hunks the adapter passes on
// are those event's checker reads (a diff it refused broke the stream's
// invariants: FuzzParse/81c548571e7f9307, a range "-000" of one line at
// line 0; FuzzParse/7638b257dbdada4e, a new range where the old one puts
// no line).
func TestWellFormedHunksAsEventReadsThem(t *testing.T) {
	for _, tc := range []struct {
		hunks string
		ok    bool
	}{
		{"@@ -1 +1 @@\n-a\n+b\n", true},
		{"@@ -1,2 +1,2 @@\n a\n-b\n+c\n", true},
		{"@@ -0,0 +1,2 @@\n+a\n+b\n", true},
		{"@@ -1,2 +0,0 @@\n-a\n-b\n", true},
		{"@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n", true},
		{"@@ -000 +0,2 @@\n 0000000\n+000000000000\n", false},
		{"@@ -0 +1 @@\n-a\n+b\n", false},
		{"@@ -1 +0 @@\n-a\n+b\n", false},
		{"@@ -1,2 +1 @@\n-a\n+b\n", false},
		{"@@ -1 +1\n-a\n+b\n", false},
		{"@@ -1 +1 @@x\n-a\n+b\n", false}, // the header's last field is "@@x"
		{"@@ -1 +1 @@ func f()\n-a\n+b\n", true},
		{"@@ -1,2 +02 @@\n \n-\n", false}, // FuzzParse/7638b257dbdada4e: the new range starts at line 1
		{"@@ -1 +1 @@\n-a\n+b\n@@ -3,0 +4 @@\n+c\n", true},
		{"@@ -1 +1 @@\n-a\n+b\n@@ -3,0 +3,1 @@\n+c\n", false}, // an insertion after line 3 is line 4
		{"@@ -1 +1,2 @@\n-a\n+b\n+c\n@@ -3 +4 @@\n-d\n+e\n", true},
		{"@@ -1 +1,2 @@\n-a\n+b\n+c\n@@ -3 +3 @@\n-d\n+e\n", false},
		{"@@ -3 +3 @@\n-a\n+b\n@@ -1 +1 @@\n-c\n+d\n", false},       // out of order
		{"@@ -1,2 +1 @@\n-a\n-b\n+c\n@@ -2 +1 @@\n-d\n+e\n", false}, // overlaps the hunk before
		{"", false},
	} {
		require.Equal(t, tc.ok, wellFormedHunks(tc.hunks), "%q", tc.hunks)
		// Through the parser, the stream holds its invariants, and has the
		// diff only when it is well formed.
		item, err := json.Marshal(map[string]any{"type": "item.completed", "item": map[string]any{
			"id": "i", "type": "file_change", "status": "completed",
			"changes": []map[string]string{{"path": "f", "kind": "update", "diff": tc.hunks}}}})
		require.NoError(t, err)
		out := adaptertest.Normalize(Agent, item, false)
		require.NoError(t, event.CheckNDJSON(out), "%q", tc.hunks)
		require.Equal(t, tc.ok, bytes.Contains(out, []byte(`"diff":"--- a/f`)), "%q: %s", tc.hunks, out)
	}
}

// TestDiffContradictingEarlierOneIsUnknown: Codex's diffs are its own; a
// diff of a file whose lines contradict what an earlier one showed (the
// file changed outside the stream, a change given twice) is not passed on
// as exact, and one that follows from it is. A command between may have
// changed the file: then nothing is contradicted.
func TestDiffContradictingEarlierOneIsUnknown(t *testing.T) {
	type ch struct{ path, diff string }
	change := func(id string, changes ...ch) string {
		var cs []map[string]string
		for _, c := range changes {
			cs = append(cs, map[string]string{"path": c.path, "kind": "update", "diff": c.diff})
		}
		line, err := json.Marshal(map[string]any{"type": "item.completed", "item": map[string]any{
			"id": id, "type": "file_change", "status": "completed", "changes": cs}})
		require.NoError(t, err)
		return string(line) + "\n"
	}
	const command = `{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"sed -i s/b/x/ f","aggregated_output":"","exit_code":0,"status":"completed"}}` + "\n"
	first := ch{"f", "@@ -1 +1 @@\n-a\n+b\n"}
	other := ch{"g", "@@ -1 +1 @@\n-x\n+y\n"}
	for _, tc := range []struct {
		name   string
		stream string
		exact  []bool // each tool_end's diff passed on
	}{
		{"follows", change("i1", first) + change("i2", ch{"f", "@@ -1 +1 @@\n-b\n+c\n"}), []bool{true, true}},
		{"contradicts", change("i1", first) + change("i2", ch{"f", "@@ -1 +1 @@\n-x\n+c\n"}), []bool{true, false}},
		{"contradicts, the same file named otherwise", change("i1", first) + change("i2", ch{"/f", "@@ -1 +1 @@\n-x\n+c\n"}), []bool{true, false}},
		{"contradicts, other files between", change("i1", first) + change("i2", other) + change("i3", ch{"f", "@@ -1 +1 @@\n-x\n+c\n"}), []bool{true, true, false}},
		{"given twice in one item", change("i1", first, first), []bool{false}},
		{"given twice", change("i1", first) + change("i2", first), []bool{true, false}},
		{"a command between", change("i1", first) + command + change("i2", ch{"f", "@@ -1 +1 @@\n-x\n+c\n"}), []bool{true, true}},
	} {
		out := adaptertest.Normalize(Agent, []byte(tc.stream), false)
		require.NoError(t, event.CheckNDJSON(out), tc.name)
		var exact []bool
		for line := range bytes.Lines(out) {
			if ev := gjson.ParseBytes(line); ev.Get("type").Str == "tool_end" && ev.Get("name").Str == "file_change" {
				exact = append(exact, ev.Get("diff").Exists())
				if !ev.Get("diff").Exists() {
					require.Equal(t, event.DiffSkippedUnknown, ev.Get("diff_skipped").Str, tc.name)
				}
			}
		}
		require.Equal(t, tc.exact, exact, tc.name)
	}
}

// TestAppServerUsageByThread: each thread's running total counts from
// its own last one. A sub-agent's thread (another threadId on the
// connection, its own turn ids: a session of Codex's own, whose total
// holds its calls alone) adds its growth to the turn in flight, without
// moving the session's own count; a stale total, below one already
// counted, adds nothing. The sub-agent's 500 made the session's 120 and
// 700 count as 200, and its own growth was lost; the stale 100 after 300
// counted whole again.
func TestAppServerUsageByThread(t *testing.T) {
	t.Parallel()
	const own = "01a21188-5573-7943-8473-14f418aa20c3"
	total := func(thread, turn string, in, out int64) string {
		return fmt.Sprintf(`{"method":"thread/tokenUsage/updated","params":{"threadId":%q,"turnId":%q,"tokenUsage":{"total":{"inputTokens":%d,"cachedInputTokens":0,"outputTokens":%d,"reasoningOutputTokens":0,"totalTokens":%d}}}}`,
			thread, turn, in, out, in+out)
	}
	for _, c := range []struct {
		name    string
		totals  []string
		in, out int64
	}{
		{"sub-agent", []string{total("thread-sub", "sub-turn-1", 500, 100), total(own, "t1", 120, 25), total(own, "t1", 700, 150),
			total("thread-sub", "sub-turn-1", 600, 110)}, 600 + 700, 110 + 150},
		{"stale", []string{total(own, "t1", 100, 20), total(own, "t1", 300, 50), total(own, "t1", 300, 50), total(own, "t1", 100, 20)}, 300, 50},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cl, _ := open(t, false)
			_, err := cl.Prompt("go")
			require.NoError(t, err)
			lines := append([]string{`{"id":3,"result":{"turn":{"id":"t1","items":[],"status":"inProgress"}}}`}, c.totals...)
			lines = append(lines, `{"method":"turn/completed","params":{"threadId":"`+own+`","turn":{"id":"t1","status":"completed"}}}`)
			bodies, _ := exchange(cl, lines...)
			var sum event.Usage
			for _, b := range bodies {
				if u, ok := b.(*event.Usage); ok {
					sum.Add(*u)
				}
			}
			require.Equal(t, event.Usage{InputTokens: c.in, OutputTokens: c.out}, sum)
			end := bodies[len(bodies)-1].(*event.TurnEnd)
			require.Equal(t, event.Usage{InputTokens: c.in, OutputTokens: c.out}, end.Usage)
		})
	}
}
