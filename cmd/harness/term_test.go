package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

// TestBenchReportIsTermSafe: the table quotes the model an agent reported;
// its escape sequences do not reach the terminal, the JSON keeps them.
func TestBenchReportIsTermSafe(t *testing.T) {
	t.Parallel()
	model := "evil\x1b]52;c;aGk=\x07\x1b[2Jmodel"
	rep := &bench.Report{Groups: []bench.Group{{Agent: "claude", ReportedModel: model, Runs: 1}},
		Runs: []bench.RunReport{{Agent: "claude", ReportedModel: model, Status: "success"}}}
	for _, format := range []string{"table", "markdown"} {
		var b strings.Builder
		require.NoError(t, writeReport(&b, rep, format))
		require.Contains(t, b.String(), "evilmodel", format)
		require.NotContains(t, b.String(), "\x1b", format)
	}
	var b strings.Builder
	require.NoError(t, writeReport(&b, rep, "json"))
	require.Contains(t, b.String(), `evil\u001b]52;c;aGk=\u0007\u001b[2Jmodel`)
}
