package mockmodel

import (
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestREADMEScenario: the scenario file the README shows parses, as the
// README says it reads: three turns, a write then a shell call, usage and
// delay as written.
func TestREADMEScenario(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)```toml\n(# scenario.toml.*?)```").FindSubmatch(readme)
	require.NotNil(t, m, "the README's scenario example")
	sc, err := ParseScenario(m[1])
	require.NoError(t, err)
	require.Len(t, sc.Turns, 3)
	first := sc.Turns[0]
	require.Equal(t, []string{"Writing", " the file."}, first.Text)
	require.Equal(t, 50*time.Millisecond, first.Delay)
	require.Equal(t, Usage{InputTokens: 120, OutputTokens: 30}, first.Usage)
	require.Equal(t, []ToolCall{{Kind: KindWrite, Path: "out.txt", Content: "hello\n"}}, first.ToolCalls)
	require.Equal(t, []ToolCall{{Kind: KindShell, Command: "cat out.txt"}}, sc.Turns[1].ToolCalls)
	require.Equal(t, []string{"DONE"}, sc.Turns[2].Text)
	require.Empty(t, sc.Turns[2].ToolCalls)
}
