package harness_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
	return claudeBgTurns{session: "bg-2", said: "Starting it.", tool: os.Getenv(claudeBgEmptyTool) == "1"}.play()
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
			// A long linger: the fake exits once its own turn is done.
			res, rec, out := playClaudeBg(t, claudeBgEmpty, 10*time.Second, claudeBgEmptyTool+"="+c.tool)
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
