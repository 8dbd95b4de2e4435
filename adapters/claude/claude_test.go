package claude

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

func TestCommand(t *testing.T) {
	t.Parallel()
	base := []string{"/usr/bin/claude", "-p", "--output-format", "stream-json", "--verbose"}
	with := func(extra ...string) []string { return slices.Concat(base, extra) }
	// The environment for root: Claude Code refuses to skip permissions
	// as root unless it is told it runs in a sandbox.
	user, root := &Adapter{euid: func() int { return 1000 }}, &Adapter{euid: func() int { return 0 }}
	adaptertest.Commands(t, user, "/usr/bin/claude", []adaptertest.CommandCase{
		{Name: "defaults-full-access", Task: adapters.Task{Prompt: "hi"},
			Argv: with("--include-partial-messages", "--dangerously-skip-permissions", "--", "hi")},
		{Name: "every-option", Task: adapters.Task{Prompt: "fix it", Model: "claude-sonnet-4-5", MaxTurns: 7,
			SystemPrompt: "be terse", AppendSystemPrompt: "-- and kind", Resume: "ce92b660", ExtraArgs: []string{"--mcp-config", "m.json"}, Cwd: "/tmp"},
			Argv: with("--include-partial-messages", "--model=claude-sonnet-4-5", "--max-turns=7",
				"--system-prompt=be terse", "--append-system-prompt=-- and kind", "--resume=ce92b660",
				"--dangerously-skip-permissions", "--mcp-config", "m.json", "--", "fix it")},
		{Name: "prompt-starting-with-dash", Task: adapters.Task{Prompt: "- [ ] --version please", NoPartial: true},
			Argv: with("--dangerously-skip-permissions", "--", "- [ ] --version please")},
	})
	adaptertest.Commands(t, root, "/usr/bin/claude", []adaptertest.CommandCase{
		{Name: "full-access-as-root-sets-IS_SANDBOX", Task: adapters.Task{Prompt: "hi", Permissions: adapters.FullAccess},
			Argv: with("--include-partial-messages", "--dangerously-skip-permissions", "--", "hi"),
			Env:  []string{"IS_SANDBOX=1"}},
		{Name: "read-only-denies-writing-tools", Task: adapters.Task{Prompt: "hi", Permissions: adapters.ReadOnly, NoPartial: true},
			Argv: with("--permission-mode=default", "--disallowedTools=Bash,Edit,MultiEdit,Write,NotebookEdit", "--", "hi")},
	})
}

// TestCommandErrors: beside what every adapter refuses (the adapters
// package's TestCommandRefusals), a negative max-turns and no binary.
func TestCommandErrors(t *testing.T) {
	t.Parallel()
	adaptertest.CommandErrors(t, Agent, "claude", map[string]adaptertest.BadTask{
		"negative-max-turns": {Task: adapters.Task{Prompt: "x", MaxTurns: -1}},
	})
	adaptertest.CommandErrors(t, Agent, "", map[string]adaptertest.BadTask{
		"empty-binary": {Task: adapters.Task{Prompt: "x"}},
	})
}

func TestIdentity(t *testing.T) {
	t.Parallel()
	var a adapters.Adapter = Agent
	require.Equal(t, "claude", a.Name())
	require.Equal(t, []string{"claude"}, a.Binaries())
	require.NotNil(t, a.NewParser())
}

func TestGolden(t *testing.T) {
	t.Parallel()
	// A live session's types (turns, permission requests) come from no
	// one-prompt capture.
	adaptertest.Golden(t, Agent, testdata, slices.DeleteFunc(slices.Clone(event.Types), event.SessionOnly)...)
}

// The fuzz target and the benchmarks make bench reads: adaptertest holds
// them for every adapter.
func FuzzParse(f *testing.F) {
	// A tool input nested far past event.MaxJSONDepth, whole and streamed.
	deep := adaptertest.DeepJSON(100_000)
	f.Add([]byte(`{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"t","name":"Write","input":{"file_path":"a","content":` + deep + `}}]},"session_id":"s"}`))
	f.Add([]byte(`{"type":"stream_event","event":{"type":"message_start","message":{"id":"m"}}}
{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"Bash"}}}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"x\":` + adaptertest.DeepJSON(1000) + `}"}}}
{"type":"stream_event","event":{"type":"content_block_stop","index":0}}
{"type":"stream_event","event":{"type":"message_stop"}}`))
	adaptertest.FuzzParse(f, Agent)
}
func BenchmarkNormalize(b *testing.B) { adaptertest.BenchNormalize(b, Agent) }
func BenchmarkParse(b *testing.B)     { adaptertest.BenchParse(b, Agent) }

// BenchmarkOneLongBlock streams 256 MiB of text deltas in one content
// block, as one run, and reports the heap in use at its largest (sampled
// every 4 MiB) and at the end: what the parser holds must not grow with
// the block (issue: 256 MiB took 1 GB). Each delta is parsed and dropped,
// as the Stream does once it has written it.
func BenchmarkOneLongBlock(b *testing.B) {
	const total, piece = 256 << 20, 64 << 10
	delta := []byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` +
		strings.Repeat("a", piece) + `"}},"parent_tool_use_id":null}`)
	b.SetBytes(total)
	b.ReportAllocs()
	var peak, end uint64
	for b.Loop() {
		p := Agent.NewParser()
		var buf []event.Body
		for _, l := range []string{msgStart, textStart} {
			buf, _ = p.Parse(buf[:0], []byte(l))
		}
		for i := range total / piece {
			buf, _ = p.Parse(buf[:0], delta)
			if i%64 == 0 {
				peak = max(peak, adaptertest.HeapInUse())
			}
		}
		for _, l := range []string{textStop, msgDelta, msgStop} {
			buf, _ = p.Parse(buf[:0], []byte(l))
		}
		buf = p.Flush(buf[:0])
		end = max(end, adaptertest.HeapInUse())
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(end)/(1<<20), "end-heap-MiB")
}

// liveRun drives a Conversation as the harness does: transcript lines
// ">>> prompt TEXT", ">>> interrupt", ">>> answer CALL allow|deny" are the
// caller's; the others are the CLI's stdout, parsed in turn. It returns
// the stream (NDJSON) and what the Conversation wrote to the CLI's stdin.
func liveRun(t *testing.T, transcript []byte, ask bool) (stream, stdin []byte) {
	t.Helper()
	return liveRunWith(t, transcript, ask, func(c *Conversation) { c.prefix = testPrefix })
}

// testPrefix is the start of the uuids of the messages of the captures in
// testdata/live, which the Conversation that plays them gives its own.
const testPrefix = "7e57c0de-0000-4000-8000-"

// liveRunWith is liveRun with the Conversation readied by ready.
func liveRunWith(t *testing.T, transcript []byte, ask bool, ready func(*Conversation)) (stream, stdin []byte) {
	t.Helper()
	var out, in bytes.Buffer
	s := adaptertest.Stream(Agent, false, &out)
	c := NewConversation()
	ready(c)
	c.Converse(ask)
	require.NoError(t, c.Begin(&in, adapters.Task{}))
	sc := bufio.NewScanner(bytes.NewReader(transcript))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		cmd, isCmd := strings.CutPrefix(string(line), ">>> ")
		switch verb, arg, _ := strings.Cut(cmd, " "); {
		case !isCmd:
			bodies, known := c.Parse(nil, line)
			s.Line(event.StreamStdout, line, !known, bodies)
		case verb == "prompt":
			bodies, err := c.Prompt(arg)
			require.NoError(t, err)
			s.Emit(bodies...)
		case verb == "interrupt":
			require.True(t, c.Cancel(), "a turn is in flight")
		case verb == "answer":
			id, how, _ := strings.Cut(arg, " ")
			answered, _ := c.Answer(id, how == "allow")
			require.True(t, answered, "no request %s pending", id)
		}
	}
	c.End()
	require.True(t, c.Done(), "every turn ended")
	s.Emit(c.Flush(nil)...)
	s.Emit(&event.Result{Status: event.ResultSuccess}) // the session's end, as Session.Close emits it
	s.Finish(event.Outcome{NoProcess: true})
	return out.Bytes(), in.Bytes()
}

// TestLiveGolden replays sessions of the real Claude Code 2.1.329 over
// stream-json against the scripted model (testdata/live: its stdout, and
// where the caller acted): two turns, an interrupt, two permission requests
// answered allow and deny (captured before harness gave its messages a
// uuid: the CLI reports no command_lifecycle), and a turn the CLI began
// itself at the end of a background command (bg-notice, bg-fold:
// live_own_test.go). The stream and what harness wrote to the CLI's
// stdin are compared with the goldens (-update rewrites them).
func TestLiveGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/live/*.jsonl")
	require.NoError(t, err)
	require.Len(t, files, 5)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		t.Run(name, func(t *testing.T) {
			transcript, err := os.ReadFile(f)
			require.NoError(t, err)
			got, stdin := liveRun(t, transcript, name == "ask")
			adaptertest.CheckStream(t, got)
			golden := strings.TrimSuffix(f, ".jsonl") + ".golden.ndjson"
			all := append(append(got, "--- stdin\n"...), stdin...)
			if flag.Lookup("update").Value.String() == "true" {
				require.NoError(t, os.WriteFile(golden, all, 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			require.Equal(t, string(want), string(all))
		})
	}
}

// replay runs the capture testdata/live/NAME.jsonl (liveRun) and
// returns the stream's bodies and what went to the CLI's stdin.
func replay(t *testing.T, name string, ask bool) ([]event.Body, string) {
	t.Helper()
	transcript, err := os.ReadFile("testdata/live/" + name + ".jsonl")
	require.NoError(t, err)
	out, stdin := liveRun(t, transcript, ask)
	evs, err := event.ReadAll(bytes.NewReader(out))
	require.NoError(t, err)
	bodies := make([]event.Body, len(evs))
	for i, ev := range evs {
		bodies[i] = ev.Body
	}
	return bodies, string(stdin)
}

// TestLiveTurns: the real CLI's turns, as the scripted model served them:
// two calls of 120 input and 25 output tokens a turn, the turn's usage
// events adding up to it (not to the session's), the answer of each.
func TestLiveTurns(t *testing.T) {
	bodies, stdin := replay(t, "two-turns", false)
	ends := only[*event.TurnEnd](bodies)
	require.Len(t, ends, 2)
	for i, e := range ends {
		require.Equal(t, event.ResultSuccess, e.Status)
		require.Equal(t, event.Usage{InputTokens: 240, OutputTokens: 50}, event.Usage{InputTokens: e.Usage.InputTokens, OutputTokens: e.Usage.OutputTokens}, "turn %d", i+1)
	}
	require.Equal(t, "DONE: second file", ends[1].Text)
	res := bodies[len(bodies)-1].(*event.Result)
	require.Equal(t, int64(480), res.Usage.InputTokens)
	require.Equal(t, int64(100), res.Usage.OutputTokens)
	require.Len(t, only[*event.SessionStart](bodies), 1, "system/init of every turn is one session")
	// The first turn starts after the CLI named the session: session_start
	// has its id (the CLI prints system/init only once it has a message).
	ss := bodies[0].(*event.SessionStart)
	require.Equal(t, "af46ac72-5dec-43d6-bf51-22ffb9fc65f7", ss.SessionID)
	require.Equal(t, "2.1.329", ss.AgentVersion)
	require.IsType(t, &event.TurnStart{}, bodies[1])
	// Both prompts as user messages, the second after the first's result.
	require.Equal(t, 2, strings.Count(stdin, `"type":"user"`), "%s", stdin)
}

// TestLiveInterrupt: an interrupt is a control_request; the CLI's
// error_during_execution result then ends the turn cancelled, with no
// error, and the next prompt is the next turn.
func TestLiveInterrupt(t *testing.T) {
	bodies, stdin := replay(t, "interrupt", false)
	ends := only[*event.TurnEnd](bodies)
	require.Len(t, ends, 2)
	require.Equal(t, event.ResultCancelled, ends[0].Status)
	require.Equal(t, event.ResultSuccess, ends[1].Status)
	require.Equal(t, "DONE: after the interrupt", ends[1].Text)
	require.Empty(t, only[*event.Error](bodies), "an interrupted turn is no error")
	require.Contains(t, stdin, `{"request":{"subtype":"interrupt"},"request_id":"harness_1","type":"control_request"}`)
}

// TestLiveAsk: with ask, set_permission_mode default opens the session;
// each can_use_tool is a permission_request, answered allow (the input
// echoed) or deny; the denied call ends denied.
func TestLiveAsk(t *testing.T) {
	bodies, stdin := replay(t, "ask", true)
	reqs := only[*event.PermissionRequest](bodies)
	require.Len(t, reqs, 2)
	require.Equal(t, "Write", reqs[0].Tool)
	require.Equal(t, event.KindWrite, reqs[0].Kind)
	require.Equal(t, "turn_1", reqs[0].TurnID)
	require.Equal(t, "turn_2", reqs[1].TurnID)
	require.True(t, strings.HasSuffix(reqs[1].Path, "second.txt"))
	var statuses []string
	for _, e := range only[*event.ToolEnd](bodies) {
		statuses = append(statuses, e.Status)
	}
	require.Equal(t, []string{event.StatusOK, event.StatusDenied}, statuses)
	lines := strings.Split(strings.TrimSpace(stdin), "\n")
	require.Equal(t, `{"request":{"mode":"default","subtype":"set_permission_mode"},"request_id":"harness_1","type":"control_request"}`, lines[0])
	require.Contains(t, stdin, `"response":{"behavior":"allow","updatedInput":{"file_path":"/tmp/cs/exp/first.txt","content":"first\n"}}`)
	require.Contains(t, stdin, `"response":{"behavior":"deny","message":"The user denied this tool call."}`)
}

// failWriter is the stdin of an agent that is gone.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// TestLiveFaults: what the CLI (or its end) does wrong never breaks the
// conversation's bookkeeping.
func TestLiveFaults(t *testing.T) {
	const (
		init1  = `{"type":"system","subtype":"init","session_id":"s1","model":"m"}`
		text   = `{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":7,"output_tokens":1}},"parent_tool_use_id":null}`
		result = `{"type":"result","subtype":"success","is_error":false,"result":"hi","session_id":"s1","usage":{"input_tokens":7,"output_tokens":3}}`
	)
	live := func(t *testing.T) (*Conversation, *bytes.Buffer) {
		c := NewConversation()
		c.Converse(false)
		var in bytes.Buffer
		require.NoError(t, c.Begin(&in, adapters.Task{}))
		return c, &in
	}
	t.Run("setup-deadline", func(t *testing.T) {
		c := NewConversation()
		c.Converse(false)
		got := make(chan []event.Body, 1)
		c.BoundSetup(time.Millisecond, func(b ...event.Body) { got <- b })
		require.NoError(t, c.Begin(&bytes.Buffer{}, adapters.Task{}))
		_, err := c.Prompt("p")
		require.NoError(t, err)
		require.False(t, c.Busy(), "the CLI's start is the setup's, not the idle watchdog's")
		bodies := <-got
		require.True(t, bodies[0].(*event.Error).Fatal)
		require.IsType(t, &event.Result{}, bodies[1])
		require.True(t, c.Done())
	})
	t.Run("interrupt-with-no-turn", func(t *testing.T) {
		c, in := live(t)
		require.False(t, c.Cancel(), "no turn: nothing asked (the harness then does nothing, or signals a run)")
		require.Empty(t, in.String())
	})
	t.Run("garbage-line-mid-turn", func(t *testing.T) {
		c, _ := live(t)
		_, err := c.Prompt("p")
		require.NoError(t, err)
		adaptertest.Bodies(c, init1)
		bodies, known := c.Parse(nil, []byte("\x00not json {"))
		require.False(t, known)
		require.Empty(t, bodies)
		require.True(t, c.Busy(), "the turn goes on")
		bodies = adaptertest.Bodies(c, text, result)
		end := bodies[len(bodies)-1].(*event.TurnEnd)
		require.Equal(t, event.ResultSuccess, end.Status)
		require.Equal(t, int64(3), end.Usage.OutputTokens)
	})
	t.Run("result-of-no-turn", func(t *testing.T) {
		c, _ := live(t)
		bodies := adaptertest.Bodies(c, result)
		for _, b := range bodies {
			_, isEnd := b.(*event.TurnEnd)
			_, isRes := b.(*event.Result)
			require.False(t, isEnd || isRes, "an answer to no prompt ends nothing: %T", b)
		}
	})
	t.Run("agent-gone", func(t *testing.T) {
		c := NewConversation()
		c.Converse(false)
		require.NoError(t, c.Begin(failWriter{}, adapters.Task{}))
		_, err := c.Prompt("p")
		require.True(t, errors.Is(err, errSessionOver), "%v", err)
		require.True(t, c.Done(), "the session is over")
	})
	t.Run("failed-turn-is-the-turns", func(t *testing.T) {
		c, _ := live(t)
		_, err := c.Prompt("p")
		require.NoError(t, err)
		bodies := adaptertest.Bodies(c, init1, `{"type":"result","subtype":"error_max_turns","is_error":true,"session_id":"s1"}`)
		errs := only[*event.Error](bodies)
		require.Len(t, errs, 1)
		require.False(t, errs[0].Fatal, "the session goes on")
		require.Equal(t, event.ResultError, bodies[len(bodies)-1].(*event.TurnEnd).Status)
	})
	t.Run("queued-prompt-goes-at-the-turns-end", func(t *testing.T) {
		c, in := live(t)
		_, err := c.Prompt("one")
		require.NoError(t, err)
		bodies, err := c.Prompt("two")
		require.NoError(t, err)
		require.Empty(t, bodies, "queued")
		require.Equal(t, 1, strings.Count(in.String(), `"type":"user"`))
		bodies = adaptertest.Bodies(c, init1, result)
		require.IsType(t, &event.TurnEnd{}, bodies[len(bodies)-1])
		require.Equal(t, 2, strings.Count(in.String(), `"type":"user"`), "written at the turn's end")
		require.True(t, c.Busy(), "the CLI owes the second prompt its turn")
		// A CLI that reports no command_lifecycle begins it at its init.
		bodies = adaptertest.Bodies(c, init1)
		require.Equal(t, "two", bodies[len(bodies)-1].(*event.TurnStart).Prompt)
	})
	t.Run("permission-not-asked-is-denied", func(t *testing.T) {
		c, in := live(t) // full-access or read-only: the CLI should not ask; when it does, no
		_, err := c.Prompt("p")
		require.NoError(t, err)
		bodies := adaptertest.Bodies(c, `{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"rm -rf /"},"tool_use_id":"t1"}}`)
		require.Empty(t, bodies)
		require.Contains(t, in.String(), `"behavior":"deny"`)
	})
	t.Run("unknown-control-request-gets-an-error", func(t *testing.T) {
		c, in := live(t)
		adaptertest.Bodies(c, `{"type":"control_request","request_id":"r9","request":{"subtype":"hook_callback"}}`)
		require.Contains(t, in.String(), `"subtype":"error"`)
		require.Contains(t, in.String(), `"request_id":"r9"`)
	})
	t.Run("withdrawn-permission-cannot-be-answered", func(t *testing.T) {
		c := NewConversation()
		c.Converse(true)
		var in bytes.Buffer
		require.NoError(t, c.Begin(&in, adapters.Task{}))
		_, err := c.Prompt("p")
		require.NoError(t, err)
		bodies := adaptertest.Bodies(c, `{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"t1"}}`)
		require.Len(t, bodies, 1)
		require.Equal(t, "ls", bodies[0].(*event.PermissionRequest).Command)
		adaptertest.Bodies(c, `{"type":"control_cancel_request","request_id":"r1"}`)
		answered, _ := c.Answer("t1", true)
		require.False(t, answered)
	})
}

// TestLiveRun: without Converse (harness run --protocol stream-json) the
// task's prompt is the one user message and the CLI's result is the run's.
func TestLiveRun(t *testing.T) {
	c := NewConversation()
	var in bytes.Buffer
	require.NoError(t, c.Begin(&in, adapters.Task{Prompt: "hello"}))
	require.Contains(t, in.String(), `"content":"hello"`)
	require.False(t, c.Done())
	bodies := adaptertest.Bodies(c, `{"type":"result","subtype":"success","is_error":false,"result":"hi","session_id":"s1","usage":{"input_tokens":7,"output_tokens":3}}`)
	require.IsType(t, &event.Result{}, bodies[len(bodies)-1])
	require.True(t, c.Done())
}

// TestLiveCommand: the CLI adapter's flags, stream-json input, no prompt,
// permission prompts over stdio.
func TestLiveCommand(t *testing.T) {
	a := liveAdapter{Adapter{euid: func() int { return 1000 }}}
	c, err := a.Command("claude", adapters.Task{Model: "m", Prompt: "ignored"})
	require.NoError(t, err)
	require.Equal(t, []string{"claude", "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--include-partial-messages", "--model=m", "--dangerously-skip-permissions", "--permission-prompt-tool=stdio"}, c.Argv)
	require.True(t, c.Session)
	require.Equal(t, -1, c.PromptIndex)
	c, err = a.Command("claude", adapters.Task{Permissions: adapters.ReadOnly})
	require.NoError(t, err)
	require.Contains(t, c.Argv, "--disallowedTools="+readOnlyDenied)
	c, err = a.Command("claude", adapters.Task{Resume: "s"})
	require.NoError(t, err, "a live session continues an earlier one")
	require.Contains(t, c.Argv, "--resume=s")
	require.Equal(t, "--permission-prompt-tool=stdio", c.Argv[len(c.Argv)-1])
}

// FuzzLive: whatever the CLI prints, in a live session, the stream holds
// its invariants (every turn ended once, usage adding up per turn and per
// session) and nothing panics.
func FuzzLive(f *testing.F) {
	files, _ := filepath.Glob("testdata/live/*.jsonl")
	for _, file := range files {
		b, _ := os.ReadFile(file)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		s := adaptertest.Stream(Agent, false, &out)
		c := NewConversation()
		c.prefix = testPrefix // the captures' uuids
		c.Converse(true)
		var in bytes.Buffer
		if c.Begin(&in, adapters.Task{}) != nil {
			return
		}
		for i, line := range bytes.Split(data, []byte("\n")) {
			if rest, ok := bytes.CutPrefix(line, []byte(">>> ")); ok {
				// The caller's acts, from the input too.
				switch {
				case bytes.HasPrefix(rest, []byte("prompt ")):
					bodies, _ := c.Prompt(string(rest[7:]))
					s.Emit(bodies...)
				case bytes.Equal(rest, []byte("interrupt")):
					c.Cancel()
				default:
					c.Answer(string(rest), i%2 == 0)
				}
				continue
			}
			bodies, known := c.Parse(nil, line)
			s.Line(event.StreamStdout, line, !known, bodies)
		}
		c.End()
		s.Emit(c.Flush(nil)...)
		s.Finish(event.Outcome{NoProcess: true})
		if err := event.CheckNDJSON(out.Bytes()); err != nil {
			t.Fatalf("invariants broken for %q: %v\n%s", data, err, out.Bytes())
		}
	})
}
