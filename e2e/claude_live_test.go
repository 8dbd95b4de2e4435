package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	hlib "github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mockmodel"
)

// interruptScenario stalls the first turn after some text; the next
// prompt is answered only in a conversation that still holds the first.
const interruptScenario = `name = "interrupt"
[[turn]]
text = ["Thinking", " about it"]
hang = true
usage = { input = 100, output = 10 }
[[turn]]
after = "` + mockmodel.ConverseMark2 + `"
requires = "` + mockmodel.ConverseMark1 + `"
text = ["DONE:", " after the interrupt"]
usage = { input = 11, output = 3 }
`

// liveAgents are the rows of the interrupt and ask tests: Claude Code
// over its own stream-json, Gemini CLI and OpenCode over ACP (Codex's
// app-server has its own, appserver_test.go). usage: the agent reports
// the turn's usage over that protocol (Gemini's and OpenCode's ACP
// answers carry none). forgetsInterrupted: the agent drops a cancelled
// turn's prompt from its conversation (Gemini CLI 0.61 over ACP: the
// next turn's request lacks it), which is the agent's choice, pinned
// here so that a change of it is seen. A denied call has its tool_end
// whether the agent reports a call before asking for it or not (Gemini
// asks first and never reports a denied call: its request starts it).
var liveAgents = []struct {
	agent              string
	usage              bool
	forgetsInterrupted bool
}{
	{agent: "claude", usage: true},
	{agent: "gemini", forgetsInterrupted: true},
	{agent: "opencode"},
}

// TestLiveSessionInterrupt: an interrupt while the model stalls
// mid-answer goes to the agent natively (Claude's control_request,
// ACP's session/cancel), the turn ends cancelled (not synthetic: the
// agent ended it), and the next prompt is answered by the same process in
// the same conversation, with the usage the model served it.
func TestLiveSessionInterrupt(t *testing.T) {
	for _, a := range liveAgents {
		t.Run(a.agent, func(t *testing.T) {
			t.Parallel()
			scenario := filepath.Join(t.TempDir(), "interrupt.toml")
			require.NoError(t, os.WriteFile(scenario, []byte(interruptScenario), 0o644))
			s := startSession(t, a.agent, scenario)
			s.send(map[string]any{"type": "prompt", "text": "Think hard (" + mockmodel.ConverseMark1 + ")."})
			s.until(event.TypeTextDelta)
			s.send(map[string]any{"type": "interrupt"})
			s.until(event.TypeTurnEnd)
			s.send(map[string]any{"type": "prompt", "text": "Now go on (" + mockmodel.ConverseMark2 + ")."})
			evs := s.end()
			ends := harnesstest.Bodies(evs, event.TypeTurnEnd)
			require.Len(t, ends, 2, "%s", s.out.String())
			first, second := ends[0].(*event.TurnEnd), ends[1].(*event.TurnEnd)
			require.Equal(t, event.ResultCancelled, first.Status, "%s", s.out.String())
			require.False(t, first.Synthetic, "the agent ended the turn itself")
			require.Equal(t, event.ResultSuccess, second.Status, "%s", s.out.String())
			if a.forgetsInterrupted {
				require.Equal(t, mockmodel.ContextMissing+" "+mockmodel.ConverseMark1, second.Text, "the agent dropped the cancelled prompt")
			} else {
				require.Equal(t, "DONE: after the interrupt", second.Text, "the conversation kept the first prompt")
			}
			if a.usage {
				require.Equal(t, int64(11), second.Usage.InputTokens)
				require.Equal(t, int64(3), second.Usage.OutputTokens)
			}
			require.Empty(t, harnesstest.Bodies(evs, event.TypeError), "an interrupted turn is no error")
			res := evs[len(evs)-1].Body.(*event.Result)
			require.Equal(t, event.ResultSuccess, res.Status)
		})
	}
}

// TestLiveSessionAsk: --permissions ask over the agent's protocol: each
// write is a permission_request; the first answered allow is written,
// the second denied never runs (its tool_end denied), and each turn's
// usage is what the model served (two calls of DefaultUsage). An agent
// that cannot ask is refused (adapters.ACP.CannotAsk: OpenCode,
// session_agents.txtar) and has no row here.
func TestLiveSessionAsk(t *testing.T) {
	for _, a := range liveAgents {
		if ag, err := hlib.Lookup(a.agent); err != nil || ag.ACP != nil && ag.ACP.CannotAsk != "" {
			continue
		}
		t.Run(a.agent, func(t *testing.T) {
			t.Parallel()
			s := startSession(t, a.agent, "converse", "--permissions", "ask")
			s.send(map[string]any{"type": "prompt", "text": mockmodel.ConversePrompt1})
			s.send(map[string]any{"type": "prompt", "text": mockmodel.ConversePrompt2}) // queued
			for allow := true; ; {
				r := s.until(event.TypePermissionRequest).(*event.PermissionRequest)
				s.send(map[string]any{"type": "answer", "call_id": r.CallID, "allow": allow})
				if !allow {
					break
				}
				allow = false
			}
			evs := s.end()
			reqs := harnesstest.Bodies(evs, event.TypePermissionRequest)
			require.Len(t, reqs, 2, "%s", s.out.String())
			for i, b := range reqs {
				r := b.(*event.PermissionRequest)
				// ACP has no kind of its own for a write: a file tool is "edit".
				require.Contains(t, []event.Kind{event.KindWrite, event.KindEdit}, r.Kind, "%+v", r)
				require.Positive(t, r.DeadlineMS)
				require.Equal(t, []string{"turn_1", "turn_2"}[i], r.TurnID)
			}
			require.Equal(t, "first\n", readFile(t, filepath.Join(s.workdir, mockmodel.ConverseFirst)))
			_, err := os.Stat(filepath.Join(s.workdir, mockmodel.ConverseSecond))
			require.True(t, os.IsNotExist(err), "the denied write ran")
			var statuses []string
			for _, b := range harnesstest.Bodies(evs, event.TypeToolEnd) {
				statuses = append(statuses, b.(*event.ToolEnd).Status)
			}
			require.Equal(t, []string{event.StatusOK, event.StatusDenied}, statuses, "%s", s.out.String())
			for _, b := range harnesstest.Bodies(evs, event.TypeTurnEnd) {
				e := b.(*event.TurnEnd)
				require.Equal(t, event.ResultSuccess, e.Status)
				if a.usage {
					served := event.Usage{InputTokens: 2 * int64(mockmodel.DefaultUsage.InputTokens), OutputTokens: 2 * int64(mockmodel.DefaultUsage.OutputTokens)}
					require.Equal(t, served, event.Usage{InputTokens: e.Usage.InputTokens, OutputTokens: e.Usage.OutputTokens})
				}
			}
		})
	}
}

// resumeScenario answers the first prompt, and a later one only in a
// conversation that still holds the first.
const resumeScenario = `name = "resume"
[[turn]]
text = ["Noted."]
[[turn]]
after = "` + mockmodel.ConverseMark2 + `"
requires = "` + mockmodel.ConverseMark1 + `"
text = ["DONE:", " resumed"]
`

// TestLiveSessionClaudeResume: a live session of the real Claude Code
// over stream-json, ended, then a second one with --resume and its
// session id: the second session's first turn is answered in the first
// session's conversation (the scripted model checks it holds the first
// prompt), under the same session id.
func TestLiveSessionClaudeResume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	scenario := filepath.Join(dir, "resume.toml")
	require.NoError(t, os.WriteFile(scenario, []byte(resumeScenario), 0o644))
	// The CLI keeps its conversations in its config directory, by cwd:
	// both sessions share both (the scripted model gives each a fresh one).
	workdir, config := filepath.Join(dir, "work"), filepath.Join(dir, "claude")
	require.NoError(t, os.Mkdir(workdir, 0o755))
	require.NoError(t, os.Mkdir(config, 0o700))
	env := "CLAUDE_CONFIG_DIR=" + config

	first := startSessionIn(t, workdir, "claude", scenario, "--env", env)
	first.send(map[string]any{"type": "prompt", "text": "Remember this (" + mockmodel.ConverseMark1 + ")."})
	first.until(event.TypeTurnEnd)
	evs := first.end()
	sid := evs[0].Body.(*event.SessionStart).SessionID
	require.NotEmpty(t, sid, "%s", first.out.String())

	second := startSessionIn(t, workdir, "claude", scenario, "--env", env, "--resume", sid)
	second.send(map[string]any{"type": "prompt", "text": "Now go on (" + mockmodel.ConverseMark2 + ")."})
	evs = second.end()
	ends := harnesstest.Bodies(evs, event.TypeTurnEnd)
	require.Len(t, ends, 1, "%s", second.out.String())
	end := ends[0].(*event.TurnEnd)
	require.Equal(t, event.ResultSuccess, end.Status, "%s", second.out.String())
	require.Equal(t, "DONE: resumed", end.Text, "the resumed session holds the first one's conversation")
	require.Equal(t, sid, evs[0].Body.(*event.SessionStart).SessionID, "the same session")
}

// hangScenario stalls mid-answer: some text, then nothing, the response
// held open.
const hangScenario = `name = "hang"
[[turn]]
text = ["Thinking"]
hang = true
`

// TestLiveSessionHangsMidTurn: each agent over its own live protocol
// (the real Claude Code over stream-json, Codex over app-server), whose
// model stalls mid-answer: the idle watchdog (2 s) ends that turn timeout,
// the session ends with it (result timeout, exit 124) and no process is
// left.
func TestLiveSessionHangsMidTurn(t *testing.T) {
	t.Parallel()
	scenario := filepath.Join(t.TempDir(), "hang.toml")
	require.NoError(t, os.WriteFile(scenario, []byte(hangScenario), 0o644))
	for _, p := range hlib.Protocols() {
		if !p.Live || p.Owner == "" {
			continue
		}
		agent := p.Owner
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			s := startSession(t, agent, scenario, "--idle-timeout", "2s")
			s.send(map[string]any{"type": "prompt", "text": "Think hard."})
			end := s.until(event.TypeTurnEnd).(*event.TurnEnd)
			require.Equal(t, event.ResultTimeout, end.Status, "%s", s.out.String())
			require.Empty(t, end.Text, "a turn that did not complete has no answer")
			evs := s.endWith(124)
			res := evs[len(evs)-1].Body.(*event.Result)
			require.Equal(t, event.ResultTimeout, res.Status)
			var codes []string
			for _, b := range harnesstest.Bodies(evs, event.TypeError) {
				codes = append(codes, b.(*event.Error).Code)
			}
			require.Contains(t, codes, event.ErrIdleTimeout, "%s", s.out.String())
		})
	}
}

// betweenScenario answers two prompts.
const betweenScenario = `name = "between"
[[turn]]
text = ["first"]
[[turn]]
after = "` + mockmodel.ConverseMark2 + `"
text = ["second"]
`

// TestLiveSessionClaudeIdleBetweenTurns: the real Claude Code over
// stream-json waits for its next prompt far longer than the idle budget
// (3 s): no idle warning or timeout, and the next prompt is answered by
// the same process.
func TestLiveSessionClaudeIdleBetweenTurns(t *testing.T) {
	t.Parallel()
	scenario := filepath.Join(t.TempDir(), "between.toml")
	require.NoError(t, os.WriteFile(scenario, []byte(betweenScenario), 0o644))
	s := startSession(t, "claude", scenario, "--idle-timeout", "3s")
	s.send(map[string]any{"type": "prompt", "text": "One."})
	require.Equal(t, event.ResultSuccess, s.until(event.TypeTurnEnd).(*event.TurnEnd).Status, "%s", s.out.String())
	// The wait is what is tested: three idle budgets with no prompt.
	<-time.After(9 * time.Second)
	s.send(map[string]any{"type": "prompt", "text": "Two (" + mockmodel.ConverseMark2 + ")."})
	evs := s.end()
	ends := harnesstest.Bodies(evs, event.TypeTurnEnd)
	require.Len(t, ends, 2, "%s", s.out.String())
	require.Equal(t, "second", ends[1].(*event.TurnEnd).Text, "%s", s.out.String())
	for _, b := range harnesstest.Bodies(evs, event.TypeWarning) {
		require.NotEqual(t, event.WarnIdle, b.(*event.Warning).Code, "%s", s.out.String())
	}
	require.Empty(t, harnesstest.Bodies(evs, event.TypeError), "%s", s.out.String())
}
