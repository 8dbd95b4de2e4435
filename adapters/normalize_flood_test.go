package adapters_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/linescan"
)

// floodReader fills every read with lines, until n bytes, and keeps the
// largest read it was asked for: a flood that keeps a pipe full.
type floodReader struct{ n, largest int }

func (f *floodReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, io.EOF
	}
	f.largest = max(f.largest, len(p))
	k := min(len(p), f.n)
	for i := range k {
		p[i] = 'x'
		if i%100 == 99 || i == k-1 {
			p[i] = '\n'
		}
	}
	f.n -= k
	return k, nil
}

// TestNormalizeReadsAFloodInLargeReads: a pipe that keeps its reads full
// (a capture piped into harness parse) is read a MiB at a time, as an
// agent's stdout is, not 64 KiB at a time.
func TestNormalizeReadsAFloodInLargeReads(t *testing.T) {
	t.Parallel()
	r := &floodReader{n: 8 << 20}
	s := event.NewStream(event.StreamConfig{Run: adaptertest.RunID, Start: event.SessionStart{Agent: "echo"}, Sink: func(event.Event) {}})
	require.NoError(t, adapters.Normalize(r, &echoParser{}, s, adapters.NormalizeOptions{}))
	require.Equal(t, linescan.LargeBufSize, r.largest)
}
