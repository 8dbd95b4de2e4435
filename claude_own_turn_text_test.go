package harness_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

const (
	// claudeBgEmpty is claudeBg whose prompt's result has no text.
	claudeBgEmpty = "claude-bg-empty-answer"
	// claudeBgEmptyTool makes claudeBgEmpty's prompt turn end in a tool
	// call ("1"): its answer is then empty, not its earlier commentary.
	claudeBgEmptyTool = "FAKE_CLAUDE_BG_EMPTY_TOOL"
)

func init() { fakeagent.Register(claudeBgEmpty, runClaudeBgEmpty) }

// runClaudeBgEmpty is Claude Code whose one turn starts a background
// command and ends with a result whose "result" is empty (the model's
// last reply had no text); at the end of its stdin the command ends and
// the CLI answers that in a turn of its own, with a text, and exits 0.
func runClaudeBgEmpty([]string) int {
	out := json.NewEncoder(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	init := map[string]any{"type": "system", "subtype": "init", "session_id": "bg-2", "model": "fake-model", "cwd": "."}
	for in.Scan() {
		var m struct{ Type, UUID string }
		if json.Unmarshal(in.Bytes(), &m) != nil || m.Type != "user" {
			continue
		}
		for _, state := range []string{"queued", "started"} {
			out.Encode(map[string]any{"type": "command_lifecycle", "command_uuid": m.UUID, "state": state, "session_id": "bg-2"})
		}
		out.Encode(init)
		out.Encode(map[string]any{"type": "system", "subtype": "background_tasks_changed", "tasks": []map[string]string{{"task_id": "t1"}}, "session_id": "bg-2"})
		out.Encode(assistant("msg_1", "Starting it.", 10))
		if os.Getenv(claudeBgEmptyTool) == "1" {
			out.Encode(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"id": "msg_1",
				"content": []map[string]any{{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{"command": "job &"}}}}})
			out.Encode(map[string]any{"type": "user", "parent_tool_use_id": nil, "message": map[string]any{"role": "user",
				"content": []map[string]any{{"type": "tool_result", "tool_use_id": "toolu_1", "content": "started"}}}})
		}
		out.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": "", "session_id": "bg-2",
			"num_turns": 1, "total_cost_usd": 0.1, "usage": map[string]int{"input_tokens": 10, "output_tokens": 5}})
	}
	out.Encode(map[string]any{"type": "system", "subtype": "task_notification", "task_id": "t1", "status": "completed", "session_id": "bg-2"})
	out.Encode(map[string]any{"type": "system", "subtype": "background_tasks_changed", "tasks": []any{}, "session_id": "bg-2"})
	out.Encode(init)
	out.Encode(assistant("msg_2", "The job is done.", 7))
	out.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": "The job is done.", "session_id": "bg-2",
		"num_turns": 1, "total_cost_usd": 0.25, "origin": map[string]string{"kind": "task-notification"},
		"usage": map[string]int{"input_tokens": 7, "output_tokens": 3}})
	return 0
}

// TestClaudeRunOwnTurnEmptyAnswer: a one-prompt run over stream-json
// whose prompt's result has no text, followed by a turn the CLI begins by
// itself (a background command ended). The run's result.text is what the
// stream falls back to for the prompt's result — its last answer before
// that result, none after a tool call — not the own turn's text, which
// the fallback took as the last message of the stream.
func TestClaudeRunOwnTurnEmptyAnswer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, tool, text string
	}{
		{name: "text-before-result", text: "Starting it."},
		{name: "tool-call-last", tool: "1", text: ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := small()
			b.Linger = 10 * time.Second // the fake exits once its own turn is done
			argv, env := fakeagent.Command(claudeBgEmpty)
			rec := &liveRec{}
			var st harness.Settings
			r, err := st.Start(context.Background(), harness.Task{Agent: "claude", Protocol: harness.ProtocolStreamJSON, Prompt: "Run the job in the background.",
				Binary: argv[0], BaseEnv: append(env, claudeBgEmptyTool+"="+c.tool), Cwd: t.TempDir(), Budgets: &b}, rec.options())
			require.NoError(t, err)
			res, err := r.Wait()
			require.NoError(t, err)
			out := rec.stream()
			require.NoError(t, event.CheckNDJSON(out), "%s", out)
			var texts []string
			for _, m := range rec.find(event.TypeMessage) {
				texts = append(texts, m.(*event.Message).Text)
			}
			require.Contains(t, texts, "The job is done.", "the own turn ran: %s", out)
			require.Equal(t, event.ResultSuccess, res.Status)
			require.Equal(t, c.text, res.Text, "%s", out)
			require.Equal(t, event.Usage{InputTokens: 17, OutputTokens: 8}, event.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens})
		})
	}
}
