package adapters_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/adapters/claude"
	"github.com/agentharness/harness/adapters/codex"
	"github.com/agentharness/harness/adapters/cursor"
	"github.com/agentharness/harness/adapters/gemini"
	"github.com/agentharness/harness/adapters/opencode"
	"github.com/agentharness/harness/event"
)

// all is every agent's adapter.
var all = []adapters.Adapter{claude.New(), codex.New(), cursor.New(), opencode.New(), gemini.New()}

// TestHostileLinesAndOwnedStrings holds every parser to huge, deep, cut
// and non-UTF-8 lines, and its bodies to owning their strings.
func TestHostileLinesAndOwnedStrings(t *testing.T) {
	t.Parallel()
	for _, a := range all {
		dir := filepath.Join("..", "testdata", a.Name())
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			adaptertest.HostileLines(t, a, dir)
			adaptertest.BodiesOwnTheirStrings(t, a, dir)
		})
	}
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
		require.True(t, seen[tp], "no golden file has a %s event", tp)
	}
}

// TestBenchStreamsAreValid keeps the benchmarks honest: the input of each
// agent's BenchmarkNormalize and BenchmarkParse must normalize to a valid
// stream with real work in it.
func TestBenchStreamsAreValid(t *testing.T) {
	t.Parallel()
	for _, a := range all {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			glob, size := "*", int64(64<<10)
			if a.Name() == "claude" {
				glob, size = "partial-*", 512<<10 // what its benchmarks read
			}
			out := adaptertest.Normalize(a, adaptertest.BenchStream(t, a.Name(), size, glob), false)
			adaptertest.CheckStream(t, out)
			require.Greater(t, bytes.Count(out, []byte(`"type":"tool_end"`)), 10)
		})
	}
}
