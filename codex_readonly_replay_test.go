package harness_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
)

// TestReadOnlyRunReparseNamesFilesFromCwd: a one-prompt Codex run's log
// reparsed with read-only permissions names the files of its diffs from
// the meta's cwd, as one with full access does: the read-only branch of
// the replay drove only parsers that are begun on the task (ACP), and
// left Codex's exec parser without the cwd, so a diff header held the
// absolute path glued to b/.
func TestReadOnlyRunReparseNamesFilesFromCwd(t *testing.T) {
	t.Parallel()
	lines := strings.Join([]string{
		`{"type":"thread.started","thread_id":"t1"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"i","type":"file_change","changes":[{"path":"/w/sub/a.go","kind":"add","diff":"x\n"}],"status":"completed"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}`,
	}, "\n") + "\n"
	for _, perm := range []string{harness.FullAccess, harness.ReadOnly} {
		t.Run(perm, func(t *testing.T) {
			t.Parallel()
			var diffs []string
			_, err := harness.Parse(context.Background(), strings.NewReader(lines), "codex", func(ev event.Event) {
				if te, ok := ev.Body.(*event.ToolEnd); ok {
					diffs = append(diffs, te.Diff)
				}
			}, harness.ParseOptions{Cwd: "/w", Permissions: perm})
			require.NoError(t, err)
			require.Equal(t, []string{"--- /dev/null\n+++ b/sub/a.go\n@@ -0,0 +1 @@\n+x\n"}, diffs)
		})
	}
}
