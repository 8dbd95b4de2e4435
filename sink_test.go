package harness

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestSinkReusesItsLine: encoding the stream for OnLine allocates nothing
// per event once the line buffer has grown, whatever size the events
// are (a newline appended to a copy allocated one at every event whose
// encoding filled the buffer: half of a flood's allocations).
func TestSinkReusesItsLine(t *testing.T) {
	var lines int
	r := &Run{opts: Options{OnLine: func([]byte) { lines++ }}}
	// Every text size up to 4 KiB: whether an encoding fills the buffer
	// to its capacity depends on the size.
	for n := range 4096 {
		ev := event.Event{Run: "run_x", Seq: 2, Body: &event.Message{Role: "assistant", Text: strings.Repeat("y", n)}}
		r.sink(ev) // grows the buffer
		if a := testing.AllocsPerRun(3, func() { r.sink(ev) }); a != 0 {
			t.Fatalf("%v allocations an event of a %d-byte text", a, n)
		}
	}
	require.Positive(t, lines)
}
