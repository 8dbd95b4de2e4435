package main

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// deepLevels nests a value 8 million levels deep: one line of 16 MB, under
// the 16 MiB line cap. On a3236f9 gjson's recursive validation overflowed
// the Go stack on it (fatal error, exit 2, no result).
const deepLevels = 8_000_000

// TestParseDeepInput: harness parse of a capture whose tool input nests
// millions of levels deep ends with its result, the input cut and
// reported; a bare array that deep (Cursor checks whether a line that is
// not an object is JSON) is an unparsed line.
func TestParseDeepInput(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	claude := filepath.Join(dir, "claude.jsonl")
	require.NoError(t, os.WriteFile(claude, []byte(strings.Join([]string{
		`{"type":"system","subtype":"init","cwd":"/tmp","session_id":"s","model":"m"}`,
		fakeagent.DeepToolUse(deepLevels),
		`{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s"}`, ""}, "\n")), 0o600))
	r := invoke(t, "", "parse", "--agent", "claude", claude)
	require.Equal(t, 0, r.code, r.stderr)
	adaptertest.CheckStream(t, []byte(r.stdout))
	evs, err := event.ReadAll(strings.NewReader(r.stdout))
	require.NoError(t, err)
	var start *event.ToolStart
	for _, ev := range evs {
		if ts, ok := ev.Body.(*event.ToolStart); ok {
			start = ts
		}
	}
	require.NotNil(t, start)
	require.Equal(t, "{}", string(start.Input))
	require.True(t, start.InputTruncated)

	cursor := filepath.Join(dir, "cursor.jsonl")
	require.NoError(t, os.WriteFile(cursor, []byte(strings.Repeat("[", deepLevels)+strings.Repeat("]", deepLevels)+"\n"), 0o600))
	r = invoke(t, "", "parse", "--agent", "cursor", cursor)
	adaptertest.CheckStream(t, []byte(r.stdout))
	evs, err = event.ReadAll(strings.NewReader(r.stdout))
	require.NoError(t, err)
	res := evs[len(evs)-1].Body.(*event.Result)
	require.Equal(t, int64(1), res.Stats.UnparsedLines, "JSON, but not an event")
}

// TestParseCapsItsHeap: harness parse runs under a memory limit, which
// alone paces the collector, so that its RSS stays flat in the number of
// lines (issue 25: the collector at GOGC 400 let it grow 44 -> 59 MB from
// 10 to 100 MB of gemini stream; under the limit at GOGC 400, claude's
// 33.0 -> 41.1 MB from 200 to 800 MB), unless the user set GOGC or
// GOMEMLIMIT.
func TestParseCapsItsHeap(t *testing.T) {
	isolate(t)
	restoreGC := func() int { p := debug.SetGCPercent(100); debug.SetGCPercent(p); return p }()
	restoreLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(restoreGC); debug.SetMemoryLimit(restoreLimit) })
	capture := filepath.Join(adaptertest.Testdata("claude"), "text.jsonl")
	for _, tc := range []struct {
		env   map[string]string
		limit int64
		gc    int // GOGC as a percent, -1 for off
	}{
		{map[string]string{"GOGC": "", "GOMEMLIMIT": ""}, 32 << 20, -1},
		{map[string]string{"GOGC": "", "GOMEMLIMIT": "1GiB"}, math.MaxInt64, 400},
		{map[string]string{"GOGC": "100", "GOMEMLIMIT": ""}, math.MaxInt64, 100},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
			if v == "" {
				os.Unsetenv(k)
			}
		}
		debug.SetMemoryLimit(math.MaxInt64)
		debug.SetGCPercent(100) // what the runtime read from GOGC=100
		require.Equal(t, 0, run([]string{"parse", "--agent", "claude", capture}, strings.NewReader(""), io.Discard, io.Discard))
		require.Equal(t, tc.limit, debug.SetMemoryLimit(-1), "%v", tc.env)
		require.Equal(t, tc.gc, debug.SetGCPercent(100), "%v", tc.env)
	}
}
