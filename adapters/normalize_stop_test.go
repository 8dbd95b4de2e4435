package adapters_test

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// TestNormalizeSinkPanicLeavesNoGoroutine: a sink that panics (recovered
// by the caller) leaves none of Normalize's goroutines behind, blocked
// on handing on batches nobody takes any more.
func TestNormalizeSinkPanicLeavesNoGoroutine(t *testing.T) {
	t.Parallel()
	// More batches than may queue ahead: the reader is held up handing
	// them on when the sink panics.
	in := strings.Repeat("a line of the stream\n", 64*4096)
	s := event.NewStream(event.StreamConfig{Run: adaptertest.RunID, Start: event.SessionStart{Agent: "echo"},
		Sink: func(ev event.Event) {
			if ev.Type == event.TypeTextDelta {
				panic("a bug in the sink")
			}
		}})
	me := goroutineID()
	require.PanicsWithValue(t, "a bug in the sink", func() {
		_ = adapters.Normalize(strings.NewReader(in), &echoParser{}, s, adapters.NormalizeOptions{})
	})
	// The goroutines Normalize started on this one say so in their
	// traces.
	mine := "created by github.com/agentharness/harness/adapters.Normalize in goroutine " + me + "\n"
	require.Eventually(t, func() bool {
		buf := make([]byte, 1<<20)
		return !bytes.Contains(buf[:runtime.Stack(buf, true)], []byte(mine))
	}, 5*time.Second, time.Millisecond, "a goroutine of Normalize outlived it")
}

// goroutineID returns the id of the calling goroutine.
func goroutineID() string {
	b := make([]byte, 64)
	return string(bytes.Fields(b[:runtime.Stack(b, false)])[1])
}
