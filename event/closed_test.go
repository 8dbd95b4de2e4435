package event

import (
	"cmp"
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStreamRenamesAnIDReusedLongAfter: an id ended a hundred thousand
// calls ago is still known, whichever part of the set holds it.
func TestStreamRenamesAnIDReusedLongAfter(t *testing.T) {
	t.Parallel()
	var ids []string
	s := NewStream(StreamConfig{Run: testRun, Sink: func(ev Event) {
		if st, ok := ev.Body.(*ToolStart); ok && st.CallID[0] == 'x' {
			ids = append(ids, st.CallID)
		}
	}})
	require.NoError(t, s.Emit(&ToolStart{CallID: "x", Name: "n"}, &ToolEnd{CallID: "x"}))
	for i := range 100_000 {
		id := "c" + strconv.Itoa(i)
		require.NoError(t, s.Emit(&ToolStart{CallID: id, Name: "n"}, &ToolEnd{CallID: id}))
	}
	require.NoError(t, s.Emit(&ToolStart{CallID: "x", Name: "n"}, &ToolEnd{CallID: "x"}))
	require.Equal(t, []string{"x", "x#2"}, ids)
}

// TestStreamKeepsLittlePerEndedCall: what a Stream keeps of each ended
// call, to tell a reused id, is little more than its 8-byte hash (a map
// of the hashes kept 32 bytes a call at this size).
func TestStreamKeepsLittlePerEndedCall(t *testing.T) {
	const calls = 300_000
	ids := make([]string, calls)
	for i := range ids {
		ids[i] = "call_" + strconv.Itoa(i)
	}
	s := NewStream(StreamConfig{Run: testRun})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, id := range ids {
		require.NoError(t, s.Emit(&ToolStart{CallID: id, Name: "n"}, &ToolEnd{CallID: id}))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perCall := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / calls
	t.Logf("%.1f bytes kept per ended call", perCall)
	require.Less(t, perCall, 16.0, "bytes kept per ended call")
	runtime.KeepAlive(s)
	runtime.KeepAlive(ids)
}

// TestStreamRenamesToAnIDNoCallHad: a reused id is renamed to one no call
// had, not to one the agent gave a call itself. Before, the reuse of "a"
// was named "a#2" while the agent's own "a#2" was open: two open calls
// with one id.
func TestStreamRenamesToAnIDNoCallHad(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, false)
	require.NoError(t, s.Emit(
		&ToolStart{CallID: "a#2", Name: "Bash", Kind: KindShell, Command: "own"},
		&ToolStart{CallID: "a", Name: "Bash", Kind: KindShell, Command: "first"},
		&ToolEnd{CallID: "a"},
		&ToolStart{CallID: "a", Name: "Bash", Kind: KindShell, Command: "reuse"},
		&ToolEnd{CallID: "a#2", Output: "own's"},
		&ToolEnd{CallID: "a", Output: "reuse's"},
		&Result{Status: ResultSuccess},
	))
	s.Finish(Outcome{Status: ResultSuccess})
	require.Equal(t, []string{"start a#2 own", "start a first", "end a  ok", "start a#3 reuse", "end a#2 own's ok", "end a#3 reuse's ok"},
		callsOf(c.evs))
	require.NoError(t, CheckNDJSON(c.buf.Bytes()))
}

// TestStreamKeepsTheAgentsOwnIDApartFromARename: the agent's own "a#2",
// started or ended while the rename "a#2" of its reused "a" is open, is
// another call. Before, its start was dropped as the open call announced
// again, and its end closed the rename; and the calls left open at the
// end were closed by their ids in the stream, which the agent's "a#2"
// names otherwise.
func TestStreamKeepsTheAgentsOwnIDApartFromARename(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		then []Body // while the rename is open
		want []string
	}{
		{"start and end", []Body{
			&ToolStart{CallID: "a#2", Name: "Bash", Kind: KindShell, Command: "own"},
			&ToolEnd{CallID: "a#2", Output: "own's"},
			&ToolEnd{CallID: "a", Output: "reuse's"},
		}, []string{"start a first", "end a  ok", "start a#2 reuse", "start a#2#2 own", "end a#2#2 own's ok", "end a#2 reuse's ok"}},
		{"an end with no start", []Body{
			&ToolEnd{CallID: "a#2", Output: "own's"},
			&ToolEnd{CallID: "a", Output: "reuse's"},
		}, []string{"start a first", "end a  ok", "start a#2 reuse", "start a#2#2 ", "end a#2#2 own's ok", "end a#2 reuse's ok"}},
		{"both left open", []Body{
			&ToolStart{CallID: "a#2", Name: "Bash", Kind: KindShell, Command: "own"},
		}, []string{"start a first", "end a  ok", "start a#2 reuse", "start a#2#2 own", "end a#2  cancelled", "end a#2#2  cancelled"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := newStream(t, false)
			bodies := []Body{
				&ToolStart{CallID: "a", Name: "Bash", Kind: KindShell, Command: "first"},
				&ToolEnd{CallID: "a"},
				&ToolStart{CallID: "a", Name: "Bash", Kind: KindShell, Command: "reuse"},
			}
			require.NoError(t, s.Emit(append(bodies, tc.then...)...))
			s.Finish(Outcome{Status: ResultSuccess})
			require.Equal(t, tc.want, callsOf(c.evs))
			require.NoError(t, CheckNDJSON(c.buf.Bytes()))
		})
	}
}

// TestStreamNamesTheParentByItsRename: a sub-agent's events name their
// task call as the stream does. Before, the children of a task call whose
// id the agent reused named the first call of that id, ended long before.
func TestStreamNamesTheParentByItsRename(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, false)
	require.NoError(t, s.Emit(
		&ToolStart{CallID: "t", Name: "Task", Kind: KindTask},
		&ToolEnd{CallID: "t"},
		&ToolStart{CallID: "t", Name: "Task", Kind: KindTask},
		&TextDelta{Text: "sub", ParentCallID: "t"},
		&ReasoningDelta{Text: "hm", ParentCallID: "t"},
		&Reasoning{Text: "hm", ParentCallID: "t"},
		&Message{Role: RoleAssistant, Text: "sub", ParentCallID: "t"},
		&ToolStart{CallID: "c", Name: "Bash", Kind: KindShell, ParentCallID: "t"},
		&ToolEnd{CallID: "c"},
		&ToolEnd{CallID: "t"},
		&Message{Role: RoleAssistant, Text: "other", ParentCallID: "u"},
		&Result{Status: ResultSuccess},
	))
	s.Finish(Outcome{Status: ResultSuccess})
	var parents []string
	for _, ev := range c.evs {
		switch b := ev.Body.(type) {
		case *TextDelta:
			parents = append(parents, "text_delta "+b.ParentCallID)
		case *ReasoningDelta:
			parents = append(parents, "reasoning_delta "+b.ParentCallID)
		case *Reasoning:
			parents = append(parents, "reasoning "+b.ParentCallID)
		case *Message:
			parents = append(parents, "message "+b.ParentCallID)
		case *ToolStart:
			parents = append(parents, "tool_start "+b.CallID+" "+b.ParentCallID)
		}
	}
	require.Equal(t, []string{"tool_start t ", "tool_start t#2 ", "text_delta t#2", "reasoning_delta t#2", "reasoning t#2",
		"message t#2", "tool_start c t#2", "message u"}, parents)
	require.NoError(t, CheckNDJSON(c.buf.Bytes()))
}

// callsOf lists the tool calls of evs: "start ID COMMAND" and
// "end ID OUTPUT STATUS".
func callsOf(evs []Event) []string {
	var calls []string
	for _, ev := range evs {
		switch b := ev.Body.(type) {
		case *ToolStart:
			calls = append(calls, "start "+b.CallID+" "+b.Command)
		case *ToolEnd:
			calls = append(calls, "end "+b.CallID+" "+b.Output+" "+string(b.Status))
		}
	}
	return calls
}

// FuzzStreamPairsCallsAsTheAgentDid: whatever ids an agent gives its
// calls, reusing them, or naming one as the stream renamed another, each
// end closes the call the agent opened with that id (or, with none open,
// a call of its own), and the stream holds its invariants. Each byte is a
// start (even) or an end (odd) of one of a few ids; a start's command and
// an end's output name the op, so that the model can follow the pairs.
func FuzzStreamPairsCallsAsTheAgentDid(f *testing.F) {
	f.Add([]byte{0, 2, 1, 0, 3, 1})
	f.Add([]byte{0, 1, 0, 2, 3, 1, 2})
	ids := []string{"a", "a#2", "a#3", "a#2#2", "b", ""}
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 64 {
			ops = ops[:64]
		}
		s, c := newStream(t, false)
		open := map[string]string{} // the agent's open calls: id -> the start's op
		var want []string           // "END-OP START-OP": the start each end closes
		for i, op := range ops {
			id, tag := ids[int(op>>1)%len(ids)], fmt.Sprint("op", i)
			key := cmp.Or(id, "call")
			if op&1 == 0 {
				if _, ok := open[key]; !ok {
					open[key] = tag
				}
				require.NoError(t, s.Emit(&ToolStart{CallID: id, Name: "Bash", Kind: KindShell, Command: tag}))
				continue
			}
			want = append(want, tag+" "+open[key]) // "" for an end with no start
			delete(open, key)
			require.NoError(t, s.Emit(&ToolEnd{CallID: id, Output: tag}))
		}
		s.Finish(Outcome{Status: ResultSuccess})
		require.NoError(t, CheckNDJSON(c.buf.Bytes()))
		startOf := map[string]string{} // stream id -> the start's op
		var got []string
		for _, ev := range c.evs {
			switch b := ev.Body.(type) {
			case *ToolStart:
				startOf[b.CallID] = b.Command
			case *ToolEnd:
				if !b.Synthetic {
					got = append(got, b.Output+" "+startOf[b.CallID])
				}
			}
		}
		require.Equal(t, want, got)
	})
}
