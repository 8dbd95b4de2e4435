package adapters_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
)

// TestBlankLinesAreUnparsedEverywhere: an empty line, or one of white
// space only (the reader drops a CRLF line's CR), is a line no adapter
// understands, over every agent's CLI and every protocol (docs/events.md,
// unparsed_line, whose line may be ""): each is counted in
// stats.native_lines and stats.unparsed_lines and has its warning.
// Cursor's parser took a blank line for its plain-text output, without a
// warning.
func TestBlankLinesAreUnparsedEverywhere(t *testing.T) {
	t.Parallel()
	type parse struct{ agent, protocol string }
	cases := []parse{
		{"gemini", harness.ProtocolACP},
		{"claude", harness.ProtocolStreamJSON},
		{"codex", harness.ProtocolAppServer},
	}
	for _, a := range all {
		cases = append(cases, parse{a.Name(), harness.ProtocolCLI})
	}
	blanks := []string{"", "   ", "\t", " \t \r"}
	for _, c := range cases {
		t.Run(c.agent+"/"+c.protocol, func(t *testing.T) {
			t.Parallel()
			var warned []string
			res, err := harness.Parse(context.Background(), strings.NewReader(strings.Join(blanks, "\n")+"\n"), c.agent,
				func(ev event.Event) {
					if w, ok := ev.Body.(*event.Warning); ok && w.Code == event.WarnUnparsedLine {
						warned = append(warned, w.Line)
					}
				}, harness.ParseOptions{Protocol: c.protocol})
			require.NoError(t, err)
			require.Equal(t, int64(len(blanks)), res.Stats.NativeLines)
			require.Equal(t, int64(len(blanks)), res.Stats.UnparsedLines)
			require.Equal(t, []string{"", "   ", "\t", " \t "}, warned)
		})
	}
}
