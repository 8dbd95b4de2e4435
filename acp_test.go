package harness_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/process"
)

// acpRun runs the fake ACP agent in mode through harness.Start with
// --protocol acp, as a custom ACP agent.
func acpRun(t *testing.T, mode, permissions string, b harness.Budgets, during func(*harness.Run)) (fakeRun, string) {
	t.Helper()
	argv, env := fakeagent.Command("acp-agent", mode)
	dir := t.TempDir()
	fr := runTask(t, harness.Task{
		Agent: "fake-acp", Protocol: harness.ProtocolACP, Command: argv, BaseEnv: env, Raw: true,
		Prompt: "write the file", Cwd: dir, Permissions: permissions,
		Budgets: &b,
	}, during)
	require.NoError(t, event.Check(fr.events))
	pid := fr.events[0].Body.(*event.SessionStart).PID
	require.NotZero(t, pid)
	require.False(t, process.Alive(pid), "the agent is still alive")
	return fr, dir
}

func TestACPClientNormalSession(t *testing.T) {
	t.Parallel()
	fr, dir := acpRun(t, "normal", "", small(), nil)
	require.NoError(t, fr.err)
	require.Equal(t, event.ResultSuccess, fr.result.Status)
	got, err := os.ReadFile(filepath.Join(dir, fakeagent.ACPFile))
	require.NoError(t, err)
	require.Equal(t, fakeagent.ACPFileText, string(got))

	require.Equal(t, "I should write the file.", fr.find(event.TypeReasoning)[0].(*event.Reasoning).Text)
	msgs := fr.find(event.TypeMessage)
	require.Len(t, msgs, 2)
	require.Equal(t, "Writing the file.", msgs[0].(*event.Message).Text)
	require.Equal(t, "Done.", fr.result.Text, "the last message no tool call followed")
	require.Len(t, fr.find(event.TypeTextDelta), 3)

	starts, ends := fr.find(event.TypeToolStart), fr.find(event.TypeToolEnd)
	require.Len(t, starts, 2) // the edit, the plan
	require.Equal(t, event.KindEdit, starts[0].(*event.ToolStart).Kind)
	end := ends[0].(*event.ToolEnd)
	require.Equal(t, event.StatusOK, end.Status)
	require.Equal(t, "--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1 @@\n+hello from acp\n", end.Diff, "the disk's diff of the file created")
	require.Equal(t, event.KindTodo, starts[1].(*event.ToolStart).Kind)

	want := event.Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 100, CacheWriteTokens: 20}
	require.Equal(t, want.InputTokens, fr.result.Usage.InputTokens)
	require.Equal(t, want.OutputTokens, fr.result.Usage.OutputTokens)
	require.Equal(t, want.CacheReadTokens, fr.result.Usage.CacheReadTokens)
	require.Equal(t, want.CacheWriteTokens, fr.result.Usage.CacheWriteTokens)
	require.NotNil(t, fr.result.CostUSD)
	require.InDelta(t, 0.0125, *fr.result.CostUSD, 1e-9)
	require.Equal(t, "sess-1", fr.result.SessionID)
}

func TestACPClientReadOnlyRejectsEdits(t *testing.T) {
	t.Parallel()
	fr, dir := acpRun(t, "normal", adapters.ReadOnly, small(), nil)
	_, err := os.Stat(filepath.Join(dir, fakeagent.ACPFile))
	require.True(t, os.IsNotExist(err), "read-only: the edit was refused")
	end := fr.find(event.TypeToolEnd)[0].(*event.ToolEnd)
	require.Equal(t, event.StatusDenied, end.Status)
	require.Empty(t, end.Diff)
}

func TestACPClientBadAgents(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"no-init", "bad-version", "bad-json", "undeclared"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			b := small()
			b.Setup = 300 * time.Millisecond
			fr, _ := acpRun(t, mode, "", b, nil)
			require.ErrorIs(t, fr.err, harness.ErrAgentFailed)
			require.Equal(t, event.ResultError, fr.result.Status)
			var fatal []*event.Error
			for _, b := range fr.find(event.TypeError) {
				if e := b.(*event.Error); e.Fatal {
					fatal = append(fatal, e)
				}
			}
			require.Len(t, fatal, 1, "one fatal error")
			require.Equal(t, event.ClassProtocol, fatal[0].Class)
			require.Less(t, fr.elapsed, 4*time.Second, "never waits for the idle budget")
		})
	}
}

func TestACPClientHungPromptGoesIdle(t *testing.T) {
	t.Parallel()
	b := small()
	quickIdle(&b)
	fr, _ := acpRun(t, "hang-prompt", "", b, nil)
	require.True(t, errors.Is(fr.err, harness.ErrIdleTimeout), "%v", fr.err)
	require.Equal(t, event.ResultTimeout, fr.result.Status)
	require.Equal(t, event.ErrIdleTimeout, fr.errorCode())
}

// TestACPClientAgentGivesUp: a prompt the agent answers cancelled though
// harness asked nothing (codex-acp after a refused permission) fails the
// run with an error that says why, not an error result with no error.
func TestACPClientAgentGivesUp(t *testing.T) {
	t.Parallel()
	fr, _ := acpRun(t, "give-up", "", small(), nil)
	require.ErrorIs(t, fr.err, harness.ErrAgentFailed)
	require.Equal(t, event.ResultError, fr.result.Status)
	require.Equal(t, event.ErrAgentError, fr.errorCode())
	require.Contains(t, fr.find(event.TypeError)[0].(*event.Error).Message, "did not ask")
}

func TestACPClientInterruptSendsCancel(t *testing.T) {
	t.Parallel()
	fr, _ := acpRun(t, "slow-tool", "", small(), func(r *harness.Run) {
		require.Eventually(t, func() bool { return len(r.InFlight()) == 1 }, 5*time.Second, 5*time.Millisecond)
		r.Interrupt()
	})
	require.ErrorIs(t, fr.err, harness.ErrInterrupted)
	require.Equal(t, event.ResultCancelled, fr.result.Status)
	require.Equal(t, event.ErrInterrupted, fr.errorCode())
	for _, b := range fr.find(event.TypeError) {
		require.Empty(t, b.(*event.Error).Signal, "session/cancel was enough: no signal")
	}
	require.Less(t, fr.elapsed, 2*time.Second)
}

// TestACPClientSecondInterruptKills: the second interrupt within 2 s of
// the first kills an agent that ignores session/cancel and every signal
// at once, as a run's second does; it used to be a first SIGINT, and the
// agent had the whole kill grace again.
func TestACPClientSecondInterruptKills(t *testing.T) {
	t.Parallel()
	b := small()
	b.KillGrace = time.Minute
	fr, _ := acpRun(t, "ignore-all", "", b, func(r *harness.Run) {
		require.Eventually(t, func() bool { return len(r.InFlight()) == 1 }, 5*time.Second, 5*time.Millisecond)
		r.Interrupt()
		r.Interrupt()
	})
	require.ErrorIs(t, fr.err, harness.ErrInterrupted)
	require.Equal(t, event.ResultCancelled, fr.result.Status)
	require.Equal(t, "SIGKILL", fr.result.Signal)
	require.Less(t, fr.elapsed, 2*time.Second, "killed at once, not after the 2 s cancel grace and the kill grace")
}

// TestProtocolAdapters: Task.Protocol picks the adapter from the protocol
// table; what it returns runs as a session over stdio.
func TestProtocolAdapters(t *testing.T) {
	t.Parallel()
	prepare := func(agent, protocol string, command ...string) (*harness.Command, error) {
		return harness.Prepare(harness.Task{Agent: agent, Protocol: protocol, Command: command, Prompt: "x", BaseEnv: []string{}})
	}
	c, err := prepare("claude-code", harness.ProtocolACP)
	require.NoError(t, err)
	require.Equal(t, "claude", c.Agent)
	require.Equal(t, "claude-agent-acp", filepath.Base(c.Argv[0]), "the built-in ACP command")
	require.True(t, c.Session)
	c, err = prepare("goose", harness.ProtocolACP, "goose", "acp")
	require.NoError(t, err)
	require.Equal(t, []string{"goose", "acp"}, []string{c.Agent, c.Argv[1]}, "any agent by its command")
	c, err = prepare("cursor", harness.ProtocolACP)
	require.NoError(t, err)
	require.Equal(t, []string{"cursor-agent", "acp"}, []string{filepath.Base(c.Argv[0]), c.Argv[1]}, "Cursor's own ACP server, from its documentation")
	_, err = prepare("goose", harness.ProtocolACP)
	var unknown *harness.UnknownAgentError
	require.ErrorAs(t, err, &unknown, "an unknown agent needs its command")
	_, err = prepare("claude", "grpc")
	require.ErrorContains(t, err, `protocol "grpc": want cli or acp or stream-json or app-server`)
}

// TestACPModel: over ACP each agent chooses a model its own way (its
// Agent.ACP.Model); a command from the configuration keeps the agent's
// way. OpenCode and Cursor, whose ACP side takes none, refuse it (they
// used to run without it, recording it as their model); an agent harness
// has no adapter for is given none, its command choosing its model.
func TestACPModel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		agent   string
		command []string
		args    []string
		env     string
		refused bool
	}{
		{agent: "claude", args: []string{}, env: "ANTHROPIC_MODEL=m1"},
		{agent: "codex", args: []string{"-c", `model="m1"`}},
		{agent: "gemini", args: []string{"--acp", "-m", "m1"}},
		{agent: "opencode", refused: true},
		{agent: "cursor", refused: true},
		{agent: "gemini", command: []string{"my-gemini", "--acp"}, args: []string{"--acp", "-m", "m1"}},
		{agent: "goose", command: []string{"goose", "acp"}, args: []string{"acp"}},
	} {
		t.Run(c.agent, func(t *testing.T) {
			t.Parallel()
			cmd, err := harness.Prepare(harness.Task{Agent: c.agent, Protocol: harness.ProtocolACP, Command: c.command,
				Model: "m1", Prompt: "x", BaseEnv: []string{}})
			if c.refused {
				require.ErrorContains(t, err, c.agent+": no --model over ACP (")
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.args, cmd.Argv[1:])
			if c.env != "" {
				require.Contains(t, cmd.AddedEnv, c.env)
			}
		})
	}
}

// TestLoggedProtocol: a session log's protocol is the one its metadata
// records; a log without one (a CLI run's, or one older than the field)
// is told by its first native line.
func TestLoggedProtocol(t *testing.T) {
	t.Parallel()
	rpc := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")
	require.Equal(t, harness.ProtocolACP, harness.LoggedProtocol(harness.ProtocolACP, []byte("a banner first\n")), "recorded: the lines are not read")
	require.Equal(t, harness.ProtocolACP, harness.LoggedProtocol("", rpc), "an old log: JSON-RPC lines")
	require.Equal(t, "", harness.LoggedProtocol("", []byte(`{"type":"system"}`+"\n")), "a CLI's")
	require.Equal(t, "", harness.LoggedProtocol("", nil))
	require.True(t, harness.TakesCommand(harness.ProtocolACP))
	require.False(t, harness.TakesCommand(harness.ProtocolCLI))
	require.False(t, harness.TakesCommand(""))
	require.False(t, harness.TakesCommand("grpc"))
}

// liveRec records a live session's stream and lets a test wait for an
// event of it.
type liveRec struct {
	mu     sync.Mutex
	out    bytes.Buffer
	evs    []event.Event
	signal chan struct{}
	logs   string // the session log's directory, where the test gave one
}

func (l *liveRec) options() harness.Options {
	l.signal = make(chan struct{}, 1)
	return harness.Options{
		OnLine: func(line []byte) { l.mu.Lock(); l.out.Write(line); l.mu.Unlock() },
		OnEvent: func(ev event.Event) {
			l.mu.Lock()
			l.evs = append(l.evs, ev)
			l.mu.Unlock()
			select {
			case l.signal <- struct{}{}:
			default:
			}
		},
	}
}

// waitFor waits until the stream has n events of type typ and returns
// the last. The bound only turns a hang into a failure.
func (l *liveRec) waitFor(t *testing.T, typ event.Type, n int) event.Body {
	t.Helper()
	bound := time.After(30 * time.Second)
	for {
		l.mu.Lock()
		got := harnesstest.Bodies(l.evs, typ)
		l.mu.Unlock()
		if len(got) >= n {
			return got[n-1]
		}
		select {
		case <-l.signal:
		case <-bound:
			t.Fatalf("no %d %s events; stream so far:\n%s", n, typ, l.stream())
		}
	}
}

func (l *liveRec) stream() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.out.Bytes())
}

func (l *liveRec) find(typ event.Type) []event.Body {
	l.mu.Lock()
	defer l.mu.Unlock()
	return harnesstest.Bodies(l.evs, typ)
}

// startLive starts a live session of the fake ACP agent in mode.
func startLive(t *testing.T, mode, permissions string, b harness.Budgets, so harness.SessionOptions) (*harness.Session, *liveRec, string) {
	t.Helper()
	argv, env := fakeagent.Command("acp-agent", mode)
	dir := t.TempDir()
	rec := &liveRec{}
	so.Options = rec.options()
	var st harness.Settings
	s, err := st.StartSession(context.Background(), harness.Task{
		Agent: "fake-acp", Protocol: harness.ProtocolACP, Command: argv, BaseEnv: env,
		Cwd: dir, Permissions: permissions, Budgets: &b,
	}, so)
	require.NoError(t, err)
	return s, rec, dir
}

// checkLive checks the ended session's stream and that no process of it
// is left.
func checkLive(t *testing.T, rec *liveRec) {
	t.Helper()
	out := rec.stream()
	require.NoError(t, event.CheckNDJSON(out), "%s", out)
	pid := rec.find(event.TypeSessionStart)[0].(*event.SessionStart).PID
	require.NotZero(t, pid)
	require.False(t, process.Alive(pid), "the agent is still alive")
}

// sendOne starts a live session of the fake in mode, sends it one prompt
// and waits for the first event of type until.
func sendOne(t *testing.T, mode, permissions string, b harness.Budgets, so harness.SessionOptions, until event.Type) (*harness.Session, *liveRec, string) {
	t.Helper()
	s, rec, dir := startLive(t, mode, permissions, b, so)
	require.NoError(t, s.Send("one"))
	rec.waitFor(t, until, 1)
	return s, rec, dir
}

// startTwo starts a live session of the fake in mode and sends it two
// prompts (sendTwo).
func startTwo(t *testing.T, mode string, so harness.SessionOptions) (*harness.Session, *liveRec) {
	t.Helper()
	s, rec, _ := startLive(t, mode, "", small(), so)
	sendTwo(t, s)
	return s, rec
}

// sendTwo sends the live session s two prompts, "one" and "two", the
// second queued behind the first.
func sendTwo(t *testing.T, s *harness.Session) {
	t.Helper()
	require.NoError(t, s.Send("one"))
	require.NoError(t, s.Send("two"))
}

// closeLive ends a session that must end well and checks its stream.
func closeLive(t *testing.T, s *harness.Session, rec *liveRec) *event.Result {
	t.Helper()
	res, err := s.Close()
	require.NoError(t, err)
	checkLive(t, rec)
	require.Equal(t, event.ResultSuccess, res.Status)
	return res
}

// TestLiveSessionTwoTurns: two prompts on one session are two turns of
// one agent process and one session id, each with the usage the agent
// reported for it; the session's result sums them.
func TestLiveSessionTwoTurns(t *testing.T) {
	t.Parallel()
	s, rec, dir := startLive(t, "normal", "", small(), harness.SessionOptions{})
	require.NoError(t, s.Send("write the file"))
	require.NoError(t, s.Send("and again"), "queued behind the first turn")
	res, err := s.Close()
	require.NoError(t, err)
	checkLive(t, rec)
	require.Equal(t, event.ResultSuccess, res.Status)
	require.Equal(t, "sess-1", res.SessionID)
	starts, ends := rec.find(event.TypeTurnStart), rec.find(event.TypeTurnEnd)
	require.Len(t, starts, 2)
	require.Len(t, ends, 2)
	require.Equal(t, "and again", starts[1].(*event.TurnStart).Prompt)
	for i, b := range ends {
		e := b.(*event.TurnEnd)
		require.Equal(t, event.ResultSuccess, e.Status, "turn %d", i+1)
		require.Equal(t, "Done.", e.Text)
		require.Equal(t, event.Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 100, CacheWriteTokens: 20}, e.Usage)
	}
	require.Equal(t, int64(20), res.Usage.InputTokens)
	require.Equal(t, "Done.", res.Text)
	for n := 1; n <= 2; n++ {
		got, err := os.ReadFile(filepath.Join(dir, fakeagent.TurnFile(n)))
		require.NoError(t, err)
		require.Equal(t, fakeagent.ACPFileText, string(got))
	}
	require.ErrorIs(t, s.Send("late"), harness.ErrSessionOver)
}

// TestLiveSessionIdleBetweenTurns: a session waiting for its caller is
// not stuck: with an idle budget far shorter than the wait between two
// prompts, neither the idle warning nor the timeout fires, and the next
// turn runs in the same process.
func TestLiveSessionIdleBetweenTurns(t *testing.T) {
	t.Parallel()
	b := small()
	// The warning would come after 50 ms of silence, the timeout after 200.
	b.Idle, b.IdleWarning = 200*time.Millisecond, 150*time.Millisecond
	s, rec, _ := sendOne(t, "normal", "", b, harness.SessionOptions{}, event.TypeTurnEnd)
	// The wait is what is tested: five idle budgets with no prompt.
	<-time.After(5 * b.Idle)
	require.NoError(t, s.Send("two"))
	rec.waitFor(t, event.TypeTurnEnd, 2)
	res, err := s.Close()
	require.NoError(t, err)
	checkLive(t, rec)
	require.Equal(t, event.ResultSuccess, res.Status)
	between := false
	for _, ev := range rec.evs {
		switch b := ev.Body.(type) {
		case *event.TurnEnd:
			between = true
		case *event.TurnStart:
			between = false
		case *event.Warning:
			require.False(t, between && b.Code == event.WarnIdle, "an idle warning between turns")
		}
	}
}

// TestLiveSessionFaults: the agent of a live session misbehaves between
// or during turns; each session ends with a valid stream (turns closed,
// usage adding up) and no process left.
func TestLiveSessionFaults(t *testing.T) {
	t.Parallel()
	t.Run("agent-exits-between-turns", func(t *testing.T) {
		t.Parallel()
		s, rec, _ := sendOne(t, "exit-after-turn", "", small(), harness.SessionOptions{}, event.TypeTurnEnd)
		res, err := s.Wait() // the agent ended the session by itself
		require.Error(t, err)
		checkLive(t, rec)
		require.Equal(t, event.ResultError, res.Status, "a session the agent left is no success")
		require.ErrorIs(t, s.Send("two"), harness.ErrSessionOver)
		_, err = s.Close()
		require.Error(t, err)
		require.Len(t, rec.find(event.TypeTurnStart), 1)
	})
	t.Run("agent-dies-mid-turn", func(t *testing.T) {
		t.Parallel()
		s, rec := startTwo(t, "die-mid-turn", harness.SessionOptions{})
		res := requireDiedInTurnTwo(t, s, rec)
		require.Equal(t, int64(10), res.Usage.InputTokens, "the first turn's usage only")
	})
	t.Run("agent-floods-between-turns", func(t *testing.T) {
		t.Parallel()
		s, rec, _ := sendOne(t, "flood-between", "", small(), harness.SessionOptions{}, event.TypeTurnEnd)
		require.NoError(t, s.Send("two"))
		closeLive(t, s, rec)
		require.Equal(t, "Done.", rec.find(event.TypeTurnEnd)[1].(*event.TurnEnd).Text, "the chatter between turns is no answer")
	})
	t.Run("agent-answers-a-turn-never-sent", func(t *testing.T) {
		t.Parallel()
		s, rec := startTwo(t, "answer-unsent", harness.SessionOptions{})
		res := closeLive(t, s, rec)
		require.Len(t, rec.find(event.TypeTurnEnd), 2)
		require.Equal(t, int64(20), res.Usage.InputTokens, "the answers to nothing count nothing")
	})
	t.Run("interrupt-acknowledged-session-goes-on", func(t *testing.T) {
		t.Parallel()
		s, rec, _ := sendOne(t, "slow-then-normal", "", small(), harness.SessionOptions{}, event.TypeToolStart)
		s.Interrupt()
		first := rec.waitFor(t, event.TypeTurnEnd, 1).(*event.TurnEnd)
		require.Equal(t, event.ResultCancelled, first.Status)
		require.NoError(t, s.Send("two"))
		closeLive(t, s, rec)
		require.Equal(t, event.ResultSuccess, rec.find(event.TypeTurnEnd)[1].(*event.TurnEnd).Status)
		require.Len(t, rec.find(event.TypeSessionStart), 1)
	})
	t.Run("turn-timeout", func(t *testing.T) {
		t.Parallel()
		s, rec := startTwo(t, "slow-then-normal", harness.SessionOptions{TurnTimeout: 2 * time.Second})
		closeLive(t, s, rec)
		ends := rec.find(event.TypeTurnEnd)
		require.Equal(t, event.ResultTimeout, ends[0].(*event.TurnEnd).Status)
		require.Equal(t, event.ResultSuccess, ends[1].(*event.TurnEnd).Status)
	})
	t.Run("turn-timeout-never-acknowledged", func(t *testing.T) {
		t.Parallel()
		s, rec, _ := startLive(t, "ignore-cancel", "", small(), harness.SessionOptions{TurnTimeout: 50 * time.Millisecond})
		require.NoError(t, s.Send("one"))
		requireTurnTimedOut(t, s, rec)
		require.Equal(t, event.StatusTimeout, rec.find(event.TypeToolEnd)[0].(*event.ToolEnd).Status)
	})
	t.Run("interrupt-never-acknowledged", func(t *testing.T) {
		t.Parallel()
		s, rec, _ := sendOne(t, "ignore-cancel", "", small(), harness.SessionOptions{}, event.TypeToolStart)
		s.Interrupt()
		requireStopped(t, s, rec)
	})
}

// requireDiedInTurnTwo checks a session whose agent died in its second
// turn: the first ended well, the second closed by the harness with no
// answer, the session an error. It returns the session's result.
func requireDiedInTurnTwo(t *testing.T, s *harness.Session, rec *liveRec) *event.Result {
	t.Helper()
	res, err := s.Wait()
	require.Error(t, err)
	ends := rec.find(event.TypeTurnEnd)
	checkLive(t, rec)
	require.Equal(t, event.ResultError, res.Status)
	require.Len(t, ends, 2)
	require.Equal(t, event.ResultSuccess, ends[0].(*event.TurnEnd).Status)
	second := ends[1].(*event.TurnEnd)
	require.Equal(t, event.ResultError, second.Status)
	require.True(t, second.Synthetic)
	require.Empty(t, second.Text, "half an answer is none")
	return res
}

// requireStopped checks a session whose agent ignored the interrupt of
// its turn: it was stopped, the session cancelled, the turn closed
// cancelled by the harness.
func requireStopped(t *testing.T, s *harness.Session, rec *liveRec) {
	t.Helper()
	res, err := s.Wait()
	require.ErrorIs(t, err, harness.ErrInterrupted)
	checkLive(t, rec)
	require.Equal(t, event.ResultCancelled, res.Status)
	end := rec.find(event.TypeTurnEnd)[0].(*event.TurnEnd)
	require.Equal(t, event.ResultCancelled, end.Status)
	require.True(t, end.Synthetic)
}

// denyThenAllow answers the first turn's permission request deny, and the
// second's, in a turn of prompt "two", allow; it returns both requests.
func denyThenAllow(t *testing.T, s *harness.Session, rec *liveRec) (first, second *event.PermissionRequest) {
	t.Helper()
	first = rec.waitFor(t, event.TypePermissionRequest, 1).(*event.PermissionRequest)
	require.True(t, s.Answer(first.CallID, false))
	require.False(t, s.Answer(first.CallID, true), "answered already")
	rec.waitFor(t, event.TypeTurnEnd, 1)
	require.NoError(t, s.Send("two"))
	second = rec.waitFor(t, event.TypePermissionRequest, 2).(*event.PermissionRequest)
	require.True(t, s.Answer(second.CallID, true))
	return first, second
}

// requireOnlyAllowedRan checks that the denied call's file is not in dir
// and the allowed one's is.
func requireOnlyAllowedRan(t *testing.T, dir, denied, allowed string) {
	t.Helper()
	_, err := os.Stat(filepath.Join(dir, denied))
	require.True(t, os.IsNotExist(err), "denied: the tool never ran")
	_, err = os.Stat(filepath.Join(dir, allowed))
	require.NoError(t, err)
}

// TestLiveSessionAsk: with permissions ask, each permission request is an
// event the caller answers: a denial and the tool never runs, an approval
// and it does; one left unanswered is denied at its deadline.
func TestLiveSessionAsk(t *testing.T) {
	t.Parallel()
	s, rec, dir := sendOne(t, "normal", harness.Ask, small(), harness.SessionOptions{AskDeadline: time.Hour}, event.TypePermissionRequest)
	req, second := denyThenAllow(t, s, rec)
	require.Equal(t, "call-1", req.CallID)
	require.Equal(t, event.KindEdit, req.Kind)
	require.Equal(t, "turn_1", req.TurnID)
	require.Equal(t, "call-1#2", second.CallID, "the stream's id of the call")
	closeLive(t, s, rec)
	requireOnlyAllowedRan(t, dir, fakeagent.TurnFile(1), fakeagent.TurnFile(2))
	ends := rec.find(event.TypeToolEnd)
	require.Equal(t, event.StatusDenied, ends[0].(*event.ToolEnd).Status)
	require.Equal(t, event.StatusOK, ends[2].(*event.ToolEnd).Status)

	t.Run("unanswered-is-denied", func(t *testing.T) {
		t.Parallel()
		s, rec, dir := startLive(t, "normal", harness.Ask, small(), harness.SessionOptions{AskDeadline: time.Millisecond})
		require.NoError(t, s.Send("one"))
		_, err := s.Close()
		require.NoError(t, err)
		checkLive(t, rec)
		require.Equal(t, int64(1), rec.find(event.TypePermissionRequest)[0].(*event.PermissionRequest).DeadlineMS)
		_, err = os.Stat(filepath.Join(dir, fakeagent.TurnFile(1)))
		require.True(t, os.IsNotExist(err))
	})
}
