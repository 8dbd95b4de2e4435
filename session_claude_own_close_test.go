package harness_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// Fakes of Claude Code over stream-json for the turns it begins by itself
// and for the start of a prompt's turn.
const (
	claudeBg    = "claude-bg-own-turn"
	claudeGated = "claude-gated-start"
	// claudeBgPause is the variable of claudeBg's pause in its own turn
	// (a Go duration; none when unset).
	claudeBgPause = "FAKE_CLAUDE_BG_PAUSE"
)

func init() {
	fakeagent.Register(claudeBg, runClaudeBg)
	fakeagent.Register(claudeGated, runClaudeGated)
}

// runClaudeBg is Claude Code whose one turn starts a background command
// that ends when its stdin does: it then answers that end in a turn of its
// own (task_notification, system/init, its answer and result), after a
// pause of $FAKE_CLAUDE_BG_PAUSE (its model's slowness), and exits 0, as
// Claude Code 2.1.329 does at the end of its input with a background
// command running.
func runClaudeBg([]string) int {
	bg := claudeBgTurns{session: "bg-1", said: "Started it.", answer: "Started it."}
	if d, err := time.ParseDuration(os.Getenv(claudeBgPause)); err == nil {
		bg.pause = d
	}
	return bg.play()
}

// claudeBgTurns is how a claudeBg-like fake plays its turns: its session
// id, what the prompt's turn says and its result's text, whether that
// turn ends in a tool call, and the pause in the turn of its own.
type claudeBgTurns struct {
	session, said, answer string
	tool                  bool
	pause                 time.Duration
}

// play is the fake: the prompt's turn on each user line, then, at the
// end of its stdin, the turn of its own (see runClaudeBg).
func (bg claudeBgTurns) play() int {
	out := json.NewEncoder(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	init := map[string]any{"type": "system", "subtype": "init", "session_id": bg.session, "model": "fake-model", "cwd": "."}
	for in.Scan() {
		var m struct{ Type, UUID string }
		if json.Unmarshal(in.Bytes(), &m) != nil || m.Type != "user" {
			continue
		}
		for _, state := range []string{"queued", "started"} {
			out.Encode(map[string]any{"type": "command_lifecycle", "command_uuid": m.UUID, "state": state, "session_id": bg.session})
		}
		out.Encode(init)
		out.Encode(map[string]any{"type": "system", "subtype": "background_tasks_changed", "tasks": []map[string]string{{"task_id": "t1"}}, "session_id": bg.session})
		out.Encode(assistant("msg_1", bg.said, 10))
		if bg.tool {
			out.Encode(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"id": "msg_1",
				"content": []map[string]any{{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{"command": "job &"}}}}})
			out.Encode(map[string]any{"type": "user", "parent_tool_use_id": nil, "message": map[string]any{"role": "user",
				"content": []map[string]any{{"type": "tool_result", "tool_use_id": "toolu_1", "content": "started"}}}})
		}
		out.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": bg.answer, "session_id": bg.session,
			"num_turns": 1, "total_cost_usd": 0.1, "usage": map[string]int{"input_tokens": 10, "output_tokens": 5}})
	}
	out.Encode(map[string]any{"type": "system", "subtype": "task_notification", "task_id": "t1", "status": "completed", "session_id": bg.session})
	out.Encode(map[string]any{"type": "system", "subtype": "background_tasks_changed", "tasks": []any{}, "session_id": bg.session})
	out.Encode(init)
	out.Encode(assistant("msg_2", "The job is done.", 7))
	time.Sleep(bg.pause) // the agent's slowness, not a test's wait
	out.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": "The job is done.", "session_id": bg.session,
		"num_turns": 1, "total_cost_usd": 0.25, "origin": map[string]string{"kind": "task-notification"},
		"usage": map[string]int{"input_tokens": 7, "output_tokens": 3}})
	return 0
}

// assistant is an assistant line of one text, with input tokens in.
func assistant(id, text string, in int) map[string]any {
	return map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"id": id,
		"content": []map[string]string{{"type": "text", "text": text}}, "usage": map[string]int{"input_tokens": in, "output_tokens": 1}}}
}

// runClaudeGated is Claude Code that takes its first message up (its
// command_lifecycle started, system/init) only once a line can be read
// from the FIFO "gate" in its directory; its turn then runs until an
// interrupt (acknowledged; the turn ends error_during_execution, as the
// CLI ends it) or the end of its stdin (the turn ends success).
func runClaudeGated([]string) int {
	out := json.NewEncoder(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	inTurn := false
	for in.Scan() {
		var c struct {
			Type      string `json:"type"`
			UUID      string `json:"uuid"`
			RequestID string `json:"request_id"`
			Request   struct {
				Subtype string `json:"subtype"`
			} `json:"request"`
		}
		if json.Unmarshal(in.Bytes(), &c) != nil {
			return 4
		}
		switch {
		case c.Type == "user":
			out.Encode(map[string]any{"type": "command_lifecycle", "command_uuid": c.UUID, "state": "queued", "session_id": "gate-1"})
			gate, err := os.Open("gate")
			if err != nil {
				return 5
			}
			bufio.NewReader(gate).ReadString('\n')
			gate.Close()
			out.Encode(map[string]any{"type": "command_lifecycle", "command_uuid": c.UUID, "state": "started", "session_id": "gate-1"})
			out.Encode(map[string]any{"type": "system", "subtype": "init", "session_id": "gate-1", "model": "fake-model", "cwd": "."})
			out.Encode(assistant("msg_1", "Working on it.", 10))
			inTurn = true
		case c.Type == "control_request" && c.Request.Subtype == "interrupt":
			out.Encode(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": c.RequestID, "response": map[string]any{}}})
			if inTurn {
				inTurn = false
				out.Encode(map[string]any{"type": "result", "subtype": "error_during_execution", "is_error": true, "session_id": "gate-1",
					"usage": map[string]int{"input_tokens": 10, "output_tokens": 1}, "errors": []string{"aborted"}})
			}
		}
	}
	if inTurn {
		out.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": "Finished.", "session_id": "gate-1",
			"usage": map[string]int{"input_tokens": 10, "output_tokens": 5}})
	}
	return 0
}

// TestClaudeOwnTurnAfterClose: the caller closes the session while a
// background command of its turn still runs; Claude Code answers the
// command's end in a turn of its own before it exits. That turn is the
// session's last, with its answer, usage and cost, however long it takes
// beside the linger budget: the agent is working, not lingering. It was
// cut by the linger budget, which started at the close, and closed
// synthetic, status error, with no answer.
func TestClaudeOwnTurnAfterClose(t *testing.T) {
	t.Parallel()
	b := small()
	// The own turn must begin within the linger budget of the close (the
	// fake begins it at once), and lasts longer than it.
	b.Linger = 3 * time.Second
	task := harness.Task{Agent: "claude", Protocol: harness.ProtocolStreamJSON, Budgets: &b}
	s, rec := startFakeLive(t, task, claudeBg, claudeBgPause+"=4s")
	require.NoError(t, s.Send("Run the job in the background."))
	rec.waitFor(t, event.TypeTurnEnd, 1)
	res, err := s.Close()
	require.NoError(t, err)
	checkLive(t, rec)
	require.Empty(t, rec.find(event.TypeWarning), "%s", rec.stream())
	ends := rec.find(event.TypeTurnEnd)
	require.Len(t, ends, 2, "%s", rec.stream())
	own := ends[1].(*event.TurnEnd)
	require.Equal(t, "agent_1", own.TurnID)
	require.Equal(t, event.ResultSuccess, own.Status, "%s", rec.stream())
	require.False(t, own.Synthetic)
	require.Equal(t, "The job is done.", own.Text)
	require.Equal(t, event.Usage{InputTokens: 7, OutputTokens: 3}, event.Usage{InputTokens: own.Usage.InputTokens, OutputTokens: own.Usage.OutputTokens})
	require.Equal(t, event.ResultSuccess, res.Status)
	require.Equal(t, "The job is done.", res.Text, "the agent's own turn after the caller's last is the last turn")
	require.Equal(t, event.Usage{InputTokens: 17, OutputTokens: 8}, event.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens})
	require.NotNil(t, res.CostUSD)
	require.Equal(t, 0.25, *res.CostUSD)
}

// TestClaudeInterruptBeforeStart: an interrupt that comes after the
// prompt was written and before Claude Code took it up (its
// command_lifecycle started) ends that turn as it begins: the interrupt
// control request goes then, and the turn ends cancelled. It did nothing,
// and the turn ran on (here, until the idle watchdog ended it).
func TestClaudeInterruptBeforeStart(t *testing.T) {
	t.Parallel()
	b := small()
	b.Linger = 10 * time.Second // the fake exits at EOF
	argv, env := fakeagent.Command(claudeGated)
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	require.NoError(t, syscall.Mkfifo(gate, 0o600))
	rec := &liveRec{}
	var st harness.Settings
	s, err := st.StartSession(context.Background(), harness.Task{Agent: "claude", Protocol: harness.ProtocolStreamJSON,
		Binary: argv[0], BaseEnv: env, Cwd: dir, Budgets: &b}, harness.SessionOptions{Options: rec.options()})
	require.NoError(t, err)
	require.NoError(t, s.Send("one"))
	s.Interrupt() // the CLI cannot have begun the turn: it waits for the gate
	w, err := os.OpenFile(gate, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = w.WriteString("go\n")
	require.NoError(t, err)
	require.NoError(t, w.Close())
	end := rec.waitFor(t, event.TypeTurnEnd, 1).(*event.TurnEnd)
	require.Equal(t, event.ResultCancelled, end.Status, "%s", rec.stream())
	require.Empty(t, rec.find(event.TypeError), "%s", rec.stream())
	res, err := s.Close()
	require.NoError(t, err)
	checkLive(t, rec)
	require.Equal(t, event.ResultSuccess, res.Status, "the session goes on after an interrupt: %s", rec.stream())
}

// TestClaudeRunOwnTurnAfterAnswer: a one-prompt run over stream-json
// whose CLI answers the end of a background command in a turn of its own
// after the prompt's result. The run's result is the prompt's (its
// status, text and turns); that turn's usage and the CLI's running cost
// count in it, as in a session's, and the usage events add up to it with
// no usage_mismatch. The run's result was that turn's: its text, and its
// usage alone, below the events' sum.
//
// cut-by-linger: the run's linger ends the CLI within that turn (it
// starts at the prompt's result): the usage that turn emitted counts in
// the run's, and the cost is the last the CLI reported.
func TestClaudeRunOwnTurnAfterAnswer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		linger time.Duration
		pause  string
		usage  event.Usage
		cost   float64
		warn   string
	}{
		// The fake exits once its own turn is done.
		{name: "answered", linger: 10 * time.Second, usage: event.Usage{InputTokens: 17, OutputTokens: 8}, cost: 0.25},
		// 2 s of linger: the fake's own turn must have its usage out
		// before the linger ends it, which a loaded machine's 100 ms
		// did not promise; it pauses 10 s in that turn.
		{name: "cut-by-linger", linger: 2 * time.Second, pause: "10s", usage: event.Usage{InputTokens: 17, OutputTokens: 5}, cost: 0.1,
			warn: event.WarnLingeredAfterResult},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, rec, out := playClaudeBg(t, claudeBg, c.linger, claudeBgPause+"="+c.pause)
			var warns []string
			for _, w := range rec.find(event.TypeWarning) {
				warns = append(warns, w.(*event.Warning).Code)
			}
			if c.warn == "" {
				require.Empty(t, warns, "%s", out)
			} else {
				require.Equal(t, []string{c.warn}, warns, "no usage_mismatch: %s", out)
			}
			require.Equal(t, event.ResultSuccess, res.Status)
			require.Equal(t, "Started it.", res.Text, "%s", out)
			require.Equal(t, 1, res.NumTurns)
			require.Equal(t, c.usage, event.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens})
			require.NotNil(t, res.CostUSD)
			require.Equal(t, c.cost, *res.CostUSD, "the CLI's last running total")
		})
	}
}

// playClaudeBg runs fake (claudeBg or a variant) as Claude over
// stream-json, one prompt, with linger and one more variable kv, to its
// end: its result, its recorder and its stream, checked.
func playClaudeBg(t *testing.T, fake string, linger time.Duration, kv string) (*event.Result, *liveRec, []byte) {
	t.Helper()
	b := small()
	b.Linger = linger
	argv, env := fakeagent.Command(fake)
	rec := &liveRec{}
	var st harness.Settings
	r, err := st.Start(context.Background(), harness.Task{Agent: "claude", Protocol: harness.ProtocolStreamJSON, Prompt: "Run the job in the background.",
		Binary: argv[0], BaseEnv: append(env, kv), Cwd: t.TempDir(), Budgets: &b}, rec.options())
	require.NoError(t, err)
	res, err := r.Wait()
	require.NoError(t, err)
	out := rec.stream()
	require.NoError(t, event.CheckNDJSON(out), "%s", out)
	return res, rec, out
}
