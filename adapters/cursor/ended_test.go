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

func startedLine(id string) string {
	return `{"type":"tool_call","subtype":"started","call_id":"` + id + `","tool_call":{"readToolCall":{"args":{"path":"x"}}}}`
}

func completedLine(id string) string {
	return `{"type":"tool_call","subtype":"completed","call_id":"` + id + `","tool_call":{"readToolCall":{"args":{"path":"x"},"result":{"success":{"content":"c"}}}}}`
}

// TestCompletedAgainOpensNoCall: a completed line of a call that already
// ended (Cursor printing it twice) is understood and dropped whole: no
// second call (the Stream would announce "c#2" with an empty input), and
// the answer given before it stays the answer. A call started again with
// the same id is a new call; id-less completions cannot be told apart and
// stay calls of their own.
func TestCompletedAgainOpensNoCall(t *testing.T) {
	t.Parallel()
	answer := `{"type":"assistant","message":{"content":[{"type":"text","text":"done"}]}}`
	result := `{"type":"result","subtype":"success","result":"done","session_id":"s"}`
	bodies, known := adaptertest.ParseLines(newParser(), startedLine("c"), completedLine("c"), answer, completedLine("c"), completedLine("c"))
	require.Equal(t, []bool{true, true, true, true, true}, known)
	require.Len(t, bodies, 3, "start, end, and nothing for the repeats: %v", bodies)

	// A repeat among the pieces of streamed text leaves the segment open:
	// its consolidated repeat still closes it, one message.
	bodies = adaptertest.Bodies(newParser(), startedLine("c"), completedLine("c"),
		`{"type":"assistant","message":{"content":[{"type":"text","text":"do"}]},"timestamp_ms":1}`,
		completedLine("c"),
		`{"type":"assistant","message":{"content":[{"type":"text","text":"ne"}]},"timestamp_ms":2}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"done"}]},"model_call_id":"m-0","timestamp_ms":3}`)
	require.Equal(t, []event.Body{&event.TextDelta{Text: "do"}, &event.TextDelta{Text: "ne"}, &event.Message{Role: event.RoleAssistant, Text: "done"}}, bodies[2:])

	out := adaptertest.Normalize(Agent, []byte(strings.Join([]string{
		`{"type":"system","subtype":"init","session_id":"s","cwd":"/w"}`,
		startedLine("c"), completedLine("c"), answer, completedLine("c"), result,
	}, "\n")), false)
	adaptertest.CheckStream(t, out)
	require.NotContains(t, string(out), `c#2`)
	require.Contains(t, string(out), `"text":"done","session_id":"s"`, "the answer before the repeat")
	require.Contains(t, string(out), `"tool_calls":1}`)

	again := adaptertest.Normalize(Agent, []byte(strings.Join([]string{
		startedLine("c"), completedLine("c"), startedLine("c"), completedLine("c"),
		completedLine(""), completedLine(""), result,
	}, "\n")), false)
	adaptertest.CheckStream(t, again)
	require.Contains(t, string(again), `"call_id":"c#2"`, "a call started again is a new call")
	require.Contains(t, string(again), `"tool_calls":4}`)
}

// TestEndedCallsStayKnown: a completion given again is recognised a
// hundred thousand calls later.
func TestEndedCallsStayKnown(t *testing.T) {
	t.Parallel()
	p := newParser()
	var buf []event.Body
	for i := range 100_000 {
		id := "c" + strconv.Itoa(i)
		buf, _ = p.Parse(buf[:0], []byte(startedLine(id)))
		buf, _ = p.Parse(buf[:0], []byte(completedLine(id)))
	}
	require.Empty(t, adaptertest.Bodies(p, completedLine("c0"), completedLine("c99999")))
	require.Len(t, adaptertest.Bodies(p, completedLine("c100000")), 2, "an id never seen: start and end")
}

// TestEndedCallsKeepLittle: an ended call leaves the parser holding a
// hash of its id, not the id (a view of its line) nor its events: 200k
// calls keep under 32 bytes each. Not parallel: the heap is measured.
func TestEndedCallsKeepLittle(t *testing.T) {
	const calls = 200_000
	p := newParser()
	var buf []event.Body
	call := func(i int) {
		id := "call_" + strconv.Itoa(i) + strings.Repeat("x", 40)
		buf, _ = p.Parse(buf[:0], []byte(startedLine(id)))
		buf, _ = p.Parse(buf[:0], []byte(completedLine(id)))
	}
	for i := range 1000 { // the parser's buffers, at their size
		call(-1 - i)
	}
	before := adaptertest.HeapAfterGC()
	for i := range calls {
		call(i)
	}
	perCall := float64(adaptertest.HeapAfterGC()-before) / calls
	t.Logf("%.1f bytes kept per ended call", perCall)
	require.Less(t, perCall, 32.0, "bytes kept per ended call")
	runtime.KeepAlive(p)
}
