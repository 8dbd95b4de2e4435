package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mockmodel"
)

// TestACPReadOnly: the scripted shell call would write out.txt; over ACP,
// read-only refuses it (a mode of the agent's, or harness's answer to its
// permission request), and the run goes on.
func TestACPReadOnly(t *testing.T) {
	for _, agent := range agents {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			o := run(t, agent, "tool", "--protocol", "acp", "--linger", "1s", "--permissions", "read-only")
			require.Equal(t, 0, o.code, "%s", o)
			_, err := os.Stat(filepath.Join(o.workdir, "out.txt"))
			require.True(t, os.IsNotExist(err), "read-only wrote out.txt\n%s", o)
			for _, e := range o.toolEnds() {
				require.NotEqual(t, event.StatusOK, e.Status, "%s", o)
			}
		})
	}
}

// acpServe starts 'harness acp --agent agent --mock scenario' as an editor
// would, and prompts it once in a fresh directory.
func acpServe(t *testing.T, agent, scenario string, flags ...string) (acpsdk.PromptResponse, *harnesstest.Editor, string, time.Duration) {
	t.Helper()
	workdir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, harnessBin, append([]string{"acp", "--agent", agent, "--mock", scenario, "--linger", "1s"}, flags...)...)
	// The idle warning goes out 3 s before the idle budget ends.
	cmd.Env = harnessEnv(t, "HARNESS_IDLE_WARNING=3s")
	// Stderr is a file harness acp writes itself: a failing test reads it
	// with no copying goroutine to race with.
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	require.NoError(t, err)
	defer stderr.Close()
	cmd.Stderr = stderr
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(stderr.Name())
			t.Logf("harness acp's stderr:\n%s", b)
		}
	})
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	conn, ed, sid := harnesstest.Connect(t, ctx, in, out, workdir)
	start := time.Now()
	resp, err := conn.Prompt(ctx, harnesstest.Prompt(sid, "Follow the script."))
	took := time.Since(start)
	require.NoError(t, err)
	require.NoError(t, in.Close())
	require.NoError(t, cmd.Wait(), "harness acp ends at EOF")
	requireNoSurvivor(t, workdir)
	return resp, ed, workdir, took
}

func TestACPServerRealAgents(t *testing.T) {
	for _, agent := range agents {
		t.Run(agent, func(t *testing.T) {
			t.Run("edit", func(t *testing.T) {
				resp, ed, workdir, _ := acpServe(t, agent, "edit")
				require.Equal(t, acpsdk.StopReasonEndTurn, resp.StopReason, "%v", resp.Meta)
				require.Equal(t, mockmodel.EditContent, readFile(t, filepath.Join(workdir, mockmodel.EditPath)))
				require.Contains(t, ed.Text(), mockmodel.EditAnswer)
				calls := 0
				for _, u := range ed.Updates() {
					if u.ToolCall != nil {
						calls++
					}
				}
				require.Equal(t, 1, calls)
				done := ed.Completed()
				require.Len(t, done, 1)
				var diff *acpsdk.ToolCallContentDiff
				for _, d := range done {
					diff = d
				}
				if diff != nil {
					require.Nil(t, diff.OldText, "a creation")
					require.Equal(t, mockmodel.EditContent, diff.NewText)
				} else {
					// Codex may apply its patch before the harness can read
					// the file (diff_skipped unknown): no diff, never a wrong one.
					require.Equal(t, "codex", agent, "every other agent's edit has its diff")
				}
			})
			t.Run("text-over-acp", func(t *testing.T) {
				// ACP both ways: harness acp driving the agent over ACP.
				resp, ed, _, _ := acpServe(t, agent, "text", "--protocol", "acp")
				require.Equal(t, acpsdk.StopReasonEndTurn, resp.StopReason, "%v", resp.Meta)
				require.Equal(t, mockmodel.TextAnswer, ed.Text())
			})
			t.Run("hang", func(t *testing.T) {
				resp, ed, _, took := acpServe(t, agent, "hang", "--idle-timeout", "5s", "--kill-grace", "1s")
				harnesstest.RequireIdleTimeout(t, resp)
				require.Less(t, took, 60*time.Second, "the prompt returns once the idle budget is spent")
				require.Contains(t, ed.Thoughts(), "[harness idle]", "the idle warning reaches the editor")
			})
		})
	}
}
