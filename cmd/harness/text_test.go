package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/harnesstest"
)

// TestTextTranscript renders real normalized streams as the text format
// does and holds them to golden transcripts.
func TestTextTranscript(t *testing.T) {
	for _, name := range []string{"claude/partial-tool", "claude/errors", "codex/tool", "cursor/02_thinking_glob_edit_shell_usage", "opencode/edit_write",
		"opencode/multi_step_reasoning", "claude/partial-thinking-cut", "cursor/13_cut_off_partial"} {
		t.Run(strings.ReplaceAll(name, "/", "-"), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(pkgDir, "..", "..", "testdata", name+".golden.ndjson"))
			require.NoError(t, err)
			evs, err := event.ReadAll(bytes.NewReader(data))
			require.NoError(t, err)
			var out bytes.Buffer
			r := &textRenderer{w: &out}
			for _, ev := range evs {
				r.Render(ev)
			}
			require.NotContains(t, out.String(), "\x1b[", "no color unless asked")
			harnesstest.Golden(t, filepath.Join(pkgDir, "testdata", "text", strings.ReplaceAll(name, "/", "-")+".txt"), out.Bytes(), updating())
		})
	}
}

func TestTextColor(t *testing.T) {
	var out bytes.Buffer
	r := &textRenderer{w: &out, color: true}
	r.Render(event.Event{Body: &event.ToolEnd{Name: "Bash", Kind: event.KindShell, Status: event.StatusError, ExitCode: event.Int(2)}})
	require.Contains(t, out.String(), ansiRed+"✗"+ansiReset)
	require.Contains(t, out.String(), "(exit 2)")
}
