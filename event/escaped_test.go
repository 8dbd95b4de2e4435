package event

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Texts of control characters, each 6 bytes escaped (\u0001): cut by
// their escaped size too, so that no line passes MaxLineBytes — a
// prompt, a message, a reasoning, the agent's result text, a turn's
// answer, a native line kept as a string — with the cut marked as
// before; a delta too long for a line is sent in parts that concatenate
// to it. (Cut at 256 KiB of raw bytes only, the lines were 1.2 to 1.6
// MB.)
func TestStreamCutsByEscapedSize(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, true)
	ctl := func(n int) string { return strings.Repeat("\x01", n) }
	delta, reasoning := ctl(200000)+"é"+ctl(200000), ctl(300000)
	require.NoError(t, s.Emit(&TurnStart{Prompt: ctl(300000)}))
	require.NoError(t, s.Line(StreamStdout, []byte(ctl(MaxNativeBytes)), true, []Body{
		&TextDelta{Text: delta},
		&ReasoningDelta{Text: reasoning},
		&Reasoning{Text: ctl(200000)},
		&Message{Role: RoleAssistant, Text: ctl(200000)},
		&TurnEnd{Status: ResultSuccess},
		&Result{Status: ResultSuccess, Text: ctl(200000)},
	}))
	s.Finish(Outcome{NoProcess: true})
	require.NoError(t, CheckNDJSON(c.buf.Bytes()))
	for _, line := range bytes.Split(c.buf.Bytes(), []byte("\n")) {
		require.LessOrEqual(t, len(line), MaxLineBytes)
	}
	var deltas, reasonings strings.Builder
	nDeltas := 0
	for _, ev := range c.evs {
		switch b := ev.Body.(type) {
		case *TurnStart:
			require.True(t, b.PromptTruncated)
			require.Equal(t, ctl(maxTextEscaped/6), b.Prompt)
		case *TextDelta:
			deltas.WriteString(b.Text)
			nDeltas++
		case *ReasoningDelta:
			reasonings.WriteString(b.Text)
		case *Reasoning:
			require.True(t, b.Truncated)
		case *Message:
			require.True(t, b.Truncated)
			require.Equal(t, ctl(maxTextEscaped/6), b.Text)
		case *TurnEnd:
			require.True(t, b.TextTruncated)
			require.NotEmpty(t, b.Text)
		case *Result:
			require.True(t, b.TextTruncated)
		case *Native:
			require.True(t, b.Truncated)
		}
	}
	require.Equal(t, delta, deltas.String(), "the parts of a delta concatenate to it")
	require.Greater(t, nDeltas, 1)
	require.Equal(t, reasoning, reasonings.String())

	// A text within both bounds is left alone, whatever its size.
	for _, text := range []string{strings.Repeat("a", MaxTextBytes), ctl(maxTextEscaped / 6)} {
		text2 := text
		cut := false
		s.capText(&text2, &cut)
		require.False(t, cut)
		require.Equal(t, len(text), len(text2))
	}
}

// escapedFit agrees with AppendString on every kind of byte, and never
// cuts a rune.
func TestEscapedFit(t *testing.T) {
	t.Parallel()
	text := "a\"\\\n\x01é\u2028\xff€x"
	for max := 0; max <= 40; max++ {
		n := escapedFit(text, max)
		require.LessOrEqual(t, len(AppendString(nil, text[:n]))-2, max, max)
		if n < len(text) {
			next := n + 1
			for next < len(text) && text[next]&0xC0 == 0x80 && text[n] >= 0xC0 {
				next++
			}
			require.Greater(t, len(AppendString(nil, text[:next]))-2, max, "the longest prefix (%d)", max)
		}
	}
}

// --raw adds native events and changes nothing else: stats.events and a
// fatal error's partial.events count the other events only, so the
// result is the same with and without it. (They counted the native
// events too: codex --mock text had events 4, and 9 with --raw.)
func TestRawChangesNoCounts(t *testing.T) {
	t.Parallel()
	var results []*Result
	var partials []*Partial
	for _, raw := range []bool{false, true} {
		s, c := newStream(t, raw)
		require.NoError(t, s.Line(StreamStdout, []byte(`{"init":1}`), false, []Body{&SessionStart{SessionID: "sid"}}))
		require.NoError(t, s.Line(StreamStdout, []byte(`{"text":1}`), false, []Body{&Message{Role: RoleAssistant, Text: "hi"}}))
		require.NoError(t, s.Line(StreamStdout, []byte(`{"usage":1}`), false, []Body{&Usage{InputTokens: 3}}))
		require.NoError(t, s.Line(StreamStderr, []byte(`boom`), false, []Body{&Error{Code: ErrProcessExit, Message: "x", Fatal: true, Partial: &Partial{}}}))
		r := s.Finish(Outcome{ExitCode: Int(1)})
		require.NoError(t, CheckNDJSON(c.buf.Bytes()))
		for _, ev := range c.evs {
			if e, ok := ev.Body.(*Error); ok {
				partials = append(partials, e.Partial)
			}
		}
		r.DurationMS = 0
		results = append(results, r)
	}
	require.Equal(t, int64(5), results[0].Stats.Events)
	require.Equal(t, results[0], results[1])
	require.Equal(t, int64(3), partials[0].Events, "the events before it")
	require.Equal(t, partials[0].Events, partials[1].Events)
}

// TestPathsAreBoundedTogether: a call's paths stay under a line's 1 MiB
// however long each is (a thousand of 4 KiB of control characters made a
// 24 MB line), cut at the first that does not fit, never mid-path.
func TestPathsAreBoundedTogether(t *testing.T) {
	long := strings.Repeat("\x01", MaxFieldBytes)
	paths := make([]string, MaxPaths)
	for i := range paths {
		paths[i] = long
	}
	var lines [][]byte
	s := NewStream(StreamConfig{Run: "run_x", Sink: func(ev Event) {
		b, err := ev.MarshalJSON()
		require.NoError(t, err)
		lines = append(lines, b)
	}})
	s.Emit(&SessionStart{SessionID: "s"})
	s.Emit(&ToolStart{CallID: "c", Name: "Read", Kind: KindRead, Paths: paths})
	s.Emit(&ToolEnd{CallID: "c", Status: StatusOK, Paths: paths})
	s.Emit(&Result{Status: ResultSuccess})
	for _, l := range lines {
		require.LessOrEqual(t, len(l), MaxLineBytes, "%.80s", l)
	}
	require.Equal(t, paths[:maxPathsBytes/MaxFieldBytes], capPaths(paths))
	require.Equal(t, []string{"a"}, capPaths([]string{"a", long + "x"}), "a path over MaxFieldBytes ends the list")
}
