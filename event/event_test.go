package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"
)

const testRun = "run_01HARNESSTEST0000000000000"

// samples holds one fully populated body of every type.
func samples() []Body {
	return []Body{
		&SessionStart{Agent: "claude", AgentVersion: "2.1", Model: "m", SessionID: "s", Cwd: "/w", PID: 42, PTY: true, Argv: []string{"claude", "<prompt>"}, Tools: []string{"Bash"}},
		&TextDelta{Text: "hé\n\"<&>\u2028", MessageID: "msg_1"},
		&ReasoningDelta{Text: "think"},
		&Message{Role: RoleAssistant, Text: "done", MessageID: "msg_1"},
		&Reasoning{Text: "because"},
		&ToolStart{CallID: "c1", Name: "Bash", Kind: KindShell, Input: json.RawMessage(`{"command":"ls"}`), Command: "ls", Path: "a", Paths: []string{"a", "b"}},
		&ToolEnd{CallID: "c1", Name: "Bash", Kind: KindShell, Status: StatusError, Output: "x", ExitCode: Int(2), DurationMS: 5, Paths: []string{"a"}, Diff: "d"},
		&Usage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 4, ReasoningTokens: 1, CostUSD: 0.5, CostEstimated: true},
		&Warning{Code: WarnIdle, Message: "quiet", IdleMS: 10, AbortInMS: 5},
		&Error{Code: ErrIdleTimeout, Message: "idle", Fatal: true, Class: ClassNetwork, Killed: Bool(true), Signal: "SIGTERM", Hint: "h",
			Partial: &Partial{StderrTail: "e", LastEvents: []EventSummary{{Seq: 1, Type: TypeSessionStart, Summary: "x"}}, Events: 3, LastActivityMSAgo: 7}},
		&Result{Status: ResultSuccess, Text: "ok", SessionID: "s", DurationMS: 9, NumTurns: 2, Usage: Usage{InputTokens: 1}, CostUSD: Float(0.1), ExitCode: Int(0), Stats: Stats{NativeLines: 3, Events: 4}},
		&Native{Line: json.RawMessage(`{"a":1}`), Stream: StreamStdout},
		&TurnStart{TurnID: "turn_1", Prompt: "fix it", PromptTruncated: true},
		&TurnEnd{TurnID: "turn_1", Status: ResultCancelled, Text: "half", Usage: Usage{InputTokens: 3}, DurationMS: 4, Synthetic: true},
		&PermissionRequest{CallID: "c1", TurnID: "turn_1", Tool: "Bash", Kind: KindShell, Input: json.RawMessage(`{"command":"rm"}`), Command: "rm", DeadlineMS: 60000},
	}
}

func TestSamplesCoverEveryType(t *testing.T) {
	t.Parallel()
	seen := map[Type]bool{}
	for _, b := range samples() {
		seen[b.EventType()] = true
	}
	for _, tp := range Types {
		require.True(t, seen[tp], "no sample of %s", tp)
		require.True(t, tp.Valid())
		require.NotNil(t, NewBody(tp))
	}
	require.False(t, Type("nope").Valid())
	require.Nil(t, NewBody("nope"))
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for i, b := range samples() {
		t.Run(string(b.EventType()), func(t *testing.T) {
			t.Parallel()
			ev := Event{V: Version, Type: b.EventType(), Run: testRun, Seq: int64(i + 1), TS: 1000, Body: b}
			line, err := AppendJSON(nil, ev)
			require.NoError(t, err)
			require.True(t, json.Valid(line), "%s", line)
			got, err := Decode(line)
			require.NoError(t, err)
			require.Equal(t, ev, got)
			// The envelope comes first and the type matches.
			require.True(t, bytes.HasPrefix(line, []byte(`{"v":1,"type":"`+string(b.EventType())+`","run":"`)), "%s", line)
		})
	}
}

func TestOptionalFieldsOmitted(t *testing.T) {
	t.Parallel()
	line, err := AppendJSON(nil, Event{V: 1, Run: testRun, Seq: 1, Body: &ToolEnd{CallID: "c", Name: "n", Kind: KindRead, Status: StatusOK}})
	require.NoError(t, err)
	require.NotContains(t, string(line), "null")
	require.NotContains(t, string(line), "exit_code")
	require.Contains(t, string(line), `"duration_ms":0`)
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", "q\"b\\s", "\x00\x01\x1f\t\n\r", "ünïcødé 日本", "\u2028\u2029", "bad\xffutf8\xc3", "<html>&amp;", "\x7f"} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(s))
		require.Equal(t, strings.TrimSuffix(want.String(), "\n"), string(AppendString(nil, s)), "%q", s)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\xff", "\u2028", "日本", "12345678\n", "abcdefghi\x01", "abcdefg\xe6\x97",
		"abcdefgh\"ijklmnop\x1fqrs", "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x20", "\x80abcdefg", "ab\x1f\x20\x21\x22\x5b\x5c\x5d\xa0abc\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Byte for byte what encoding/json writes without HTML escaping.
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(s))
		require.Equal(t, strings.TrimSuffix(want.String(), "\n"), string(AppendString([]byte("x"), s))[1:], "%q", s)
	})
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{``, `{`, `[]`, `{"type":"nope"}`, `{"type":"text_delta","text":5}`} {
		_, err := Decode([]byte(in))
		require.Error(t, err, in)
	}
}

type collector struct {
	mu  sync.Mutex
	buf bytes.Buffer
	enc *Encoder
	evs []Event
}

func newStream(t *testing.T, raw bool) (*Stream, *collector) {
	t.Helper()
	c := &collector{}
	c.enc = NewEncoder(&c.buf)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := NewStream(StreamConfig{
		Run: testRun, Raw: raw,
		Now:   func() time.Time { clock = clock.Add(time.Millisecond); return clock },
		Start: SessionStart{Agent: "fake", Cwd: "/work", Argv: []string{"fake", "<prompt>"}},
		Sink: func(ev Event) {
			c.evs = append(c.evs, ev)
			require.NoError(t, c.enc.Encode(ev))
		},
	})
	return s, c
}

func (c *collector) types() []Type {
	out := make([]Type, len(c.evs))
	for i, ev := range c.evs {
		out[i] = ev.Type
	}
	return out
}

func TestStreamSynthesizesSessionStartAndResult(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, false)
	require.NoError(t, s.Emit(&TextDelta{Text: "hi"}))
	r := s.Finish(Outcome{NoProcess: true})
	require.Equal(t, []Type{TypeSessionStart, TypeTextDelta, TypeError, TypeResult}, c.types())
	require.Equal(t, ResultError, r.Status, "no terminal event: error")
	require.Equal(t, CodeNoTerminalEvent, c.evs[2].Body.(*Error).Code)
	require.Empty(t, r.Text, "the deltas of a run cut off are not an answer")
	ss := c.evs[0].Body.(*SessionStart)
	require.Equal(t, "fake", ss.Agent)
	require.Equal(t, []string{"fake", "<prompt>"}, ss.Argv)
	require.NoError(t, CheckNDJSON(c.buf.Bytes()))
	require.ErrorIs(t, s.Emit(&TextDelta{Text: "late"}), ErrFinished)
	require.Same(t, r, s.Finish(Outcome{}), "Finish is idempotent")
}

func TestStreamMergesAgentSessionStart(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, true)
	require.NoError(t, s.Line(StreamStdout, []byte(`{"init":1}`), false,
		[]Body{&SessionStart{Agent: "ignored", Model: "m1", SessionID: "sid", Tools: []string{"Bash"}, Cwd: "/elsewhere"}}))
	require.NoError(t, s.Emit(&SessionStart{SessionID: "other"}))
	require.NoError(t, s.Line(StreamStdout, []byte(`not json`), true, nil))
	require.NoError(t, s.Emit(&Result{Status: ResultSuccess, Text: "done"}))
	r := s.Finish(Outcome{ExitCode: Int(0)})
	require.Equal(t, []Type{TypeSessionStart, TypeNative, TypeNative, TypeWarning, TypeResult}, c.types())
	require.Equal(t, "not json", c.evs[3].Body.(*Warning).Line)
	ss := c.evs[0].Body.(*SessionStart)
	require.Equal(t, "fake", ss.Agent, "the harness's canonical agent id wins")
	require.Equal(t, "/work", ss.Cwd)
	require.Equal(t, "m1", ss.Model)
	require.Equal(t, "sid", ss.SessionID)
	require.Equal(t, `{"init":1}`, string(c.evs[1].Body.(*Native).Line))
	require.Equal(t, `"not json"`, string(c.evs[2].Body.(*Native).Line))
	require.Equal(t, ResultSuccess, r.Status)
	require.Equal(t, "sid", r.SessionID)
	require.Equal(t, Stats{NativeLines: 2, UnparsedLines: 1, Events: 3}, r.Stats, "native events not counted")
	require.NoError(t, CheckNDJSON(c.buf.Bytes()))
}

func TestStreamToolPairing(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, false)
	require.NoError(t, s.Emit(
		&ToolStart{CallID: "a", Name: "Bash", Kind: KindShell, Command: "ls"},
		&ToolStart{CallID: "a", Name: "Bash", Kind: KindShell}, // repeated: dropped
		&ToolEnd{CallID: "a", Status: StatusOK},
		&ToolStart{CallID: "a", Name: "Bash", Kind: KindShell}, // id reused after close: renamed
		&ToolEnd{CallID: "orphan", Name: "Read", Kind: KindRead},
		&ToolStart{CallID: "open", Name: "Edit", Kind: "bogus"},
	))
	require.NoError(t, s.Emit(&Result{Status: ResultSuccess}))
	r := s.Finish(Outcome{ToolStatus: StatusTimeout, Status: ResultTimeout})
	require.NoError(t, CheckNDJSON(c.buf.Bytes()))
	var ends []*ToolEnd
	var starts []*ToolStart
	for _, ev := range c.evs {
		switch b := ev.Body.(type) {
		case *ToolEnd:
			ends = append(ends, b)
		case *ToolStart:
			starts = append(starts, b)
		}
	}
	require.Len(t, starts, 4)
	require.Equal(t, "a#2", starts[1].CallID)
	require.Equal(t, "{}", string(starts[1].Input))
	require.Equal(t, KindOther, starts[3].Kind)
	require.Equal(t, "Bash", ends[0].Name, "tool_end gets the name from its start")
	require.Equal(t, "orphan", starts[2].CallID, "an end without start gets a start")
	require.Len(t, ends, 4)
	require.True(t, ends[2].Synthetic)
	require.Equal(t, StatusTimeout, ends[2].Status)
	require.Equal(t, int64(4), r.Stats.ToolCalls)
	require.Equal(t, ResultTimeout, r.Status)
}

func TestStreamUsageAndStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		agent  *Result
		fatal  bool
		out    Outcome
		status string
	}{
		{"success", &Result{Status: ResultSuccess}, false, Outcome{ExitCode: Int(0)}, ResultSuccess},
		{"agent-error", &Result{Status: ResultError}, false, Outcome{ExitCode: Int(0)}, ResultError},
		{"nonzero-exit", &Result{Status: ResultSuccess}, false, Outcome{ExitCode: Int(1)}, ResultError},
		{"signal", &Result{Status: ResultSuccess}, false, Outcome{Signal: "SIGKILL"}, ResultError},
		{"lingered", &Result{Status: ResultSuccess}, false, Outcome{Lingered: true, Signal: "SIGTERM"}, ResultSuccess},
		{"parse-ignores-exit", &Result{Status: ResultSuccess}, false, Outcome{NoProcess: true}, ResultSuccess},
		{"fatal", &Result{Status: ResultSuccess}, true, Outcome{ExitCode: Int(0)}, ResultError},
		{"forced", &Result{Status: ResultSuccess}, false, Outcome{Status: ResultCancelled}, ResultCancelled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, c := newStream(t, false)
			require.NoError(t, s.Emit(&Usage{InputTokens: 10, CostUSD: 0.25, CostEstimated: true}, &Usage{OutputTokens: 5}))
			if tc.fatal {
				require.NoError(t, s.Emit(&Error{Code: ErrProcessExit, Message: "x", Fatal: true, Partial: &Partial{}}))
			}
			require.NoError(t, s.Emit(tc.agent))
			r := s.Finish(tc.out)
			require.Equal(t, tc.status, r.Status)
			require.Equal(t, Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.25, CostEstimated: true}, r.Usage)
			require.True(t, r.CostEstimated)
			require.NoError(t, CheckNDJSON(c.buf.Bytes()))
			if tc.fatal {
				p := c.evs[len(c.evs)-2].Body.(*Error).Partial
				require.Equal(t, int64(3), p.Events)
				require.Len(t, p.LastEvents, 3)
			}
		})
	}
}

func TestStreamAgentTotalsWin(t *testing.T) {
	t.Parallel()
	s, _ := newStream(t, false)
	require.NoError(t, s.Emit(&Usage{InputTokens: 1}, &Result{Status: ResultSuccess, Usage: Usage{InputTokens: 7, OutputTokens: 3}, CostUSD: Float(0.01), DurationMS: 1234}))
	r := s.Finish(Outcome{NoProcess: true})
	require.Equal(t, int64(7), r.Usage.InputTokens)
	require.Equal(t, 0.01, *r.CostUSD)
	require.Equal(t, int64(1234), r.DurationMS, "parse reports the agent's own duration")
}

func TestStreamCapsLongFields(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, true)
	big := strings.Repeat("é", MaxLineBytes)
	require.NoError(t, s.Emit(&Message{Role: RoleAssistant, Text: big}))
	require.NoError(t, s.Emit(&ToolStart{CallID: "c", Name: "Bash", Kind: KindShell, Command: big, Input: json.RawMessage(`{"x":"` + big + `"}`)}))
	require.NoError(t, s.Emit(&ToolEnd{CallID: "c", Output: big, Diff: big}))
	require.NoError(t, s.Line(StreamStdout, []byte(big), true, nil))
	s.Finish(Outcome{NoProcess: true})
	require.NoError(t, CheckNDJSON(c.buf.Bytes()))
	require.True(t, c.evs[1].Body.(*Message).Truncated)
	require.True(t, c.evs[2].Body.(*ToolStart).InputTruncated)
	require.True(t, c.evs[3].Body.(*ToolEnd).OutputTruncated)
	require.True(t, c.evs[4].Body.(*Native).Truncated)
}

func TestStreamConcurrentEmit(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, false)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				id := fmt.Sprintf("g%d-%d", g, i)
				_ = s.Emit(&ToolStart{CallID: id, Name: "t", Kind: KindOther}, &Warning{Code: WarnIdle, Message: "x"}, &ToolEnd{CallID: id})
			}
		})
	}
	wg.Wait()
	s.Finish(Outcome{Status: ResultCancelled})
	require.NoError(t, CheckNDJSON(c.buf.Bytes()))
	require.Len(t, c.evs, 1+8*100*3+1)
}

func TestCheckFindsViolations(t *testing.T) {
	t.Parallel()
	ev := func(seq int64, b Body) Event {
		return Event{V: 1, Type: b.EventType(), Run: testRun, Seq: seq, TS: 1, Body: b}
	}
	start := &SessionStart{Agent: "a", Argv: []string{}}
	result := &Result{Status: ResultSuccess}
	cases := map[string][]Event{
		"no-session-start":    {ev(1, &TextDelta{}), ev(2, result)},
		"no-result":           {ev(1, start), ev(2, &TextDelta{})},
		"seq-gap":             {ev(1, start), ev(3, result)},
		"two-results":         {ev(1, start), ev(2, result), ev(3, result)},
		"unclosed-tool":       {ev(1, start), ev(2, &ToolStart{CallID: "c", Name: "n", Kind: KindRead, Input: json.RawMessage("{}")}), ev(3, result)},
		"end-without-start":   {ev(1, start), ev(2, &ToolEnd{CallID: "c", Name: "n", Kind: KindRead, Status: StatusOK}), ev(3, result)},
		"timeout-not-timeout": {ev(1, start), ev(2, &Error{Code: ErrIdleTimeout, Fatal: true, Partial: &Partial{}}), ev(3, result)},
		"bad-run-id":          {{V: 1, Type: TypeSessionStart, Run: "run_x", Seq: 1, Body: start}, ev(2, result)},
		"ts-backwards":        {{V: 1, Type: TypeSessionStart, Run: testRun, Seq: 1, TS: 5, Body: start}, ev(2, result)},
		"fatal-no-partial":    {ev(1, start), ev(2, &Error{Code: ErrProcessExit, Fatal: true}), ev(3, result)},
	}
	for name, evs := range cases {
		require.Error(t, Check(evs), name)
	}
	require.Error(t, CheckNDJSON([]byte("{}\n")))
	require.Error(t, CheckNDJSON([]byte("")))
}

func TestNewRunID(t *testing.T) {
	t.Parallel()
	a, b := NewRunID(), NewRunID()
	require.NotEqual(t, a, b)
	require.Regexp(t, runIDPattern(), a)
}

func BenchmarkEncodeTextDelta(b *testing.B) {
	enc := NewEncoder(io.Discard)
	ev := Event{V: 1, Run: testRun, Seq: 1, TS: 1, Body: &TextDelta{Text: "some streamed text, a few words", MessageID: "msg_01ABC"}}
	b.ReportAllocs()
	for b.Loop() {
		_ = enc.Encode(ev)
	}
}

func BenchmarkEncodeToolEnd(b *testing.B) {
	enc := NewEncoder(io.Discard)
	ev := Event{V: 1, Run: testRun, Seq: 1, TS: 1, Body: &ToolEnd{CallID: "toolu_1", Name: "Bash", Kind: KindShell, Status: StatusOK, Output: strings.Repeat("out ", 100), ExitCode: Int(0), DurationMS: 12}}
	b.ReportAllocs()
	for b.Loop() {
		_ = enc.Encode(ev)
	}
}

func TestStreamOpenCalls(t *testing.T) {
	t.Parallel()
	s, _ := newStream(t, false)
	require.NoError(t, s.Emit(&ToolStart{CallID: "a", Name: "Bash", Kind: KindShell, Command: "sleep 9"}, &ToolStart{CallID: "b", Name: "Read", Kind: KindRead}, &ToolEnd{CallID: "b"}))
	open := s.OpenCalls()
	require.Len(t, open, 1)
	require.Equal(t, "sleep 9", open[0].Start.Command)
	require.False(t, open[0].Since.IsZero())
}

func TestStreamEmptyAndReusedCallIDs(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, false)
	require.NoError(t, s.Emit(&ToolEnd{CallID: ""}, &ToolStart{Name: "x"}, &ToolEnd{}))
	for range 3 {
		require.NoError(t, s.Emit(&ToolStart{CallID: "r", Name: "x"}, &ToolEnd{CallID: "r"}))
	}
	s.Finish(Outcome{Status: ResultCancelled})
	require.NoError(t, CheckNDJSON(c.buf.Bytes()))
	var ids []string
	for _, ev := range c.evs {
		if st, ok := ev.Body.(*ToolStart); ok {
			ids = append(ids, st.CallID)
		}
	}
	require.Equal(t, []string{"call", "call#2", "r", "r#2", "r#3"}, ids)
}

// TestHandEncodedMatchesReflection keeps the hand-written encoders of the
// hot types byte-identical to encoding/json's view of the same struct.
func TestHandEncodedMatchesReflection(t *testing.T) {
	t.Parallel()
	bodies := []Body{
		&TextDelta{Text: "a\"\n<é>"}, &TextDelta{Text: "x", MessageID: "m", ParentCallID: "p"}, &ReasoningDelta{Text: "r"}, &ReasoningDelta{Text: "r", ParentCallID: "p"},
		&Message{Role: RoleAssistant, Text: "t", ParentCallID: "toolu_1"},
		&Message{Role: RoleAssistant, Text: "t"}, &Message{Role: RoleUser, Text: "", MessageID: "m", Truncated: true},
		&Usage{}, &Usage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 4, ReasoningTokens: 5, CostUSD: 0.000125, CostEstimated: true},
		&Usage{CostUSD: 1e-9}, &Usage{CostUSD: 12345.5},
		&Reasoning{Text: "r"}, &Reasoning{Text: "r", ParentCallID: "p", Truncated: true},
		&ToolStart{CallID: "c", Name: "Bash", Kind: KindShell, Input: json.RawMessage(`{"command":"a && b <c>"}`), Command: "a && b <c>"},
		&ToolStart{CallID: "c", Name: "W", Kind: KindWrite, Input: json.RawMessage("{ \"x\" : [1, 2],\n \"u\":\"\\u003c\u2028\" }"), Path: "p", InputTruncated: true, ParentCallID: "t"},
		&ToolEnd{CallID: "c", Name: "n", Kind: KindEdit, Status: StatusError, Output: "o\x00\xff", OutputTruncated: true, ExitCode: Int(-1),
			DurationMS: 7, Synthetic: true, Paths: []string{"a", "b\"c"}, Diff: "--- a\n+++ b\n", DiffTruncated: true},
		&ToolEnd{CallID: "c", Name: "n", Kind: KindRead, Status: StatusOK},
		&Warning{Code: WarnIdle, Message: "m", IdleMS: 1, AbortInMS: 2, CallID: "c", Name: "n", ElapsedMS: 3, BudgetMS: 4, Bytes: 5, Line: "l", Truncated: true},
		&Warning{Code: WarnLineTruncated, Message: ""},
		&Error{Code: ErrAgentError, Message: "loop <detected>"}, &Error{Code: ErrAgentError, Message: "m\n", Fatal: true, Class: ClassOverloaded, Status: 503},
		&Error{Code: "c", Message: "", Killed: Bool(false), Signal: "SIGKILL", Hint: "h", ExitCode: Int(-1)}, &Error{Code: "c", Killed: Bool(true), ExitCode: Int(0)},
		&Error{Code: "c", Tried: []string{}}, &Error{Code: "c", Tried: []string{"/bin/x"}}, &Error{Code: "c", Fatal: true, Partial: &Partial{Events: 3}},
	}
	// A tool call's input after the Stream, which checked and compacted it.
	streamed := &ToolStart{CallID: "c", Name: "W", Kind: KindWrite, Input: json.RawMessage("{ \"x\" : [1, 2],\n \"u\":\"\\u003c\u2028 \\\" \" }")}
	require.NoError(t, NewStream(StreamConfig{Run: testRun}).Emit(streamed))
	require.True(t, streamed.inputCompact)
	bodies = append(bodies, streamed)
	var app Appender
	for _, b := range bodies {
		for _, v := range []int{1, 2} {
			ev := Event{V: v, Run: testRun, Seq: 3, TS: 4, Body: b}
			fast, err := AppendJSON(nil, ev)
			require.NoError(t, err)
			kept, err := app.Append(nil, ev)
			require.NoError(t, err)
			require.Equal(t, string(fast), string(kept), "an Appender writes what AppendJSON writes")
			slow, err := appendReflected(append([]byte(nil), fast[:bytes.Index(fast, []byte(`,"ts":4`))+len(`,"ts":4`)]...), b)
			require.NoError(t, err)
			require.JSONEq(t, string(slow), string(fast))
			require.Equal(t, string(slow), string(fast))
			want, err := json.Marshal(struct {
				V int `json:"v"`
			}{v})
			require.NoError(t, err)
			require.Equal(t, string(want[:len(want)-1]), string(fast[:len(want)-1]))
		}
	}
	for _, ev := range []Event{{V: 1, Run: "run_2", Seq: 1, TS: 99, Body: &Usage{}}, {V: 1, Run: "run_2", Seq: 2, TS: 100, Body: &Usage{}}} {
		kept, err := app.Append(nil, ev)
		require.NoError(t, err)
		fresh, err := AppendJSON(nil, ev)
		require.NoError(t, err)
		require.Equal(t, string(fresh), string(kept), "a new run id or timestamp is not taken from the memory")
	}
	// The seq is counted up from the one before, across every carry, and
	// formatted afresh when it does not follow it.
	seqs := []int64{1, 2, 3, 9, 10, 11, 7, 0, 1, -1, 0, 98, 99, 100, 101}
	for n := int64(995); n <= 10001; n++ {
		seqs = append(seqs, n)
	}
	for _, seq := range append(seqs, 5, 1<<62, 1<<62+1, 0, math.MaxInt64, math.MinInt64, math.MaxInt64, 1) {
		ev := Event{V: 1, Run: "run_2", Seq: seq, TS: 100, Body: &Usage{}}
		kept, err := app.Append(nil, ev)
		require.NoError(t, err)
		fresh, err := AppendJSON(nil, ev)
		require.NoError(t, err)
		require.Equal(t, string(fresh), string(kept))
	}
}

func TestSubAgentTextIsNotTheResult(t *testing.T) {
	t.Parallel()
	s, _ := newStream(t, false)
	require.NoError(t, s.Emit(&Message{Role: RoleAssistant, Text: "main answer"},
		&TextDelta{Text: "sub", ParentCallID: "task1"}, &Message{Role: RoleAssistant, Text: "sub answer", ParentCallID: "task1"},
		&Result{Status: ResultSuccess}))
	r := s.Finish(Outcome{NoProcess: true})
	require.Equal(t, "main answer", r.Text)
}

func FuzzAppendCompactJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a": [1, 2 ,3], "b" : "x y\t"}`, "{\"s\":\"\\\" \\\\\"}", `[1,`, `{"a":1}x`, "{\"u\":\"\xff\"}", `"\u2028 <&>"`, ` { } `, `{"a":1e5,"b":-0.5,"c":true,"d":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		old, oldOK := threePassCompactJSON(raw)
		if _, ok := compactJSON(raw); ok != oldOK {
			t.Fatalf("compactJSON(%q) ok = %v, the three passes said %v", raw, ok, oldOK)
		}
		out, ok := AppendCompactJSON([]byte("pre"), raw)
		if !ok {
			require.Equal(t, "pre", string(out), "dst unchanged on invalid input")
			return
		}
		got := out[3:]
		// The Stream's one-pass form gives the same bytes.
		same, sameOK := compactJSON(raw)
		require.True(t, sameOK)
		require.Equal(t, string(got), string(same))
		require.Equal(t, &same[0] == &raw[0], &old[0] == &raw[0], "raw itself exactly when the three passes gave it")
		require.True(t, json.Valid(got), "output must be valid JSON: %q -> %q", raw, got)
		require.True(t, utf8.Valid(got))
		if utf8.Valid(raw) {
			var want bytes.Buffer
			require.NoError(t, json.Compact(&want, raw), "gjson accepted what encoding/json rejects: %q", raw)
			require.Equal(t, want.String(), string(got))
		}
	})
}

// threePassCompactJSON is compactJSON as it was, three passes over raw
// (validate, check UTF-8, look for white space): the reference for its
// one pass.
func threePassCompactJSON(raw []byte) ([]byte, bool) {
	if !ValidJSON(raw) {
		return raw, false
	}
	if !utf8.Valid(raw) {
		raw = bytes.ToValidUTF8(raw, []byte("\uFFFD"))
	}
	if spaceAt(raw) < 0 {
		return raw, true
	}
	return appendCompactValid(nil, raw), true
}

// spaceAt returns the index of the first white space outside strings in
// the valid JSON raw, or -1.
func spaceAt(raw []byte) int {
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case ' ', '\t', '\r', '\n':
			return i
		case '"':
			i = stringEnd(raw, i+1) - 1
		}
	}
	return -1
}

func TestPlain8(t *testing.T) {
	t.Parallel()
	require.True(t, plain8("abcdefgh"))
	require.True(t, plain8(" ~!#$%&'"))
	for _, bad := range []string{"abc\"efgh", "abcdefg\\", "\x00bcdefgh", "abc\x1fefgh", "abcdefg\x7f"[:8], "abcdefg\xc3"} {
		if bad == "abcdefg\x7f"[:8] {
			require.True(t, plain8(bad), "0x7f needs no escape")
			continue
		}
		require.False(t, plain8(bad), "%q", bad)
	}
}

func BenchmarkAppendStringLong(b *testing.B) {
	benchAppendString(b, strings.Repeat("some tool output, mostly plain ASCII text; ", 100))
}

// BenchmarkAppendStringLines: multi-line text (tool output, diffs), where
// a byte to escape comes every few dozen bytes.
func BenchmarkAppendStringLines(b *testing.B) {
	benchAppendString(b, strings.Repeat("@@ -1,2 +1,2 @@\n-\told line\n+\t\"new\" line, a little longer\n", 60))
}

func benchAppendString(b *testing.B, s string) {
	buf := make([]byte, 0, 8192)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = AppendString(buf[:0], s)
	}
}

// nonNative returns the events of a stream without its native events,
// renumbered, as JSON lines without ts: what --raw must leave alone.
func nonNative(t *testing.T, evs []Event) []string {
	t.Helper()
	var out []string
	for _, ev := range evs {
		if ev.Type == TypeNative {
			continue
		}
		if r, ok := ev.Body.(*Result); ok {
			cp := *r
			cp.Stats.Events = 0
			ev.Body = &cp
		}
		ev.Seq, ev.TS = 0, 0
		var b bytes.Buffer
		require.NoError(t, NewEncoder(&b).Encode(ev))
		out = append(out, b.String())
	}
	return out
}

// TestRawChangesNothingElse: Gemini on a PTY prints a line the adapter
// does not understand before its init; with or without native events,
// the session_start is the agent's (its session id and model), and every
// other event is the same.
func TestRawChangesNothingElse(t *testing.T) {
	t.Parallel()
	lines := []struct {
		line     string
		unparsed bool
		bodies   func() []Body
	}{
		{"\x1b[?25l", true, func() []Body { return nil }},
		{`{"type":"init"}`, false, func() []Body { return []Body{&SessionStart{SessionID: "s1", Model: "gemini-x"}} }},
		{"noise", true, func() []Body { return nil }},
		{`{"type":"tool"}`, false, func() []Body {
			return []Body{&ToolStart{CallID: "c", Name: "run_shell_command", Kind: KindShell}, &ToolEnd{CallID: "c", Status: StatusOK}}
		}},
		{`{"type":"message"}`, false, func() []Body { return []Body{&Message{Role: RoleAssistant, Text: "done"}} }},
		{`{"type":"result"}`, false, func() []Body { return []Body{&Usage{InputTokens: 3}, &Result{Status: ResultSuccess}} }},
	}
	var got [2][]string
	for i, raw := range []bool{false, true} {
		s, c := newStream(t, raw)
		for _, l := range lines {
			require.NoError(t, s.Line(StreamStdout, []byte(l.line), l.unparsed, l.bodies()))
		}
		require.NoError(t, s.Line(StreamStderr, []byte("a warning"), false, nil))
		s.Finish(Outcome{ExitCode: Int(0)})
		require.NoError(t, CheckNDJSON(c.buf.Bytes()))
		ss := c.evs[0].Body.(*SessionStart)
		require.Equal(t, "s1", ss.SessionID, "raw=%v", raw)
		require.Equal(t, "gemini-x", ss.Model, "raw=%v", raw)
		got[i] = nonNative(t, c.evs)
	}
	require.Equal(t, got[0], got[1])
}

// TestRawKeepsLastEvents: a fatal error's last_events are the last
// normalized events, with or without --raw: native events (one a line)
// pushed the real ones out of them.
func TestRawKeepsLastEvents(t *testing.T) {
	t.Parallel()
	var last [2][]string
	for i, raw := range []bool{false, true} {
		s, _ := newStream(t, raw)
		require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"init"}`), false, []Body{&SessionStart{SessionID: "s1"}}))
		for n := range lastEventsKept + 2 {
			require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"text"}`), false, []Body{&TextDelta{Text: strconv.Itoa(n)}}))
			require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"ping"}`), false, nil))
		}
		e := &Error{Code: ErrProcessExit, Message: "x", Fatal: true, Partial: &Partial{}}
		require.NoError(t, s.Emit(e))
		for _, l := range e.Partial.LastEvents {
			last[i] = append(last[i], string(l.Type)+" "+l.Summary)
		}
	}
	require.Len(t, last[0], lastEventsKept)
	require.Equal(t, last[0], last[1])
}

// TestUsageNeverNegativeNorWrapped: a negative count an agent reports
// (garbage) counts as 0, with a warning, and sums past the largest int64
// stay there: the schema's minimum 0 holds for every event and the result.
func TestUsageNeverNegativeNorWrapped(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, false)
	require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"init"}`), false, []Body{&SessionStart{SessionID: "s1"}}))
	for _, u := range []Usage{{InputTokens: -7, OutputTokens: 5, CostUSD: -1}, {InputTokens: math.MaxInt64 - 1}, {InputTokens: 10}} {
		require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"usage"}`), false, []Body{&u}))
	}
	require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"result"}`), false,
		[]Body{&Result{Status: ResultSuccess, Usage: Usage{OutputTokens: -3}}}))
	r := s.Finish(Outcome{NoProcess: true})
	require.NoError(t, CheckNDJSON(c.buf.Bytes()))
	require.Equal(t, Usage{InputTokens: math.MaxInt64, OutputTokens: 5}, r.Usage)
	warnings := 0
	for _, ev := range c.evs {
		switch b := ev.Body.(type) {
		case *Usage:
			require.True(t, b.InputTokens >= 0 && b.OutputTokens >= 0 && b.CostUSD >= 0, "%+v", b)
		case *Warning:
			require.Equal(t, WarnUsageMismatch, b.Code)
			warnings++
		}
	}
	require.Equal(t, 2, warnings, "one for the usage event, one for the result's totals")
}

// TestGarbageWarnedOnceALine: one native line whose garbage count feeds
// both a usage event and the terminal report (Codex's turn.completed)
// makes one warning, not one for each.
func TestGarbageWarnedOnceALine(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, false)
	require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"turn.completed"}`), false,
		[]Body{&Usage{OutputTokens: -50}, &Result{Status: ResultSuccess, Usage: Usage{OutputTokens: -50}}}))
	s.Finish(Outcome{NoProcess: true})
	warns := 0
	for _, ev := range c.evs {
		if _, ok := ev.Body.(*Warning); ok {
			warns++
		}
	}
	require.Equal(t, 1, warns)
}

// TestCostNeverGarbageNorInfinite: a cost an agent reports that is no
// cost (negative, NaN, infinite), in a usage event or its terminal
// report, counts as 0 with a warning, and costs whose sum passes the
// largest float64 stay there: every line stays JSON and the result is
// last. An infinite cost made an invalid line, then lost the result.
func TestCostNeverGarbageNorInfinite(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		usages []float64
		result *float64
		want   float64
		warns  int
	}{
		{"infinite usage", []float64{0.5, math.Inf(1)}, nil, 0.5, 1},
		{"NaN usage", []float64{math.NaN(), 0.25}, nil, 0.25, 1},
		{"sum past the largest", []float64{1e308, 1e308}, nil, math.MaxFloat64, 0},
		{"negative result cost", []float64{0.5}, Float(-0.5), 0, 1},
		{"infinite result cost", []float64{0.5}, Float(math.Inf(1)), 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, cap := newStream(t, false)
			require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"init"}`), false, []Body{&SessionStart{SessionID: "s1"}}))
			for _, cost := range c.usages {
				require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"usage"}`), false, []Body{&Usage{OutputTokens: 1, CostUSD: cost}}))
			}
			require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"result"}`), false,
				[]Body{&Result{Status: ResultSuccess, CostUSD: c.result}}))
			r := s.Finish(Outcome{NoProcess: true})
			require.NoError(t, CheckNDJSON(cap.buf.Bytes()), "%s", cap.buf.Bytes())
			require.Equal(t, c.want, r.Usage.CostUSD)
			warns := 0
			for _, ev := range cap.evs {
				if w, ok := ev.Body.(*Warning); ok {
					require.Equal(t, WarnUsageMismatch, w.Code)
					warns++
				}
			}
			require.Equal(t, c.warns, warns)
		})
	}
}

// TestCostsAddAsDecimals: the costs of a run's steps add up to the
// decimal total of what the agent wrote, in the stream and in its
// result, not to the binary sum's 0.30000000000000004.
func TestCostsAddAsDecimals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		costs []float64
		want  string
	}{
		{[]float64{0.1, 0.2}, "0.3"},
		{[]float64{0.1, 0.2, 0.3}, "0.6"},
		{[]float64{0.0012, 0.00034, 1.5e-7}, "0.00154015"},
		{[]float64{1e300, 1e-300}, "1e+300"}, // too far apart for 18 digits: the binary sum
		{[]float64{0.000525, 0.0123456789012}, "0.0128706789012"},
	} {
		var u Usage
		for _, cost := range c.costs {
			u.Add(Usage{CostUSD: cost})
		}
		require.Equal(t, c.want, strconv.FormatFloat(u.CostUSD, 'g', -1, 64), "%v", c.costs)

		s, cap := newStream(t, false)
		for _, cost := range c.costs {
			require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"usage"}`), false, []Body{&Usage{OutputTokens: 1, CostUSD: cost}}))
		}
		r := s.Finish(Outcome{NoProcess: true})
		require.Equal(t, u.CostUSD, r.Usage.CostUSD)
		require.NoError(t, CheckNDJSON(cap.buf.Bytes()), "%s", cap.buf.Bytes())
	}

	// Against exact rational arithmetic: the sum of two decimals of up to
	// 6 digits, their points up to 12 places apart (18 digits aligned), is
	// the float64 nearest to their exact sum.
	rng := rand.New(rand.NewPCG(1, 2))
	decimal := func() string { return fmt.Sprintf("%de-%d", rng.Int64N(1e6)+1, rng.IntN(13)) }
	for range 20000 {
		x, y := decimal(), decimal()
		var rx, ry big.Rat
		rx.SetString(x)
		ry.SetString(y)
		want, _ := rx.Add(&rx, &ry).Float64()
		var u Usage
		fx, _ := strconv.ParseFloat(x, 64)
		fy, _ := strconv.ParseFloat(y, 64)
		u.Add(Usage{CostUSD: fx})
		u.Add(Usage{CostUSD: fy})
		require.Equal(t, want, u.CostUSD, "%s + %s", x, y)
	}
}

// TestNativeDurationOfZeroKept: a duration the agent's own clock gives
// (DurationNative) is kept when it is 0, for a tool call as for the run
// in parse: the call's start and end, or the run's lines, carried the
// same millisecond. The stream's clock (here a millisecond a call) took
// its place, and harness parse of the same capture gave another number
// each time.
func TestNativeDurationOfZeroKept(t *testing.T) {
	t.Parallel()
	for _, native := range []bool{true, false} {
		s, c := newStream(t, false)
		require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"init"}`), false, []Body{&SessionStart{SessionID: "s1"}}))
		require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"tool"}`), false, []Body{&ToolStart{CallID: "c1", Name: "bash"}}))
		require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"tool"}`), false, []Body{&ToolEnd{CallID: "c1", DurationNative: native}}))
		require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"result"}`), false,
			[]Body{&Result{Status: ResultSuccess, DurationNative: native}}))
		r := s.Finish(Outcome{NoProcess: true})
		end := c.evs[len(c.evs)-2].Body.(*ToolEnd)
		if native {
			require.Zero(t, end.DurationMS)
			require.Zero(t, r.DurationMS)
		} else { // no native clock: the stream's
			require.Positive(t, end.DurationMS)
			require.Positive(t, r.DurationMS)
		}
	}
}

// TestEmptyUnparsedLineWarned: the warning of an empty unparsed line has
// its line and bytes, "" and 0, as every unparsed line's warning has;
// both were left out as empty.
func TestEmptyUnparsedLineWarned(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, false)
	require.NoError(t, s.Line(StreamStdout, nil, true, nil))
	s.Finish(Outcome{NoProcess: true})
	require.NoError(t, CheckNDJSON(c.buf.Bytes()))
	require.Contains(t, c.buf.String(), `"code":"unparsed_line","message":"a line of the agent's output was not understood","bytes":0,"line":""`)
}

func TestUnparsedLinesWarnRateLimited(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, false)
	for i := range UnparsedWarnings + 15 {
		require.NoError(t, s.Line(StreamStdout, []byte(fmt.Sprintf("garbage %d %s", i, strings.Repeat("x", 300))), true, nil))
	}
	require.NoError(t, s.Line(StreamStdout, []byte(`{"ok":1}`), false, nil))
	r := s.Finish(Outcome{NoProcess: true})
	require.NoError(t, CheckNDJSON(c.buf.Bytes()))
	var warns []*Warning
	for _, ev := range c.evs {
		if w, ok := ev.Body.(*Warning); ok {
			require.Equal(t, WarnUnparsedLine, w.Code)
			warns = append(warns, w)
		}
	}
	require.Len(t, warns, UnparsedWarnings+1)
	require.True(t, strings.HasPrefix(warns[0].Line, "garbage 0 xxx"))
	require.True(t, warns[0].Truncated)
	require.LessOrEqual(t, len(warns[0].Line), 200)
	require.Equal(t, int64(310), warns[0].Bytes)
	require.Contains(t, warns[UnparsedWarnings].Message, "15 more unparsed lines")
	require.Equal(t, int64(UnparsedWarnings+15), r.Stats.UnparsedLines)
}

// FuzzPreview: an unparsed line's preview, made from the line's first
// bytes, is what cutting the whole line made valid UTF-8 gives.
func FuzzPreview(f *testing.F) {
	for _, s := range []string{"", "abc", "\xff\xfe\xfd", "ab\xffcd", "日本語", "\uFFFD", "\xe6\x97", strings.Repeat("é", 120),
		strings.Repeat("x", 199) + "\xff" + "y", strings.Repeat("x", 198) + "日", strings.Repeat("\xff", 500) + "tail"} {
		f.Add(s, 200)
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1000 {
			return
		}
		line, cut := preview([]byte(s), n)
		wantLine, wantCut := Cut(strings.ToValidUTF8(s, "\uFFFD"), n)
		require.Equal(t, wantLine, line, "%q %d", s, n)
		require.Equal(t, wantCut, cut, "%q %d", s, n)
	})
}

// TestUnfinishedRunText: the result of a run without the agent's terminal
// event holds its last complete answer, never commentary before a tool
// call nor text that never completed.
func TestUnfinishedRunText(t *testing.T) {
	t.Parallel()
	say := func(text string) Body { return &Message{Role: RoleAssistant, Text: text} }
	tool := func(id string) []Body {
		return []Body{&ToolStart{CallID: id, Name: "Bash", Kind: KindShell}, &ToolEnd{CallID: id, Status: StatusOK}}
	}
	cases := map[string]struct {
		bodies []Body
		want   string
	}{
		"commentary-then-killed-in-tool": {[]Body{say("Let me run the tests."), &ToolStart{CallID: "c", Name: "Bash", Kind: KindShell}}, ""},
		"commentary-tool-then-killed":    {append([]Body{say("Let me look.")}, tool("c")...), ""},
		"answer-after-tool":              {append(append([]Body{say("Let me look.")}, tool("c")...), say("All green.")), "All green."},
		"half-said":                      {[]Body{&TextDelta{Text: "The answer is"}}, ""},
		"answer-then-half-said":          {[]Body{say("First answer."), &TextDelta{Text: "And also"}}, "First answer."},
		"sub-agent-tool-keeps-answer":    {[]Body{say("Answer."), &ToolStart{CallID: "s", Name: "Read", Kind: KindRead, ParentCallID: "task"}}, "Answer."},
	}
	for name, tc := range cases {
		s, _ := newStream(t, false)
		require.NoError(t, s.Emit(tc.bodies...))
		r := s.Finish(Outcome{Status: ResultTimeout, ToolStatus: StatusTimeout})
		require.Equal(t, tc.want, r.Text, name)
	}
	// An agent that finished and streamed its answer only as deltas.
	s, _ := newStream(t, false)
	require.NoError(t, s.Emit(&TextDelta{Text: "Done"}, &TextDelta{Text: "."}, &Result{Status: ResultSuccess}))
	require.Equal(t, "Done.", s.Finish(Outcome{NoProcess: true}).Text)
}

// ulidString is oklog/ulid's encoding (harness's run ids came from it).
func TestULIDString(t *testing.T) {
	t.Parallel()
	for _, ms := range []uint64{0, 1, 1764054000123, 1<<48 - 1} {
		for _, entropy := range [][10]byte{{}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}} {
			want := ulid.MustNew(ms, bytes.NewReader(entropy[:])).String()
			require.Equal(t, want, ulidString(ms, entropy), "ms %d entropy %x", ms, entropy)
		}
	}
	// Later ids sort after earlier ones.
	require.Less(t, ulidString(1764054000123, [10]byte{0xff}), ulidString(1764054000124, [10]byte{}))
}

// TestResultTextCutIsSaid: a result whose text was cut to the limit
// before the stream saw it (an adapter that cuts it: OpenCode, Gemini),
// or taken from a message the stream cut, says so; the stream's own cap
// then sees a text within the limit. Before, such a result had the cut
// text and no text_truncated. A text taken after the cut one is not cut.
func TestResultTextCutIsSaid(t *testing.T) {
	t.Parallel()
	exact := strings.Repeat("a", MaxTextBytes)
	s, _ := newStream(t, true)
	require.NoError(t, s.Emit(&Result{Status: ResultSuccess, Text: exact, TextTruncated: true}))
	r := s.Finish(Outcome{NoProcess: true})
	require.Equal(t, exact, r.Text)
	require.True(t, r.TextTruncated, "the adapter's cut")

	s, _ = newStream(t, true)
	require.NoError(t, s.Emit(&Message{Role: RoleAssistant, Text: exact + "b"}))
	require.NoError(t, s.Emit(&Result{Status: ResultSuccess}))
	r = s.Finish(Outcome{NoProcess: true})
	require.Len(t, r.Text, MaxTextBytes)
	require.True(t, r.TextTruncated, "the message's cut")

	s, _ = newStream(t, true)
	require.NoError(t, s.Emit(&Message{Role: RoleAssistant, Text: exact + "b"}))
	require.NoError(t, s.Emit(&ToolStart{CallID: "c", Name: "Bash", Kind: KindShell, Input: json.RawMessage(`{}`)}, &ToolEnd{CallID: "c"}))
	require.NoError(t, s.Emit(&TextDelta{Text: "short"}))
	require.NoError(t, s.Emit(&Result{Status: ResultSuccess}))
	r = s.Finish(Outcome{NoProcess: true})
	require.Equal(t, "short", r.Text)
	require.False(t, r.TextTruncated)
}
