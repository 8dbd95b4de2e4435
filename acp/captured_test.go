package acp

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// withAnswer is the real codex-acp capture with its last line, the
// prompt's answer, replaced by answer.
func withAnswer(t *testing.T, answer string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/codex-edit.jsonl")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Contains(t, lines[len(lines)-1], `"stopReason":"end_turn"`)
	lines[len(lines)-1] = answer
	file := t.TempDir() + "/capture.jsonl"
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return file
}

// TestCapturedPromptAnswerWithoutStopReason: in a capture (harness
// parse: the agent's lines only, not harness's requests) the prompt's
// answer without a stopReason is told by its id and breaks the protocol
// as it does live (a fatal agent_error of class protocol). It used to be
// named by its fields only: an unparsed_line warning, and a stream
// without its terminal event.
func TestCapturedPromptAnswerWithoutStopReason(t *testing.T) {
	for _, result := range []string{`{"usage":{"totalTokens":290,"inputTokens":240,"outputTokens":50}}`, `[]`, `"done"`} {
		t.Run(result, func(t *testing.T) {
			evs := normalized(t, withAnswer(t, `{"jsonrpc":"2.0","id":3,"result":`+result+`}`))
			e := fatalOf(t, evs)
			require.Equal(t, event.ClassProtocol, e.Class)
			require.Contains(t, e.Message, "session/prompt without a stopReason")
			res := resultOf(evs)
			require.Equal(t, event.ResultError, res.Status)
			require.Zero(t, res.Stats.UnparsedLines)
		})
	}
}

// TestCapturedAnswersByID: after session/new's answer (id 2), the answer
// to id 3 without fields but _meta is set_mode's (claude-agent-acp and
// gemini answer it {}), and the next is the prompt's, whatever its
// fields; answers to ids before session/new's are named by their fields
// only, as before.
func TestCapturedAnswersByID(t *testing.T) {
	head := []string{`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`, `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`}
	parse := func(lines ...string) ([]event.Body, []bool) {
		c := NewParser()
		var out []event.Body
		var known []bool
		for _, l := range append(head, lines...) {
			var k bool
			out, k = c.Parse(out, []byte(l))
			known = append(known, k)
		}
		return out, known
	}
	t.Run("set-mode-then-prompt-without-stop-reason", func(t *testing.T) {
		out, _ := parse(string(answer(3, `{}`)), string(answer(4, `{}`)))
		require.Equal(t, event.ClassProtocol, lastFatal(t, out).Class)
	})
	t.Run("set-mode-with-meta-then-prompt", func(t *testing.T) {
		out, known := parse(string(answer(3, `{"_meta":{"a":1}}`)), string(answer(4, `{"stopReason":"end_turn"}`)))
		require.Equal(t, []bool{true, true, true, true}, known)
		require.Equal(t, event.ResultSuccess, out[len(out)-1].(*event.Result).Status)
	})
	t.Run("empty-first-answer-is-set-mode", func(t *testing.T) {
		// No mode set and a prompt answered {}: not told from set_mode's.
		out, known := parse(string(answer(3, `{}`)))
		require.True(t, known[2])
		require.IsType(t, &event.SessionStart{}, out[len(out)-1])
	})
	t.Run("before-session-new", func(t *testing.T) {
		c := NewParser()
		_, known := c.Parse(nil, answer(1, `{"usage":{}}`))
		require.False(t, known, "an answer to nothing known")
	})
}

// TestCapturedUsageReadLeniently: counts in the prompt's answer written
// as floats or exponents are read as the Claude adapter reads them
// (240.0 is 240, 1e3 is 1000, a fraction is cut), and a negative count
// counts as 0 with the usage_mismatch warning (docs/events.md, "usage").
// encoding/json into int64 used to drop such a count as 0, silently, and
// a negative one was 0 with no warning.
func TestCapturedUsageReadLeniently(t *testing.T) {
	for _, c := range []struct {
		in   string
		want event.Usage
		warn bool
	}{
		{`"totalTokens":290,"inputTokens":240.0,"outputTokens":50`, event.Usage{InputTokens: 240, OutputTokens: 50}, false},
		{`"totalTokens":1050,"inputTokens":1e3,"outputTokens":5E1`, event.Usage{InputTokens: 1000, OutputTokens: 50}, false},
		{`"totalTokens":290,"inputTokens":240.7,"outputTokens":50`, event.Usage{InputTokens: 240, OutputTokens: 50}, false},
		{`"totalTokens":290,"inputTokens":"240","outputTokens":50`, event.Usage{OutputTokens: 50}, false},
		{`"totalTokens":290,"inputTokens":-240,"outputTokens":50`, event.Usage{OutputTokens: 50}, true},
		{`"totalTokens":-1,"inputTokens":240,"outputTokens":50`, event.Usage{InputTokens: 240, OutputTokens: 50}, true},
		{`"totalTokens":290,"inputTokens":240,"outputTokens":50,"cachedReadTokens":-2.0e1`, event.Usage{InputTokens: 240, OutputTokens: 50}, true},
	} {
		t.Run(c.in, func(t *testing.T) {
			evs := normalized(t, withAnswer(t, `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","usage":{`+c.in+`}}}`))
			res := resultOf(evs)
			require.Equal(t, event.ResultSuccess, res.Status)
			require.Equal(t, c.want, res.Usage)
			var warned int
			for _, w := range bodiesOf[*event.Warning](evs) {
				if w.Code == event.WarnUsageMismatch {
					warned++
				}
			}
			require.Equal(t, map[bool]int{true: 1}[c.warn], warned)
		})
	}
	t.Run("live-session", func(t *testing.T) {
		// A live session's turn says it too: the warning is the mapper's,
		// not the Stream's, which sees only the converted counts.
		var w bytes.Buffer
		cl, _ := conv(t, &w, false, adapters.FullAccess, nil, "")
		id, _ := turn(t, cl, &w, "go")
		out, _ := cl.Parse(nil, answer(id, `{"stopReason":"end_turn","usage":{"inputTokens":-5,"outputTokens":7}}`))
		require.IsType(t, &event.Warning{}, out[len(out)-2])
		require.Equal(t, event.WarnUsageMismatch, out[len(out)-2].(*event.Warning).Code)
		require.Equal(t, event.Usage{OutputTokens: 7}, out[len(out)-1].(*event.TurnEnd).Usage)
	})
}

// TestCapturedErrorAnswerAfterSessionNew: a capture holds the agent's
// lines only, so an error answer to the id after session/new's is
// set_mode's refusal or the prompt's failure, as the session's modes
// and what follows tell. Live, a refused mode is a warning and the prompt
// goes on; parse took every such error for a fatal one, and dropped the
// turn the agent then ran.
func TestCapturedErrorAnswerAfterSessionNew(t *testing.T) {
	withModes := `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1","modes":{"currentModeId":"default","availableModes":[{"id":"default"},{"id":"yolo"}]}}}`
	parse := func(lines ...string) []event.Body {
		c := NewParser()
		var out []event.Body
		for _, l := range append([]string{`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`}, lines...) {
			out, _ = c.Parse(out, []byte(l))
		}
		return c.Flush(out)
	}
	refused := `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"mode yolo not allowed"}}`
	t.Run("mode-refused-then-prompt", func(t *testing.T) {
		out := parse(withModes, refused, string(chunk("done")), string(answer(4, `{"stopReason":"end_turn"}`)))
		var warned bool
		for _, b := range out {
			if e, ok := b.(*event.Error); ok {
				t.Fatalf("an error: %s", e.Message)
			}
			if w, ok := b.(*event.Warning); ok && strings.Contains(w.Message, "session/set_mode: mode yolo not allowed") {
				warned = true
			}
		}
		require.True(t, warned, "%#v", out)
		res := out[len(out)-1].(*event.Result)
		require.Equal(t, event.ResultSuccess, res.Status)
		require.Equal(t, "done", res.Text)
	})
	t.Run("prompt-failed-with-modes", func(t *testing.T) {
		// No mode was set (the current one matched): the capture ends
		// with the prompt's error.
		out := parse(withModes, `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error: API Error: 500"}}`)
		e := lastFatal(t, out)
		require.Equal(t, "session/prompt failed: Internal error: API Error: 500", e.Message)
		require.Equal(t, 500, e.Status)
	})
	t.Run("prompt-failed-without-modes", func(t *testing.T) {
		out := parse(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`, refused, string(chunk("late")))
		e := lastFatal(t, out)
		require.Equal(t, "session/prompt failed: mode yolo not allowed", e.Message)
	})
}
