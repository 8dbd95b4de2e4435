package harness_test

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
)

// steppingClock is a clock that advances step at each reading.
func steppingClock(step time.Duration) func() time.Time {
	t := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(step)
		return t
	}
}

// captureLines is lines from to to (from 1, inclusive) of the capture at
// path, which has more.
func captureLines(t *testing.T, path string, from, to int) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	require.Greater(t, len(lines), to, "%s has a line to cut", path)
	return bytes.Join(lines[from-1:to], nil)
}

// parseDuration is result.duration_ms of harness parse of native as agent's
// output over protocol, with a clock that advances step at each reading.
func parseDuration(t *testing.T, native []byte, agent, protocol string, step time.Duration) (*event.Result, int64) {
	t.Helper()
	res, err := harness.Parse(context.Background(), bytes.NewReader(native), agent, func(event.Event) {},
		harness.ParseOptions{Now: steppingClock(step), Protocol: protocol})
	require.NoError(t, err)
	return res, res.DurationMS
}

// TestParseCutCaptureDurationIsItsSpan: harness parse of a capture cut
// before the agent's terminal line reports the span of the lines'
// timestamps as result.duration_ms, the same whatever the parse's clock
// does. It reported how long the parse took: another number each time.
func TestParseCutCaptureDurationIsItsSpan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, agent, protocol, capture string
		from, to                       int   // the lines kept: the terminal line (the next) and after are cut
		want                           int64 // worked out by hand from the kept lines' timestamps
	}{
		// Line 1 (init) 05:20:36.956Z to line 8 (the last delta)
		// 05:20:37.183Z; line 9 is the result.
		{"gemini", "gemini", "", "testdata/gemini/tool.jsonl", 1, 8, 227},
		// Line 1 (step_start) 1795238415784 to line 5 (text)
		// 1795238416135; line 6 is the step_finish with reason stop.
		{"opencode", "opencode", "", "testdata/opencode/tool.jsonl", 1, 5, 351},
		// Line 3 (thinking delta) timestamp_ms 1787521421085 to line 12
		// (tool_call completed) 1787521424012; lines 1-2 and 13 carry
		// none, line 14 is the result.
		{"cursor", "cursor", "", "testdata/cursor/02_thinking_glob_edit_shell_usage.jsonl", 1, 13, 2927},
		// Line 3 timestamp_ms 1787521700000 to line 19's tool call
		// completedAtMs "1787521707042": lines 18-19 carry no
		// timestamp_ms, only the call's own stamps; line 21 is the result.
		{"cursor-tool-stamps", "cursor", "", "testdata/cursor/11_exact_diffs.jsonl", 1, 20, 7042},
		// Line 2 (the first assistant line) 05:19:47.097Z to line 5 (the
		// last assistant line) 05:19:47.355Z; line 1 (system/init) has
		// no timestamp, line 6 is the result.
		{"claude", "claude", "", "testdata/claude/tool.jsonl", 1, 5, 258},
		// Claude Code over stream-json (a Conversation drives the CLI's
		// parser): line 4 07:07:47.278Z to line 7 07:07:47.873Z; lines
		// 1-2 are the test's prompts, line 3 (system/init) has no
		// timestamp, line 8 is the first turn's result.
		{"claude-stream-json", "claude", harness.ProtocolStreamJSON, "adapters/claude/testdata/live/two-turns.jsonl", 3, 7, 595},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			native := captureLines(t, tc.capture, tc.from, tc.to)
			res, fast := parseDuration(t, native, tc.agent, tc.protocol, 7*time.Millisecond)
			require.Equal(t, event.ResultError, res.Status, "cut before the terminal line")
			_, slow := parseDuration(t, native, tc.agent, tc.protocol, time.Second)
			require.Equal(t, tc.want, fast)
			require.Equal(t, tc.want, slow)
		})
	}
}

// TestParseDurationWithoutTheAgentsIsItsSpan: a terminal line that reports
// no duration of its own (a Claude result without duration_ms) leaves the
// span of the lines' timestamps as the run's duration, not the parse's.
func TestParseDurationWithoutTheAgentsIsItsSpan(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/claude/tool.jsonl")
	require.NoError(t, err)
	native := bytes.Replace(data, []byte(`"duration_ms":527,`), nil, 1)
	require.NotEqual(t, data, native)
	// Line 2 05:19:47.097Z to line 5 05:19:47.355Z: the result (line 6)
	// has no timestamp.
	res, fast := parseDuration(t, native, "claude", "", 7*time.Millisecond)
	require.Equal(t, event.ResultSuccess, res.Status)
	_, slow := parseDuration(t, native, "claude", "", time.Second)
	require.Equal(t, int64(258), fast)
	require.Equal(t, int64(258), slow)
	// The agent's own duration still comes first.
	_, own := parseDuration(t, data, "claude", "", time.Second)
	require.Equal(t, int64(527), own)
}

// TestParseCutCodexCaptureOnTheParseClock: Codex's exec lines carry no
// timestamps, so a cut capture's duration is still how long the parse
// took by its clock.
func TestParseCutCodexCaptureOnTheParseClock(t *testing.T) {
	t.Parallel()
	native := captureLines(t, "testdata/codex/tool.jsonl", 1, 5) // line 6 is turn.completed
	res, fast := parseDuration(t, native, "codex", "", 7*time.Millisecond)
	require.Equal(t, event.ResultError, res.Status)
	_, slow := parseDuration(t, native, "codex", "", time.Second)
	require.Positive(t, fast)
	require.GreaterOrEqual(t, slow, int64(1000))
}
