package claude

import (
	"strings"
	"testing"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/stretchr/testify/require"
)

// BenchmarkNormalize times parser, event.Stream and encoder together on a
// stream built from the testdata, as harness parse runs them.
func BenchmarkNormalize(b *testing.B) {
	adaptertest.BenchNormalize(b, New(), adaptertest.BenchStream(b, "claude", 4<<20, "partial-*"))
}

// BenchmarkParse times the parser alone on the same stream.
func BenchmarkParse(b *testing.B) {
	adaptertest.BenchParse(b, New(), adaptertest.BenchStream(b, "claude", 4<<20, "partial-*"))
}

// TestBenchStreamIsValid keeps the benchmark honest: its input must
// normalize to a valid stream with real work in it.
func TestBenchStreamIsValid(t *testing.T) {
	t.Parallel()
	out := adaptertest.Normalize(New(), adaptertest.BenchStream(t, "claude", 512<<10, "partial-*"), false)
	adaptertest.CheckStream(t, out)
	require.Greater(t, strings.Count(string(out), `"type":"tool_end"`), 10)
}
