package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/internal/toyagent"
	"github.com/agentharness/harness/process"
	"github.com/agentharness/harness/registry"
)

// TestSessionTransport runs an agent of the second kind through the same
// supervisor as the CLIs: the harness writes the opening request, answers
// the agent's request on its stdin (as the permission mode says), turns
// its notifications into events, and closes stdin at the end of the turn,
// upon which the agent exits by itself (exit 0, no linger, no kill).
func TestSessionTransport(t *testing.T) {
	require.NoError(t, toyagent.Register())
	argv, env := fakeagent.Command(fakeagent.ToySession)
	for perm, allowed := range map[string]bool{harness.FullAccess: true, harness.ReadOnly: false} {
		t.Run(perm, func(t *testing.T) {
			var out bytes.Buffer
			var msgs []string
			b := harness.Budgets{Idle: 10 * time.Second, Hard: 30 * time.Second, Linger: 5 * time.Second, KillGrace: time.Second}
			run, err := harness.Start(context.Background(), harness.Task{Agent: "toy-agent", Prompt: "hello", Permissions: perm,
				Binary: argv[0], BaseEnv: env, Cwd: t.TempDir(), Budgets: &b}, harness.Options{
				OnLine: func(l []byte) { out.Write(l) },
				OnEvent: func(ev event.Event) {
					if m, ok := ev.Body.(*event.Message); ok {
						msgs = append(msgs, m.Text)
					}
				}})
			require.NoError(t, err)
			res, err := run.Wait()
			require.NoError(t, err)
			require.Equal(t, event.ResultSuccess, res.Status)
			require.Equal(t, "finished", res.Text)
			require.False(t, res.LingeredAfterDone, "the agent exits when stdin closes, not at the end of the linger budget")
			require.NotNil(t, res.ExitCode)
			require.Equal(t, 0, *res.ExitCode)
			require.Equal(t, []string{fmt.Sprintf("prompt %q, allowed=%v", "hello", allowed)}, msgs)
			adaptertest.CheckStream(t, out.Bytes())
		})
	}
}

// TestRegister: a registered agent is known by id and alias everywhere
// (the library, the registry the configuration checks names with), and a
// name can be taken only once.
func TestRegister(t *testing.T) {
	require.NoError(t, toyagent.Register())
	require.Contains(t, harness.AgentNames(), "toy")
	a, err := harness.Adapter("TOY-AGENT")
	require.NoError(t, err)
	require.Equal(t, "toy", a.Name())
	id, ok := registry.Canonical("toy-agent")
	require.True(t, ok)
	require.Equal(t, "toy", id)
	got, err := harness.Lookup("toy-agent")
	require.NoError(t, err)
	require.Equal(t, "Toy Agent", got.Info.Display)
	require.NotNil(t, got.Mock, "the registration's mock wiring is kept")
	require.Equal(t, []string{"toy-agent"}, a.Binaries(), "an agent's binaries are its Info's")
	builtin, err := harness.Lookup("claude")
	require.NoError(t, err)
	require.Equal(t, "Claude Code", builtin.Info.Display)
	require.Equal(t, []string{"claude"}, builtin.Binaries())
	require.Error(t, harness.Register(toyagent.Agent), "taken")
	other := harness.Agent{Info: registry.AgentInfo{ID: "other", Aliases: []string{"claude-code"}, Binaries: []string{"other"}},
		Driver: toyagent.Adapter{}}
	require.ErrorContains(t, harness.Register(other), `"claude-code" is taken`)
	other.Info.Aliases = nil
	other.Driver = nil
	require.ErrorContains(t, harness.Register(other), "needs a Driver")
	require.NotContains(t, harness.AgentNames(), "other")
}

// startClaudeLive starts a live session of the fake Claude Code over
// stream-json (fakeagent.ClaudeStream) with the fault mode.
func startClaudeLive(t *testing.T, mode string) (*harness.Session, *liveRec) {
	t.Helper()
	b := small()
	b.Linger = 10 * time.Second // the fake exits at EOF: it never lingers that long
	return startFakeLive(t, harness.Task{Agent: "claude", Protocol: harness.ProtocolStreamJSON, Budgets: &b},
		fakeagent.ClaudeStream, fakeagent.ClaudeStreamMode+"="+mode)
}

// startFakeLive starts a live session of t's agent played by the fake
// named fake, its mode set by the variable modeVar (KEY=VALUE), in a
// fresh directory.
func startFakeLive(t *testing.T, task harness.Task, fake, modeVar string) (*harness.Session, *liveRec) {
	t.Helper()
	return startFakeLiveWith(t, task, fake, modeVar, harness.SessionOptions{})
}

// startFakeLiveWith is startFakeLive with the session options so (their
// callbacks replaced by the recorder's).
func startFakeLiveWith(t *testing.T, task harness.Task, fake, modeVar string, so harness.SessionOptions) (*harness.Session, *liveRec) {
	t.Helper()
	argv, env := fakeagent.Command(fake)
	rec := &liveRec{}
	task.Binary, task.BaseEnv, task.Cwd = argv[0], append(env, modeVar), t.TempDir()
	so.Options = rec.options()
	var st harness.Settings
	s, err := st.StartSession(context.Background(), task, so)
	require.NoError(t, err)
	return s, rec
}

// interruptClaudeLive starts the fake in mode, sends it a prompt and
// interrupts the turn once the agent has said something.
func interruptClaudeLive(t *testing.T, mode string) (*harness.Session, *liveRec) {
	t.Helper()
	s, rec := startClaudeLive(t, mode)
	require.NoError(t, s.Send("one"))
	rec.waitFor(t, event.TypeMessage, 1)
	s.Interrupt()
	return s, rec
}

// TestClaudeLiveSession: two prompts, two turns of one process, each
// with the usage its result reported (10/5), the session's the sum.
func TestClaudeLiveSession(t *testing.T) {
	t.Parallel()
	s, rec := startClaudeLive(t, "")
	sendTwo(t, s)
	res := closeLive(t, s, rec)
	require.Equal(t, "fake-1", res.SessionID)
	require.Equal(t, "fake-1", rec.find(event.TypeSessionStart)[0].(*event.SessionStart).SessionID)
	ends := rec.find(event.TypeTurnEnd)
	require.Len(t, ends, 2)
	for i, b := range ends {
		e := b.(*event.TurnEnd)
		require.Equal(t, event.ResultSuccess, e.Status)
		require.Equal(t, "answer "+string(rune('1'+i)), e.Text)
		require.Equal(t, int64(10), e.Usage.InputTokens)
		require.Equal(t, int64(5), e.Usage.OutputTokens)
	}
	require.Equal(t, int64(20), res.Usage.InputTokens)
	require.Equal(t, int64(10), res.Usage.OutputTokens)
}

// TestSessionDefaultProtocol: a session whose task names no protocol is
// held over the agent's own two-way one (Claude's stream-json), as the
// CLI's does: the library used the run's default, the headless CLI, which
// holds one prompt, so the session ended before its first turn.
func TestSessionDefaultProtocol(t *testing.T) {
	t.Parallel()
	b := small()
	b.Linger = 10 * time.Second
	s, rec := startFakeLive(t, harness.Task{Agent: "claude", Budgets: &b}, fakeagent.ClaudeStream, fakeagent.ClaudeStreamMode+"=")
	sendTwo(t, s)
	closeLive(t, s, rec)
	require.Len(t, rec.find(event.TypeTurnEnd), 2)
	var st harness.Settings
	require.Equal(t, harness.ProtocolStreamJSON, st.SessionProtocol("claude"))
	require.Equal(t, harness.ProtocolACP, st.SessionProtocol("gemini"))
}

// TestSessionQueueFull: while the first turn hangs, a prompt past the
// 64 waiting is ErrQueueFull, not ErrSessionOver, and the session goes
// on: once the turn is interrupted, a prompt is taken again. Before, the
// refusal said the session was over.
func TestSessionQueueFull(t *testing.T) {
	t.Parallel()
	s, rec := startClaudeLive(t, "hang")
	require.NoError(t, s.Send("first"))
	for i := range adapters.MaxQueued {
		require.NoError(t, s.Send("waiting "+strconv.Itoa(i)))
	}
	err := s.Send("one too many")
	require.ErrorIs(t, err, harness.ErrQueueFull)
	require.NotErrorIs(t, err, harness.ErrSessionOver)
	rec.waitFor(t, event.TypeMessage, 1)
	s.Interrupt()
	rec.waitFor(t, event.TypeTurnEnd, 2)
	require.NoError(t, s.Send("after"))
	s.Stop()
	s.Wait()
}

// TestSessionSendBlank: a prompt that is empty or only white space is
// refused with ErrBlankPrompt, as harness session and serve refuse it,
// nothing is sent, and the session goes on; StartSession refuses one as
// the first prompt before starting the agent. Send took it as a turn.
func TestSessionSendBlank(t *testing.T) {
	t.Parallel()
	s, rec, _ := startLive(t, "normal", "", small(), harness.SessionOptions{})
	for _, p := range []string{"", "   ", "\t\n \r\n"} {
		err := s.Send(p)
		require.ErrorIs(t, err, harness.ErrBlankPrompt, "%q", p)
		require.NotErrorIs(t, err, harness.ErrSessionOver)
	}
	require.Equal(t, "a prompt needs its text", harness.ErrBlankPrompt.Error(), "harness session's words")
	require.NoError(t, s.Send("one"))
	closeLive(t, s, rec)
	starts := rec.find(event.TypeTurnStart)
	require.Len(t, starts, 1, "%s", rec.stream())
	require.Equal(t, "one", starts[0].(*event.TurnStart).Prompt)

	var st harness.Settings
	sess, err := st.StartSession(context.Background(), harness.Task{Agent: "fake-acp", Protocol: harness.ProtocolACP,
		Command: []string{"/nonexistent/fake"}, Cwd: t.TempDir(), Prompt: " \n"}, harness.SessionOptions{})
	require.ErrorIs(t, err, harness.ErrBlankPrompt)
	require.Nil(t, sess)
}

// TestClaudeLiveFaults: the fake CLI misbehaves; each session ends with a
// valid stream and no process left.
func TestClaudeLiveFaults(t *testing.T) {
	t.Parallel()
	t.Run("dies-mid-turn", func(t *testing.T) {
		t.Parallel()
		s, rec := startClaudeLive(t, "die-mid-turn")
		sendTwo(t, s)
		res := requireDiedInTurnTwo(t, s, rec)
		require.Equal(t, int64(5), res.Usage.OutputTokens, "the first turn's output only")
	})
	t.Run("garbage-line", func(t *testing.T) {
		t.Parallel()
		s, rec := startClaudeLive(t, "garbage")
		sendTwo(t, s)
		res := closeLive(t, s, rec)
		require.Equal(t, int64(2), res.Stats.UnparsedLines)
		for _, b := range rec.find(event.TypeTurnEnd) {
			require.Equal(t, event.ResultSuccess, b.(*event.TurnEnd).Status)
		}
	})
	t.Run("interrupt-with-no-turn", func(t *testing.T) {
		t.Parallel()
		s, rec := startClaudeLive(t, "")
		s.Interrupt() // nothing to interrupt: the session goes on
		require.NoError(t, s.Send("one"))
		rec.waitFor(t, event.TypeTurnEnd, 1)
		s.Interrupt()
		require.NoError(t, s.Send("two"))
		closeLive(t, s, rec)
		require.Len(t, rec.find(event.TypeTurnEnd), 2)
	})
	// hang: the agent ends the turn at once; slow-stop: it acknowledges at
	// once and ends the turn 3 s later, past the 2 s grace, winding down,
	// not ignoring it. Neither is stopped, and the session goes on.
	for _, mode := range []string{"hang", "slow-stop"} {
		t.Run("interrupt-mid-turn-"+mode, func(t *testing.T) {
			t.Parallel()
			s, rec := interruptClaudeLive(t, mode)
			end := rec.waitFor(t, event.TypeTurnEnd, 1).(*event.TurnEnd)
			require.Equal(t, event.ResultCancelled, end.Status)
			require.False(t, end.Synthetic, "the agent ended it: it was not stopped")
			require.NoError(t, s.Send("two"))
			closeLive(t, s, rec)
			require.Equal(t, event.ResultSuccess, rec.find(event.TypeTurnEnd)[1].(*event.TurnEnd).Status)
			require.Empty(t, rec.find(event.TypeError))
		})
	}
	// A second interrupt, or the turn's timeout after an interrupt, while
	// the CLI winds the turn down (slow-stop: acknowledged at once, ended
	// 3 s later) keeps the first one's acknowledgement: the CLI is given
	// its grace, not stopped at 2 s, and the session goes on.
	t.Run("interrupt-twice-slow-stop", func(t *testing.T) {
		t.Parallel()
		s, rec := interruptClaudeLive(t, "slow-stop")
		s.Interrupt()
		end := rec.waitFor(t, event.TypeTurnEnd, 1).(*event.TurnEnd)
		require.Equal(t, event.ResultCancelled, end.Status)
		require.False(t, end.Synthetic, "the agent ended it: it was not stopped")
		require.NoError(t, s.Send("two"))
		closeLive(t, s, rec)
		require.Equal(t, event.ResultSuccess, rec.find(event.TypeTurnEnd)[1].(*event.TurnEnd).Status)
	})
	t.Run("turn-timeout-after-interrupt-slow-stop", func(t *testing.T) {
		t.Parallel()
		b := small()
		b.Linger = 10 * time.Second
		s, rec := startFakeLiveWith(t, harness.Task{Agent: "claude", Protocol: harness.ProtocolStreamJSON, Budgets: &b},
			fakeagent.ClaudeStream, fakeagent.ClaudeStreamMode+"=slow-stop", harness.SessionOptions{TurnTimeout: time.Second})
		require.NoError(t, s.Send("one"))
		rec.waitFor(t, event.TypeMessage, 1)
		s.Interrupt()
		end := rec.waitFor(t, event.TypeTurnEnd, 1).(*event.TurnEnd)
		require.Equal(t, event.ResultTimeout, end.Status, "it outlived its timeout")
		require.False(t, end.Synthetic, "the agent ended it: it was not stopped")
		require.NoError(t, s.Send("two"))
		closeLive(t, s, rec)
		require.Equal(t, event.ResultSuccess, rec.find(event.TypeTurnEnd)[1].(*event.TurnEnd).Status)
	})
	t.Run("interrupt-never-acknowledged", func(t *testing.T) {
		t.Parallel()
		s, rec := interruptClaudeLive(t, "deaf")
		requireStopped(t, s, rec)
	})
	t.Run("turn-timeout-never-acknowledged", func(t *testing.T) {
		t.Parallel()
		b := small()
		s, rec := startFakeLiveWith(t, harness.Task{Agent: "claude", Protocol: harness.ProtocolStreamJSON, Budgets: &b},
			fakeagent.ClaudeStream, fakeagent.ClaudeStreamMode+"=deaf", harness.SessionOptions{TurnTimeout: 50 * time.Millisecond})
		require.NoError(t, s.Send("one"))
		requireTurnTimedOut(t, s, rec)
	})
	t.Run("never-starts", func(t *testing.T) {
		t.Parallel()
		// Silent before its first system/init: the setup budget ends the
		// session, not the idle watchdog (no idle warning meanwhile).
		argv, env := fakeagent.Command(fakeagent.ClaudeStream)
		rec, b := &liveRec{}, small()
		b.Setup, b.Idle, b.IdleWarning = 300*time.Millisecond, time.Hour, 100*time.Millisecond
		var st harness.Settings
		s, err := st.StartSession(context.Background(), harness.Task{Agent: "claude", Protocol: harness.ProtocolStreamJSON,
			Binary: argv[0], BaseEnv: append(env, fakeagent.ClaudeStreamMode+"=mute"), Cwd: t.TempDir(), Budgets: &b},
			harness.SessionOptions{Options: rec.options()})
		require.NoError(t, err)
		require.NoError(t, s.Send("one"))
		res, err := s.Wait()
		require.Error(t, err)
		checkLive(t, rec)
		require.Equal(t, event.ResultError, res.Status)
		e := rec.find(event.TypeError)[0].(*event.Error)
		require.Equal(t, event.ClassProtocol, e.Class)
		require.Contains(t, e.Message, "did not start the session")
		for _, w := range rec.find(event.TypeWarning) {
			require.NotEqual(t, event.WarnIdle, w.(*event.Warning).Code, "no idle warning while the CLI starts")
		}
		require.Empty(t, rec.find(event.TypeTurnStart), "the turn never started")
	})
	t.Run("end-of-input-exits-clean", func(t *testing.T) {
		t.Parallel()
		s, rec := startClaudeLive(t, "")
		res := closeLive(t, s, rec) // no prompt at all
		require.NotNil(t, res.ExitCode)
		require.Equal(t, 0, *res.ExitCode)
		require.False(t, res.LingeredAfterDone, "the CLI exits when stdin closes")
		pid := rec.find(event.TypeSessionStart)[0].(*event.SessionStart).PID
		require.False(t, process.Alive(pid))
	})
}

// TestClaudeStreamJSONRun: a one-prompt run over stream-json (Settings.Start
// with the protocol): the prompt is the one user message, the CLI's
// result the run's, and the CLI exits at the end of its stdin.
func TestClaudeStreamJSONRun(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command(fakeagent.ClaudeStream)
	b := small()
	b.Linger = 10 * time.Second
	run, err := harness.Start(context.Background(), harness.Task{Agent: "claude", Protocol: harness.ProtocolStreamJSON,
		Prompt: "hello", Binary: argv[0], BaseEnv: env, Cwd: t.TempDir(), Budgets: &b}, harness.Options{})
	require.NoError(t, err)
	res, err := run.Wait()
	require.NoError(t, err)
	require.Equal(t, event.ResultSuccess, res.Status)
	require.Equal(t, "answer 1", res.Text)
	require.Equal(t, int64(5), res.Usage.OutputTokens)
	require.False(t, res.LingeredAfterDone)
}

// TestLiveProtocol: a live session's default protocol is the agent's own
// where harness speaks it; stream-json is Claude's only.
func TestLiveProtocol(t *testing.T) {
	t.Parallel()
	require.Equal(t, harness.ProtocolStreamJSON, harness.LiveProtocol("claude"))
	require.Equal(t, harness.ProtocolACP, harness.LiveProtocol("gemini"))
	_, err := harness.Start(context.Background(), harness.Task{Agent: "gemini", Protocol: harness.ProtocolStreamJSON, Prompt: "x"}, harness.Options{})
	if err == nil {
		t.Fatal("gemini over stream-json started")
	}
	require.ErrorContains(t, err, `protocol "stream-json" is claude's own`)
}

// TestClaudeLiveAsk: with permissions ask, the fake's can_use_tool is a
// permission_request; a denial and the command never runs, an approval
// and it does; one left unanswered is denied at the ask deadline.
func TestClaudeLiveAsk(t *testing.T) {
	t.Parallel()
	start := func(t *testing.T, deadline time.Duration) (*harness.Session, *liveRec, string) {
		argv, env := fakeagent.Command(fakeagent.ClaudeStream)
		rec, dir, b := &liveRec{}, t.TempDir(), small()
		b.Linger = 10 * time.Second
		var st harness.Settings
		s, err := st.StartSession(context.Background(), harness.Task{
			Agent: "claude", Protocol: harness.ProtocolStreamJSON, Binary: argv[0], Permissions: harness.Ask,
			BaseEnv: append(env, fakeagent.ClaudeStreamMode+"=ask"), Cwd: dir, Budgets: &b,
		}, harness.SessionOptions{Options: rec.options(), AskDeadline: deadline})
		require.NoError(t, err)
		return s, rec, dir
	}
	s, rec, dir := start(t, time.Hour)
	require.NoError(t, s.Send("one"))
	req, _ := denyThenAllow(t, s, rec)
	require.Equal(t, "call-1", req.CallID)
	require.Equal(t, event.KindShell, req.Kind)
	require.Equal(t, "echo ok > ask-1.txt", req.Command)
	closeLive(t, s, rec)
	requireOnlyAllowedRan(t, dir, "ask-1.txt", "ask-2.txt")
	ends := rec.find(event.TypeToolEnd)
	require.Equal(t, event.StatusDenied, ends[0].(*event.ToolEnd).Status)
	require.Equal(t, event.StatusOK, ends[1].(*event.ToolEnd).Status)

	t.Run("unanswered-is-denied", func(t *testing.T) {
		t.Parallel()
		s, rec, dir := start(t, time.Millisecond)
		require.NoError(t, s.Send("one"))
		rec.waitFor(t, event.TypeTurnEnd, 1)
		closeLive(t, s, rec)
		require.Equal(t, int64(1), rec.find(event.TypePermissionRequest)[0].(*event.PermissionRequest).DeadlineMS)
		_, err := os.Stat(filepath.Join(dir, "ask-1.txt"))
		require.True(t, os.IsNotExist(err))
	})
}

// TestParseSessionRecord: the native lines of each captured live session
// (Claude Code over stream-json, Codex over app-server: two turns, an
// interrupt, permission requests allowed and denied), parsed with what
// the session's stream recorded of its turns, give that stream again —
// the same events in the same order, apart from times and the run id.
func TestParseSessionRecord(t *testing.T) {
	for _, tc := range []struct{ name, native, stream, protocol string }{
		{"claude-two-turns", "adapters/claude/testdata/live/two-turns.jsonl", "adapters/claude/testdata/live/two-turns.golden.ndjson", harness.ProtocolStreamJSON},
		{"claude-interrupt", "adapters/claude/testdata/live/interrupt.jsonl", "adapters/claude/testdata/live/interrupt.golden.ndjson", harness.ProtocolStreamJSON},
		{"claude-ask", "adapters/claude/testdata/live/ask.jsonl", "adapters/claude/testdata/live/ask.golden.ndjson", harness.ProtocolStreamJSON},
		{"codex-converse", "adapters/codex/testdata/appserver/converse.jsonl", "adapters/codex/testdata/appserver/converse.live.ndjson", harness.ProtocolAppServer},
		{"codex-interrupt", "adapters/codex/testdata/appserver/interrupt.jsonl", "adapters/codex/testdata/appserver/interrupt.live.ndjson", harness.ProtocolAppServer},
		{"codex-ask", "adapters/codex/testdata/appserver/ask.jsonl", "adapters/codex/testdata/appserver/ask.live.ndjson", harness.ProtocolAppServer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			recorded, err := os.ReadFile(filepath.FromSlash(tc.stream))
			require.NoError(t, err)
			recorded, _, _ = bytes.Cut(recorded, []byte("--- stdin\n"))
			rec, err := harness.ReadSessionRecord(bytes.NewReader(recorded))
			require.NoError(t, err)
			require.NotNil(t, rec)
			native := liveNative(t, tc.native)
			var out bytes.Buffer
			enc := event.NewEncoder(&out)
			agent := strings.Split(tc.name, "-")[0]
			_, err = harness.Parse(context.Background(), native, agent, func(ev event.Event) { enc.Encode(ev) },
				harness.ParseOptions{Protocol: tc.protocol, Session: rec})
			require.NoError(t, err)
			adaptertest.CheckStream(t, out.Bytes())
			require.Equal(t, harnesstest.ReparseParts(t, recorded), harnesstest.ReparseParts(t, out.Bytes()))
		})
	}
}

// TestReadSessionRecordDamaged: a recorded stream cut partway (the
// harness died writing it) still gives the turns before the cut, and the
// native lines reparse with them to a valid stream.
func TestReadSessionRecordDamaged(t *testing.T) {
	recorded, err := os.ReadFile("adapters/claude/testdata/live/two-turns.golden.ndjson")
	require.NoError(t, err)
	i := bytes.Index(recorded, []byte(`{"v":1,"type":"turn_start","run":"run_01HARNESSTEST0000000000000","seq":`))
	j := bytes.LastIndex(recorded, []byte(`{"v":1,"type":"turn_start"`))
	require.Greater(t, j, i, "two turns")
	rec, err := harness.ReadSessionRecord(bytes.NewReader(recorded[:j+20]))
	require.NoError(t, err)
	require.Len(t, rec.Turns, 1, "the turn before the cut")
	require.Empty(t, rec.Status, "no result was written")
	var out bytes.Buffer
	enc := event.NewEncoder(&out)
	_, err = harness.Parse(context.Background(), liveNative(t, "adapters/claude/testdata/live/two-turns.jsonl"), "claude", func(ev event.Event) { enc.Encode(ev) },
		harness.ParseOptions{Protocol: harness.ProtocolStreamJSON, Session: rec})
	require.NoError(t, err)
	adaptertest.CheckStream(t, out.Bytes())
	evs, err := event.ReadAll(&out)
	require.NoError(t, err)
	require.Len(t, harnesstest.Bodies(evs, event.TypeTurnEnd), 1)
}

// liveNative is the agent's lines of a live session's capture (path,
// slash-separated): without the test's directives (">>> prompt …").
func liveNative(t *testing.T, path string) *bytes.Buffer {
	t.Helper()
	capture, err := os.ReadFile(filepath.FromSlash(path))
	require.NoError(t, err)
	var native bytes.Buffer
	for _, line := range bytes.SplitAfter(capture, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte(">>>")) {
			native.Write(line)
		}
	}
	return &native
}

// TestStartSessionRefusesAskUnasked: an agent that would not ask is
// refused Ask with a library error that names the agent and the reason
// (not the CLI's flag), and nothing is started.
func TestStartSessionRefusesAskUnasked(t *testing.T) {
	var st harness.Settings
	_, err := st.StartSession(context.Background(), harness.Task{Agent: "opencode", Permissions: harness.Ask,
		Binary: "/nonexistent/opencode", Cwd: t.TempDir()}, harness.SessionOptions{})
	var ca *harness.CannotAskError
	require.ErrorAs(t, err, &ca)
	require.Equal(t, "opencode", ca.Agent)
	require.NotEmpty(t, ca.Why)
	require.NotContains(t, err.Error(), "--permissions")
}

// TestLiveAskDeadlineIsPerRequest: a permission request is denied its
// deadline after it was made, whatever became of an earlier request of
// the same agent call id (the fake asks for call-1 in every turn): the
// first turn's request, answered, leaves no deadline behind to deny the
// second's early.
func TestLiveAskDeadlineIsPerRequest(t *testing.T) {
	t.Parallel()
	const deadline = time.Second
	s, rec, _ := sendOne(t, "normal", harness.Ask, small(), harness.SessionOptions{AskDeadline: deadline}, event.TypePermissionRequest)
	first := rec.waitFor(t, event.TypePermissionRequest, 1).(*event.PermissionRequest)
	require.True(t, s.Answer(first.CallID, true))
	rec.waitFor(t, event.TypeTurnEnd, 1)
	// The scenario's pace, not a wait for something: the second request
	// comes well within the first one's deadline.
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, s.Send("two"))
	second := rec.waitFor(t, event.TypePermissionRequest, 2).(*event.PermissionRequest)
	require.Equal(t, "call-1#2", second.CallID)
	rec.waitFor(t, event.TypeTurnEnd, 2) // unanswered: denied at its deadline
	closeLive(t, s, rec)
	var denied *event.ToolEnd
	for _, b := range rec.find(event.TypeToolEnd) {
		if e := b.(*event.ToolEnd); e.CallID == second.CallID {
			denied = e
		}
	}
	require.NotNil(t, denied)
	require.Equal(t, event.StatusDenied, denied.Status)
	waited := time.Duration(rec.ts(t, denied)-rec.ts(t, second)) * time.Millisecond
	require.GreaterOrEqual(t, waited, deadline-time.Millisecond, "denied %s after it was made", waited)
}

// ts is the time (Unix ms) of the event of body b.
func (l *liveRec) ts(t *testing.T, b event.Body) int64 {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range l.evs {
		if ev.Body == b {
			return ev.TS
		}
	}
	t.Fatalf("no such event: %#v", b)
	return 0
}

// requireTurnTimedOut checks a session whose agent ignored the request to
// end its turn over SessionOptions.TurnTimeout: it was stopped as a
// watchdog stops a run, and the session ended timeout, not cancelled
// (nobody interrupted it), with the turn closed timeout.
func requireTurnTimedOut(t *testing.T, s *harness.Session, rec *liveRec) {
	t.Helper()
	res, err := s.Wait()
	require.ErrorIs(t, err, harness.ErrTurnTimeout)
	require.ErrorIs(t, err, harness.ErrHardTimeout, "a wall-clock limit, as the session's own")
	checkLive(t, rec)
	require.Equal(t, event.ResultTimeout, res.Status)
	var fatal *event.Error
	for _, b := range rec.find(event.TypeError) {
		if e := b.(*event.Error); e.Fatal {
			fatal = e
		}
	}
	require.NotNil(t, fatal)
	require.Equal(t, event.ErrHardTimeout, fatal.Code)
	require.True(t, *fatal.Killed)
	end := rec.find(event.TypeTurnEnd)[0].(*event.TurnEnd)
	require.Equal(t, event.ResultTimeout, end.Status, "the turn ran out of time")
	require.True(t, end.Synthetic)
}

// costs reads the cost_usd and cost_estimated of each turn_end, then of
// the result, of a session's stream (nil: no cost_usd).
func costs(t *testing.T, stream []byte) (usd []*float64, estimated []bool) {
	t.Helper()
	for _, line := range bytes.Split(bytes.TrimSpace(stream), []byte("\n")) {
		var ev struct {
			Type          string   `json:"type"`
			CostUSD       *float64 `json:"cost_usd"`
			CostEstimated bool     `json:"cost_estimated"`
		}
		require.NoError(t, json.Unmarshal(line, &ev))
		if ev.Type == "turn_end" || ev.Type == "result" {
			usd, estimated = append(usd, ev.CostUSD), append(estimated, ev.CostEstimated)
		}
	}
	return usd, estimated
}

// TestLiveSessionCost: an ACP agent's usage_update cost is the session's
// running total (0.0125 after each turn of the fake: the second cost
// nothing more). Each turn_end has its part of it, and the session's
// result the agent's last total, not a sum, and not estimated.
func TestLiveSessionCost(t *testing.T) {
	t.Parallel()
	s, rec, _ := startLive(t, "normal", "", small(), harness.SessionOptions{})
	sendTwo(t, s)
	closeLive(t, s, rec)
	usd, estimated := costs(t, rec.stream())
	require.Equal(t, []*float64{event.Float(0.0125), event.Float(0), event.Float(0.0125)}, usd)
	require.Equal(t, []bool{false, false, false}, estimated)
}

// TestLiveSessionCostEstimated: an agent that reports no cost has each
// turn priced as a run is, by the usage harness priced: the turn's sum,
// estimated, and the session's total in its result. The fake Claude
// Code's results have no total_cost_usd; the ACP agent reports usage in
// its prompt answers but no cost (as Gemini's and OpenCode's do), and the
// usage event the stream makes of the answer is priced too.
func TestLiveSessionCostEstimated(t *testing.T) {
	t.Parallel()
	claude, claudeEnv := fakeagent.Command(fakeagent.ClaudeStream)
	acp, acpEnv := fakeagent.Command("acp-agent", "no-cost")
	for name, task := range map[string]harness.Task{
		"stream-json": {Agent: "claude", Protocol: harness.ProtocolStreamJSON, Binary: claude[0], BaseEnv: claudeEnv},
		"acp":         {Agent: "fake-acp", Protocol: harness.ProtocolACP, Command: acp, BaseEnv: acpEnv},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := small()
			task.Budgets, task.Cwd = &b, t.TempDir()
			rec := &liveRec{}
			so := harness.SessionOptions{Options: rec.options()}
			so.EstimateCost = func(_ string, u event.Usage) (float64, bool) { return float64(u.InputTokens) / 1000, true }
			var st harness.Settings
			s, err := st.StartSession(context.Background(), task, so)
			require.NoError(t, err)
			sendTwo(t, s)
			closeLive(t, s, rec)
			usd, estimated := costs(t, rec.stream())
			// Each turn reads 10 input tokens: 0.01 each.
			require.Equal(t, []*float64{event.Float(0.01), event.Float(0.01), event.Float(0.02)}, usd)
			require.Equal(t, []bool{true, true, true}, estimated)
		})
	}
}
