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
// and runs in its read-only sandbox, where the write fails. Codex-acp
// 2.6 reports no call for it on an idle machine, and a failed shell call
// on a loaded one (both seen, the second with the other cores busy):
// whichever it does, what harness reports of it is exact. Harness chose
// that mode believing it asked before such a command.
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
	shells := map[string]bool{}
	for _, b := range harnesstest.Bodies(evs, event.TypeToolStart) {
		if st := b.(*event.ToolStart); st.Kind == event.KindShell {
			require.Equal(t, "echo from-shell > shell.txt", st.Command, "%s", s.out.String())
			shells[st.CallID] = true
		}
	}
	for _, b := range harnesstest.Bodies(evs, event.TypeToolEnd) {
		if end := b.(*event.ToolEnd); shells[end.CallID] {
			require.Equal(t, event.StatusError, end.Status, "the sandbox failed the write: %s", s.out.String())
			require.NotNil(t, end.ExitCode, "%s", s.out.String())
			require.NotZero(t, *end.ExitCode, "%s", s.out.String())
			require.Contains(t, end.Output, "Read-only file system", "%s", s.out.String())
			delete(shells, end.CallID)
		}
	}
	require.Empty(t, shells, "a reported shell call ends: %s", s.out.String())
}
