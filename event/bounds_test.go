package event

import (
	"bytes"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// A tool input nested millions of levels deep (one 16 MiB line) is cut
// to the cap before anything walks it, and one under the cap but nested
// past MaxJSONDepth is not kept either: both become {} with
// input_truncated, and the stream stays readable by encoding/json. Under
// --raw the deep native line is kept as a string. (On a3236f9 the first
// overflowed the Go stack: fatal, no result.)
func TestStreamDeepInput(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, true)
	const levels = 8 << 20
	huge := []byte(`{"x":` + strings.Repeat("[", levels) + strings.Repeat("]", levels) + `}`)
	deep := []byte(`{"x":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`)
	spaced := []byte(`{"x":` + strings.Repeat(" ", 2*MaxInputBytes) + `[[1]]}`)
	require.NoError(t, s.Line(StreamStdout, deep, false, []Body{
		&ToolStart{CallID: "a", Name: "Bash", Kind: KindShell, Input: huge},
		&ToolStart{CallID: "b", Name: "Bash", Kind: KindShell, Input: deep},
		&ToolStart{CallID: "c", Name: "Bash", Kind: KindShell, Input: spaced},
		&ToolStart{CallID: "d", Name: "Bash", Kind: KindShell, Input: []byte(`{"x":[1,}`)},
	}))
	s.Finish(Outcome{NoProcess: true})
	require.NoError(t, CheckNDJSON(c.buf.Bytes()))
	evs, err := ReadAll(bytes.NewReader(c.buf.Bytes()))
	require.NoError(t, err)
	var starts []*ToolStart
	for _, ev := range evs {
		switch b := ev.Body.(type) {
		case *ToolStart:
			starts = append(starts, b)
		case *Native:
			require.Equal(t, byte('"'), b.Line[0], "a deep native line is kept as a string")
		}
	}
	require.Len(t, starts, 4)
	for _, ts := range starts[:2] {
		require.Equal(t, "{}", string(ts.Input), ts.CallID)
		require.True(t, ts.InputTruncated, ts.CallID)
	}
	require.Equal(t, `{"x":[[1]]}`, string(starts[2].Input), "white space does not count against the cap")
	require.False(t, starts[2].InputTruncated)
	require.Equal(t, "{}", string(starts[3].Input), "invalid input")
	require.False(t, starts[3].InputTruncated, "invalid input is not a cut")
}

// What the stream keeps of an event cut to its caps (an open call's
// start, the last events) is a copy of what it emits, never a view of the
// agent's megabytes.
func TestStreamCapsDoNotPinTheInput(t *testing.T) {
	t.Parallel()
	var sent []Event
	s := NewStream(StreamConfig{Sink: func(ev Event) { sent = append(sent, ev) }})
	big := strings.Repeat("x", 4<<20)
	line := []byte(`{"a":1}` + big)
	require.NoError(t, s.Emit(&ToolStart{CallID: "c", Name: "Bash", Kind: KindShell, Command: big, Path: big[:2*MaxFieldBytes], Input: line[:7]}))
	open := s.OpenCalls()
	require.Len(t, open, 1)
	st := open[0].Start
	require.Len(t, st.Command, MaxOutputBytes)
	require.False(t, sharesMemory(st.Command, big))
	require.Len(t, st.Path, MaxFieldBytes)
	require.False(t, sharesMemory(st.Path, big))
	require.Equal(t, `{"a":1}`, string(st.Input))
	require.Less(t, cap(st.Input), 1024, "the input is not a view of the line")
	require.NoError(t, s.Emit(&ToolEnd{CallID: "c", Output: big, Diff: big}, &Message{Role: RoleAssistant, Text: big}))
	for _, ev := range sent {
		switch b := ev.Body.(type) {
		case *ToolEnd:
			require.False(t, sharesMemory(b.Output, big) || sharesMemory(b.Diff, big))
		case *Message:
			require.False(t, sharesMemory(b.Text, big))
		}
	}
}

func sharesMemory(s, big string) bool {
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(big)))
	return len(s) > 0 && p >= lo && p < lo+uintptr(len(big))
}
