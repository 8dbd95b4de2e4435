package cursor

import (
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// Open tool calls keep only what their events carry: 60 Write calls of
// 1 MiB announced and not yet completed leave the parser and the Stream
// holding a few MB, not the lines (on a3236f9 the call ids, views of the
// lines, kept 60 MB alive here: 4 MB calls held 244 MB). Measured as the
// heap in use after a collection, in a test that runs alone.
func TestOpenCallsKeepOnlyWhatIsEmitted(t *testing.T) {
	const calls, size = 60, 1 << 20
	text := strings.Repeat(strings.Repeat("x", 79)+`\n`, size/80)
	p := Agent.NewParser()
	s := event.NewStream(event.StreamConfig{Sink: func(event.Event) {}})
	before := adaptertest.HeapAfterGC()
	var buf []event.Body
	for i := range calls {
		id := "call" + strconv.Itoa(i)
		line := `{"type":"tool_call","subtype":"started","call_id":"` + id + `","tool_call":{"writeToolCall":{"args":{"path":"f` + strconv.Itoa(i) + `.txt","fileText":"` + text + `","toolCallId":"` + id + `"}}},"session_id":"s"}`
		buf, _ = p.Parse(buf[:0], []byte(line))
		require.Len(t, buf, 1)
		require.NoError(t, s.Line(event.StreamStdout, []byte(line), false, buf))
		clear(buf)
	}
	require.Len(t, s.OpenCalls(), calls)
	held := adaptertest.HeapAfterGC() - before
	t.Logf("%d open calls hold %.1f MB", calls, float64(held)/1e6)
	require.Less(t, held, int64(16<<20), "the open calls hold %d MB", held>>20)
	runtime.KeepAlive(p)
	runtime.KeepAlive(s)
}
