package claude

import (
	"runtime"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// Open tool calls keep only what their events carry, within the caps: 60
// calls of 1 MiB inputs (Write, Edit with its two strings, Bash), all open
// at once, leave the parser and the Stream holding a few MB, not the
// inputs (on a3236f9: 80 MB here; 60 calls of 4 MB held 245 to 495 MB).
// Measured as the heap in use after a collection, in a test that runs
// alone (not parallel): what is retained, not how fast.
func TestOpenCallsKeepOnlyWhatIsEmitted(t *testing.T) {
	p := newParser()
	var views, kept int // fields that are views of the line; inputs not cut
	adaptertest.OpenCallsHeld(t, p, func(i int, text string) string {
		id := "t" + strconv.Itoa(i)
		path := `"/w/f` + strconv.Itoa(i) + `.txt"`
		switch i % 3 {
		case 0:
			return useLine(id, "Write", `{"file_path":`+path+`,"content":"`+text+`"}`)
		case 1:
			return useLine(id, "Edit", `{"file_path":`+path+`,"old_string":"`+text+`","new_string":"y`+text+`"}`)
		default:
			return useLine(id, "Bash", `{"command":"echo `+text+`"}`)
		}
	}, func(b event.Body, line string) {
		ts := b.(*event.ToolStart)
		if !ts.InputTruncated {
			kept++
		}
		if within(ts.Path, line) || within(ts.Command, line) {
			views++
		}
	})
	require.Zero(t, kept, "an input over the cap is cut")
	require.Zero(t, views, "no field is a view of the line")

	// Their ends: a file tool whose input was not kept has no diff.
	for i := range adaptertest.HeldCalls {
		buf, _ := p.Parse(nil, []byte(resultLine("t"+strconv.Itoa(i), `{"type":"create"}`)))
		te := buf[0].(*event.ToolEnd)
		if i%3 == 2 {
			require.Empty(t, te.DiffSkipped)
			continue
		}
		require.Equal(t, []string{"/w/f" + strconv.Itoa(i) + ".txt"}, te.Paths)
		require.Equal(t, event.DiffSkippedTooLarge, te.DiffSkipped)
		require.Empty(t, te.Diff)
	}
}

// within reports whether s shares memory with line.
func within(s, line string) bool {
	if s == "" {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(line)))
	return p >= lo && p < lo+uintptr(len(line))
}

// TestEndedCallsKeepLittle: what the parser keeps of a tool call once it
// ended, and of a model call once counted, is a hash of its id each: 300k
// tool calls, each in a model call of its own, leave it holding under 48
// bytes a call (a map of the calls and their usage kept ~400 bytes a
// call, and a parse of a million calls spent half its CPU collecting
// that heap). Not parallel: the heap is measured.
func TestEndedCallsKeepLittle(t *testing.T) {
	const calls = 300_000
	p := newParser()
	usage := `,"usage":{"input_tokens":10,"output_tokens":5}`
	var buf []event.Body
	line := func(i int) (string, string) {
		id := "toolu_" + strconv.Itoa(i)
		use := `{"type":"assistant","message":{"id":"msg_` + strconv.Itoa(i) + `","content":[{"type":"tool_use","id":"` + id + `","name":"Bash","input":{"command":"ls"}}]` + usage + `}}`
		return use, resultLine(id, "")
	}
	for i := range 1000 { // the maps and buffers of a run, at their size
		use, res := line(-1 - i)
		buf, _ = p.Parse(buf[:0], []byte(use))
		buf, _ = p.Parse(buf[:0], []byte(res))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range calls {
		use, res := line(i)
		buf, _ = p.Parse(buf[:0], []byte(use))
		buf, _ = p.Parse(buf[:0], []byte(res))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perCall := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / calls
	t.Logf("%.1f bytes kept per ended call", perCall)
	require.Less(t, perCall, 48.0, "bytes kept per ended tool call and counted model call")
	require.Empty(t, p.calls)
	require.Empty(t, p.usage)
	runtime.KeepAlive(p)
}

// TestEndedCallsStayKnown: a tool call announced or answered again, and a
// model call's usage repeated, are still recognised a hundred thousand
// calls later, now that only their hashes are kept.
func TestEndedCallsStayKnown(t *testing.T) {
	t.Parallel()
	p := newParser()
	first := `{"type":"assistant","message":{"id":"m_t0","content":[{"type":"tool_use","id":"t0","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":7}}}`
	firstUsage := `{"type":"assistant","message":{"id":"m_t0","content":[{"type":"text","text":"again"}],"usage":{"input_tokens":7}}}`
	lines := []string{first, resultLine("t0", "")}
	for i := 1; i <= 100_000; i++ {
		id := "t" + strconv.Itoa(i)
		lines = append(lines, useLine(id, "Bash", `{"command":"ls"}`), resultLine(id, ""))
	}
	out := adaptertest.Bodies(p, lines...)
	require.Len(t, only[*event.Usage](out), 1)
	require.Len(t, only[*event.ToolStart](out), 100_001)
	require.Len(t, only[*event.ToolEnd](out), 100_001)
	again := adaptertest.Bodies(p, first, resultLine("t0", ""), firstUsage)
	require.Empty(t, only[*event.ToolStart](again), "a call announced again after it ended")
	require.Empty(t, only[*event.ToolEnd](again), "a result given again")
	require.Empty(t, only[*event.Usage](again), "a model call counted long ago")
	require.Len(t, only[*event.Message](again), 1)
}

// TestSubAgentStreamsEnd: the partial-message stream of a sub-agent is
// let go when its Task call has its result, its finished blocks emitted
// before that result's tool_end: a run of a thousand sub-agents keeps the
// main agent's stream only (it kept all thousand, and looked through them
// at every stream_event).
func TestSubAgentStreamsEnd(t *testing.T) {
	t.Parallel()
	p := newParser()
	ev := func(parent, event string) string {
		return `{"type":"stream_event","event":` + event + `,"parent_tool_use_id":"` + parent + `"}`
	}
	var lines []string
	for i := range 1000 {
		task := "task_" + strconv.Itoa(i)
		lines = append(lines, useLine(task, "Task", `{"prompt":"go"}`),
			ev(task, `{"type":"message_start","message":{"id":"sub_`+strconv.Itoa(i)+`","usage":{"input_tokens":1}}}`),
			ev(task, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
			ev(task, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"sub says"}}`),
			ev(task, `{"type":"content_block_stop","index":0}`),
			resultLine(task, ""))
	}
	out := adaptertest.Bodies(p, lines...)
	require.LessOrEqual(t, len(p.streams), 1)
	var order []string
	for _, b := range out {
		switch v := b.(type) {
		case *event.Message:
			require.Equal(t, "sub says", v.Text)
			order = append(order, "message "+v.ParentCallID)
		case *event.ToolEnd:
			order = append(order, "end "+v.CallID)
		}
	}
	require.Len(t, order, 2000)
	for i := range 1000 {
		task := "task_" + strconv.Itoa(i)
		require.Equal(t, []string{"message " + task, "end " + task}, order[2*i:2*i+2])
	}
}
