package event

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCutsNeverSplitASecret: where the stream cuts a string (an unparsed
// line's preview, an output over its cap, a command over its cap, a
// summary among a fatal error's last events) through a secret the caller
// named (StreamConfig.Secrets), the part of it before the cut goes too:
// the log's redactor knows the secret whole and would leave its first 38
// of 40 characters there.
func TestCutsNeverSplitASecret(t *testing.T) {
	t.Parallel()
	const secret = "Zk7Qp2Lm9Xv4Rt8Wn3Bc6Hy1Jd5Fg0Ks2Ma7Ne4P"
	var evs []Event
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := NewStream(StreamConfig{Run: testRun, Secrets: []string{"unrelated-value", secret},
		Now:   func() time.Time { clock = clock.Add(time.Millisecond); return clock },
		Start: SessionStart{Agent: "fake"},
		Sink:  func(ev Event) { evs = append(evs, ev) }})
	crossing := func(at int) string { return strings.Repeat(".", at-38) + secret + " and more" }
	require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"init"}`), false, []Body{&SessionStart{SessionID: "s1"}}))
	require.NoError(t, s.Line(StreamStdout, []byte(crossing(linePreview)), true, nil))
	require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"tool"}`), false,
		[]Body{&ToolStart{CallID: "c1", Name: "bash", Kind: KindShell, Command: crossing(MaxOutputBytes)}}))
	require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"tool"}`), false,
		[]Body{&ToolEnd{CallID: "c1", Output: crossing(MaxOutputBytes)}}))
	require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"tool"}`), false,
		[]Body{&ToolStart{CallID: "c2", Name: "bash", Kind: KindShell, Command: crossing(80)}}))
	s.Emit(&Error{Code: ErrIdleTimeout, Message: "stopped", Fatal: true, Partial: &Partial{}})
	s.Finish(Outcome{NoProcess: true})

	var cuts []string
	for _, ev := range evs {
		switch b := ev.Body.(type) {
		case *Warning:
			if b.Code == WarnUnparsedLine {
				require.True(t, b.Truncated)
				cuts = append(cuts, b.Line)
			}
		case *ToolStart:
			if b.CallID == "c1" {
				require.True(t, b.InputTruncated)
				cuts = append(cuts, b.Command)
			}
		case *ToolEnd:
			if b.CallID == "c1" {
				require.True(t, b.OutputTruncated)
				cuts = append(cuts, b.Output)
			}
		case *Error:
			if b.Fatal {
				for _, e := range b.Partial.LastEvents {
					cuts = append(cuts, e.Summary)
				}
			}
		}
	}
	require.Equal(t, 3+5, len(cuts), "three cuts, and the summaries of the five events before the error")
	for _, c := range cuts {
		require.NotContains(t, c, secret[:minSecretPart], "a cut string ends in the first bytes of the secret")
	}
	require.True(t, strings.HasSuffix(cuts[0], "..."), "what came before the secret is kept: %q", cuts[0])
}

// TestUnsplit: the longest end of a cut that begins a secret, at least
// minSecretPart bytes and not all of it, goes; anything else stays.
func TestUnsplit(t *testing.T) {
	t.Parallel()
	s := NewStream(StreamConfig{Secrets: []string{"", "abc", "secretvalue", "xxxxsecond"}})
	for cut, want := range map[string]string{
		"text secr":          "text ",
		"text sec":           "text sec",         // 3 bytes say nothing
		"text secretvalue":   "text secretvalue", // whole: the redactor's
		"text secretvalu":    "text ",
		"xxxxxxxsec":         "xxx", // the longest end that begins a secret
		"":                   "",
		"plain text, no cut": "plain text, no cut",
	} {
		require.Equal(t, want, s.unsplit(cut), cut)
	}
}
