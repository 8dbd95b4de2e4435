package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mockmodel"
)

// TestCodexACPAskSandboxesCommands holds what --permissions ask is with
// codex-acp (docs/supervision.md): its read-only mode, the one of its
// modes that asks for anything (its others run commands and edits
// unasked). It asks before an edit; a shell command is not asked about
// and runs in its read-only sandbox, where the write fails, and Codex
// reports no call for it. Harness chose that mode believing it asked
// before such a command.
func TestCodexACPAskSandboxesCommands(t *testing.T) {
	t.Parallel()
	sc := scenarioFile(t,
		mockmodel.Turn{Text: []string{"I'll run the command."}, ToolCalls: shell("echo from-shell > shell.txt")},
		mockmodel.Turn{Text: []string{"Now the file."}, ToolCalls: write("edit.txt", "from-edit\n")},
		mockmodel.Turn{Text: []string{"DONE"}})
	s := startSession(t, "codex", sc, "--protocol", "acp", "--permissions", "ask")
	s.send(map[string]any{"type": "prompt", "text": "Follow the script."})
	r := s.until(event.TypePermissionRequest).(*event.PermissionRequest)
	s.send(map[string]any{"type": "answer", "call_id": r.CallID, "allow": true})
	s.until(event.TypeTurnEnd)
	evs := s.end()
	reqs := harnesstest.Bodies(evs, event.TypePermissionRequest)
	require.Len(t, reqs, 1, "the edit alone is asked: %s", s.out.String())
	require.Contains(t, []event.Kind{event.KindWrite, event.KindEdit}, reqs[0].(*event.PermissionRequest).Kind, "%s", s.out.String())
	require.Equal(t, "from-edit\n", readFile(t, filepath.Join(s.workdir, "edit.txt")))
	_, err := os.Stat(filepath.Join(s.workdir, "shell.txt"))
	require.True(t, os.IsNotExist(err), "the command wrote in the sandbox: %s", s.out.String())
	for _, b := range harnesstest.Bodies(evs, event.TypeToolStart) {
		require.NotEqual(t, event.KindShell, b.(*event.ToolStart).Kind, "codex-acp reports no call for the sandboxed command: %s", s.out.String())
	}
}
