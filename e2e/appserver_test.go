package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mockmodel"
)

// scenarioFile writes a scenario of the scripted model, each model call
// of it costing DefaultUsage.
func scenarioFile(t *testing.T, turns ...mockmodel.Turn) string {
	t.Helper()
	for i := range turns {
		turns[i].Usage = mockmodel.DefaultUsage
	}
	data, err := toml.Marshal(mockmodel.Scenario{Name: "e2e", Turns: turns})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "scenario.toml")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

func shell(command string) []mockmodel.ToolCall {
	return []mockmodel.ToolCall{{Kind: mockmodel.KindShell, Command: command}}
}

func write(path, content string) []mockmodel.ToolCall {
	return []mockmodel.ToolCall{{Kind: mockmodel.KindWrite, Path: path, Content: content}}
}

// TestCodexAppServerInterrupt: an interrupt during a long tool call (a
// `sleep 30` that would then write late.txt) ends that turn cancelled by
// turn/interrupt, and the next prompt is answered in the same process and
// conversation (the scripted model checks it still holds the first
// prompt). Each turn's usage is what the model served it: one call for
// the interrupted turn, two for the next.
func TestCodexAppServerInterrupt(t *testing.T) {
	t.Parallel()
	sc := scenarioFile(t,
		mockmodel.Turn{Text: []string{"Sleeping", " now."}, ToolCalls: shell("sleep 30 && echo late > late.txt")},
		mockmodel.Turn{Text: []string{"DONE: late"}},
		mockmodel.Turn{After: mockmodel.ConverseMark2, Requires: mockmodel.ConverseMark1,
			Text: []string{"I'll write", " the second file."}, ToolCalls: write("second.txt", "second\n")},
		mockmodel.Turn{Text: []string{"DONE:", " second file"}})
	s := startSession(t, "codex", sc)
	s.send(map[string]any{"type": "prompt", "text": "Sleep, please (" + mockmodel.ConverseMark1 + ")."})
	// Codex reports the first model call's usage on its own schedule: on a
	// loaded machine after the command has started. Interrupting before it
	// did moves that usage to the next turn (the session's total is the
	// same), so the interrupt waits for both.
	var started, used bool
	for !started || !used {
		switch ev := s.next(); ev.Type {
		case event.TypeToolStart:
			require.Equal(t, event.KindShell, ev.Body.(*event.ToolStart).Kind)
			started = true
		case event.TypeUsage:
			used = true
		}
	}
	s.send(map[string]any{"type": "interrupt"})
	first := s.until(event.TypeTurnEnd).(*event.TurnEnd)
	require.Equal(t, event.ResultCancelled, first.Status, "%s", s.out.String())
	s.send(map[string]any{"type": "prompt", "text": mockmodel.ConversePrompt2})
	evs := s.end()

	ends := harnesstest.Bodies(evs, event.TypeTurnEnd)
	require.Len(t, ends, 2, "%s", s.out.String())
	second := ends[1].(*event.TurnEnd)
	require.Equal(t, event.ResultSuccess, second.Status, "%s", s.out.String())
	require.Equal(t, "DONE: second file", second.Text, "the conversation kept its context")
	call := event.Usage{InputTokens: int64(mockmodel.DefaultUsage.InputTokens), OutputTokens: int64(mockmodel.DefaultUsage.OutputTokens)}
	require.Equal(t, call, first.Usage, "the interrupted turn: one model call\n%s", s.out.String())
	require.Equal(t, event.Usage{InputTokens: 2 * call.InputTokens, OutputTokens: 2 * call.OutputTokens}, second.Usage)
	res := evs[len(evs)-1].Body.(*event.Result)
	require.Equal(t, event.ResultSuccess, res.Status)
	require.Equal(t, 3*call.InputTokens, res.Usage.InputTokens)
	require.Len(t, harnesstest.Bodies(evs, event.TypeSessionStart), 1)
	require.Equal(t, "second\n", readFile(t, filepath.Join(s.workdir, "second.txt")))
	_, err := os.Stat(filepath.Join(s.workdir, "late.txt"))
	require.True(t, os.IsNotExist(err), "the interrupted command never finished")
	tools := harnesstest.Bodies(evs, event.TypeToolEnd)
	require.Equal(t, event.StatusCancelled, tools[0].(*event.ToolEnd).Status, "%s", s.out.String())
	// The disk's diff, or none: Codex may have written the file before
	// harness read it at the call's start (a shell command ran before, so
	// the file's birth does not prove the call made it), and then the diff
	// is unknown, never wrong (docs/supervision.md).
	if w := tools[1].(*event.ToolEnd); w.Diff != "" || w.DiffSkipped != event.DiffSkippedUnknown {
		require.Equal(t, "--- /dev/null\n+++ b/second.txt\n@@ -0,0 +1 @@\n+second\n", w.Diff, "%s", s.out.String())
	}
}

// askScenario runs a command (allowed.txt), then writes denied.txt.
func askScenario(t *testing.T) string {
	return scenarioFile(t,
		mockmodel.Turn{Text: []string{"Running."}, ToolCalls: shell("echo allowed > allowed.txt")},
		mockmodel.Turn{Text: []string{"Writing."}, ToolCalls: write("denied.txt", "denied\n")},
		mockmodel.Turn{Text: []string{"DONE: asked"}})
}

// TestCodexAppServerAsk: with --permissions ask, Codex's approvals are
// permission_request events: the command answered allow runs, the file
// change answered deny never happens (its tool_end is denied).
func TestCodexAppServerAsk(t *testing.T) {
	t.Parallel()
	sc := askScenario(t)
	s := startSession(t, "codex", sc, "--permissions", "ask")
	s.send(map[string]any{"type": "prompt", "text": "Run it, then write it."})
	req := s.until(event.TypePermissionRequest).(*event.PermissionRequest)
	require.Equal(t, event.KindShell, req.Kind)
	require.Contains(t, req.Command, "echo allowed > allowed.txt")
	s.send(map[string]any{"type": "answer", "call_id": req.CallID, "allow": true})
	req = s.until(event.TypePermissionRequest).(*event.PermissionRequest)
	require.Equal(t, event.KindWrite, req.Kind)
	require.Equal(t, filepath.Join(s.workdir, "denied.txt"), req.Path)
	s.send(map[string]any{"type": "answer", "call_id": req.CallID, "allow": false})
	end := s.until(event.TypeTurnEnd).(*event.TurnEnd)
	evs := s.end()

	require.Equal(t, event.ResultSuccess, end.Status)
	require.Equal(t, "DONE: asked", end.Text)
	require.Equal(t, int64(3*mockmodel.DefaultUsage.InputTokens), end.Usage.InputTokens, "three model calls")
	require.Equal(t, "allowed\n", readFile(t, filepath.Join(s.workdir, "allowed.txt")))
	_, err := os.Stat(filepath.Join(s.workdir, "denied.txt"))
	require.True(t, os.IsNotExist(err), "denied: the change never happened")
	tools := harnesstest.Bodies(evs, event.TypeToolEnd)
	require.Len(t, tools, 2)
	require.Equal(t, event.StatusOK, tools[0].(*event.ToolEnd).Status)
	require.Equal(t, event.StatusDenied, tools[1].(*event.ToolEnd).Status)
}

// TestCodexAppServerAskDeadline: approvals left unanswered past
// --ask-timeout are declined: neither the command nor the change runs,
// and the turn goes on to its answer.
func TestCodexAppServerAskDeadline(t *testing.T) {
	t.Parallel()
	s := startSession(t, "codex", askScenario(t), "--permissions", "ask", "--ask-timeout", "1ms")
	s.send(map[string]any{"type": "prompt", "text": "Run it, then write it."})
	end := s.until(event.TypeTurnEnd).(*event.TurnEnd)
	evs := s.end()
	require.Equal(t, event.ResultSuccess, end.Status)
	require.Len(t, harnesstest.Bodies(evs, event.TypePermissionRequest), 2)
	for _, name := range []string{"allowed.txt", "denied.txt"} {
		_, err := os.Stat(filepath.Join(s.workdir, name))
		require.True(t, os.IsNotExist(err), "%s: denied at the deadline, never run", name)
	}
	for _, b := range harnesstest.Bodies(evs, event.TypeToolEnd) {
		require.Equal(t, event.StatusDenied, b.(*event.ToolEnd).Status)
	}
}
