package adapters_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/adapters/codex"
	"github.com/agentharness/harness/adapters/cursor"
	"github.com/agentharness/harness/adapters/gemini"
	"github.com/agentharness/harness/adapters/internal/benchdata"
	"github.com/agentharness/harness/adapters/opencode"
	"github.com/agentharness/harness/event"
)

// all is every agent of harness's table that has captures in testdata/
// (not oracle and nop, which print no native stream), in display order.
var all = slices.DeleteFunc(harness.Agents(), func(a harness.Agent) bool {
	_, err := os.Stat(adaptertest.Testdata(a.Name()))
	return err != nil
})

// eachAgent runs test on every agent's adapter, each in a parallel
// subtest, with the directory of its captures.
func eachAgent(t *testing.T, test func(t *testing.T, a adapters.Adapter, dir string)) {
	for _, a := range all {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			test(t, a, adaptertest.Testdata(a.Name()))
		})
	}
}

// TestCommandRefusals: every adapter refuses a task it cannot honour
// rather than run something else: an unknown permission mode, and each
// task field its CLI has no option for, with its own error (nil: the
// adapter honours the field).
func TestCommandRefusals(t *testing.T) {
	t.Parallel()
	refusals := map[string]struct{ maxTurns, systemPrompt, appendSystemPrompt error }{
		"claude":   {},
		"codex":    {codex.ErrMaxTurns, codex.ErrSystemPrompt, nil},
		"cursor":   {cursor.ErrMaxTurns, cursor.ErrSystemPrompt, cursor.ErrSystemPrompt},
		"gemini":   {gemini.ErrMaxTurns, gemini.ErrSystemPrompt, gemini.ErrAppendSystemPrompt},
		"opencode": {opencode.ErrMaxTurns, opencode.ErrSystemPrompt, opencode.ErrSystemPrompt},
	}
	eachAgent(t, func(t *testing.T, a adapters.Adapter, _ string) {
		r, ok := refusals[a.Name()]
		require.True(t, ok, "say what %s refuses", a.Name())
		cases := map[string]adaptertest.BadTask{
			"unknown-permission": {Task: adapters.Task{Prompt: "x", Permissions: "yolo"}, Contains: `unknown permission mode "yolo"`},
		}
		for name, c := range map[string]struct {
			task adapters.Task
			err  error
		}{
			"max-turns":            {adapters.Task{Prompt: "x", MaxTurns: 3}, r.maxTurns},
			"system-prompt":        {adapters.Task{Prompt: "x", SystemPrompt: "be brief"}, r.systemPrompt},
			"append-system-prompt": {adapters.Task{Prompt: "x", AppendSystemPrompt: "be brief"}, r.appendSystemPrompt},
		} {
			if c.err != nil {
				cases[name] = adaptertest.BadTask{Task: c.task, Want: c.err}
			}
		}
		adaptertest.CommandErrors(t, a, a.Binaries()[0], cases)
	})
}

// TestHostileLinesAndOwnedStrings holds every parser to huge, deep, cut
// and non-UTF-8 lines, and its bodies to owning their strings.
func TestHostileLinesAndOwnedStrings(t *testing.T) {
	t.Parallel()
	eachAgent(t, func(t *testing.T, a adapters.Adapter, dir string) {
		adaptertest.HostileLines(t, a, dir)
		adaptertest.BodiesOwnTheirStrings(t, a, dir)
		adaptertest.TwoValuesOnALine(t, a, dir)
	})
}

// TestEveryEventTypeHasAGolden fails when some event type appears in no
// golden file of any agent: each type of the spec must be proven on real
// (or realistic) native output.
func TestEveryEventTypeHasAGolden(t *testing.T) {
	t.Parallel()
	seen := map[event.Type]bool{}
	for _, a := range all {
		goldens, err := filepath.Glob(filepath.Join("..", "testdata", a.Name(), "*.golden.ndjson"))
		require.NoError(t, err)
		require.NotEmpty(t, goldens, a.Name())
		for _, g := range goldens {
			data, err := os.ReadFile(g)
			require.NoError(t, err)
			evs, err := event.ReadAll(bytes.NewReader(data))
			require.NoError(t, err, g)
			for _, ev := range evs {
				seen[ev.Type] = true
			}
		}
	}
	for _, tp := range event.Types {
		if event.SessionOnly(tp) {
			continue // a live session's (turns, permission requests): no capture of one CLI run has them
		}
		require.True(t, seen[tp], "no golden file has a %s event", tp)
	}
}

// TestBenchStreamsAreValid keeps the benchmarks honest: the input of each
// agent's BenchmarkNormalize and BenchmarkParse must normalize to a valid
// stream with real work in it.
func TestBenchStreamsAreValid(t *testing.T) {
	t.Parallel()
	eachAgent(t, func(t *testing.T, a adapters.Adapter, _ string) {
		size := int64(64 << 10)
		if a.Name() == "claude" {
			size = 512 << 10 // its partial-message captures are long
		}
		out := adaptertest.Normalize(a, adaptertest.BenchStream(t, a.Name(), size, adaptertest.BenchCases(a.Name())), false)
		adaptertest.CheckStream(t, out)
		require.Greater(t, bytes.Count(out, []byte(`"type":"tool_end"`)), 10)
	})
}

// TestGenerateEndsInSuccessWithFreshIDs: a generated benchmark stream
// (benchdata.Generate) is whole cases, each repetition with ids of its own,
// and the agent's parser ends it with its successful terminal event.
func TestGenerateEndsInSuccessWithFreshIDs(t *testing.T) {
	t.Parallel()
	eachAgent(t, func(t *testing.T, a adapters.Adapter, dir string) {
		cases, err := benchdata.LoadCases(dir)
		require.NoError(t, err)
		var one int64
		for _, c := range cases {
			one += int64(len(c.Data))
		}
		var buf bytes.Buffer
		n, err := benchdata.Generate(&buf, cases, 2*one+1)
		require.NoError(t, err)
		require.Equal(t, int64(buf.Len()), n)
		require.True(t, bytes.HasSuffix(buf.Bytes(), []byte("\n")), "whole cases only")
		require.Zero(t, bytes.Count(buf.Bytes(), []byte("\n\n")), "no empty lines")
		// Each repetition renames ids its own way.
		require.Positive(t, bytes.Count(buf.Bytes(), []byte(`_r0c0"`)))
		require.Equal(t, bytes.Count(buf.Bytes(), []byte(`_r0c0"`)), bytes.Count(buf.Bytes(), []byte(`_r1c0"`)))

		s := event.NewStream(event.StreamConfig{Run: "r", Start: event.SessionStart{Agent: a.Name()}})
		require.NoError(t, adapters.Normalize(&buf, a.NewParser(), s, adapters.NormalizeOptions{}))
		got := s.Finish(event.Outcome{NoProcess: true})
		require.Equal(t, event.ResultSuccess, got.Status, "the stream ends with the agent's successful terminal event")
	})
}

// TestRepetitionsAreNotSkipped: every repetition of a generated stream
// must count as much as the first: none of it may be skipped as another
// session's, or dropped as a duplicate.
func TestRepetitionsAreNotSkipped(t *testing.T) {
	t.Parallel()
	eachAgent(t, func(t *testing.T, a adapters.Adapter, dir string) {
		cases, err := benchdata.LoadCases(dir)
		require.NoError(t, err)
		var one, three bytes.Buffer
		_, err = benchdata.Generate(&one, cases, 1)
		require.NoError(t, err)
		_, err = benchdata.Generate(&three, cases, int64(2*one.Len()+1))
		require.NoError(t, err)
		e1, e3 := events(t, a, one.Bytes()), events(t, a, three.Bytes())
		require.Greater(t, e1, int64(10))
		// session_start and result come once, whatever the length.
		require.GreaterOrEqual(t, e3, 3*(e1-2), "one repetition gives %d events, three give %d", e1, e3)
	})
}

// events counts the events a's parser and event.Stream make of data, but
// for usage: Claude's default mode settles what the per-call lines lack at
// the terminal result, which a generated corpus keeps only once.
func events(t *testing.T, a adapters.Adapter, data []byte) int64 {
	t.Helper()
	var usage int64
	s := event.NewStream(event.StreamConfig{Run: "r", Start: event.SessionStart{Agent: a.Name()}, Sink: func(ev event.Event) {
		if ev.Type == event.TypeUsage {
			usage++
		}
	}})
	require.NoError(t, adapters.Normalize(bytes.NewReader(data), a.NewParser(), s, adapters.NormalizeOptions{}))
	return s.Finish(event.Outcome{NoProcess: true}).Stats.Events - usage
}
