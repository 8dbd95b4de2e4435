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

	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mockmodel"
)

// TestACPServerConversation: 'harness acp' over the real agents' CLIs on
// the scripted model's converse scenario, two prompts in one ACP
// session: the second is answered in the first one's conversation (the
// scripted model checks that it holds the first prompt), both files are
// written, and both answers name the one session of the agent. Each
// prompt started a new session of the agent, and the second was answered
// "mockmodel: the conversation lacks context-mark-alpha7", end_turn.
func TestACPServerConversation(t *testing.T) {
	for _, agent := range []string{"claude", "codex"} {
		t.Run(agent, func(t *testing.T) {
			workdir := t.TempDir()
			ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, harnessBin, "acp", "--agent", agent, "--mock", "converse", "--linger", "1s")
			cmd.Env = harnessEnv(t)
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
			var sessions []any
			for _, p := range []string{mockmodel.ConversePrompt1, mockmodel.ConversePrompt2} {
				resp, err := conn.Prompt(ctx, harnesstest.Prompt(sid, p))
				require.NoError(t, err)
				require.Equal(t, acpsdk.StopReasonEndTurn, resp.StopReason, "%v", resp.Meta)
				sessions = append(sessions, resp.Meta["harness"].(map[string]any)["agent_session_id"])
			}
			require.NotContains(t, ed.Text(), mockmodel.ContextMissing)
			require.Equal(t, "first\n", readFile(t, filepath.Join(workdir, mockmodel.ConverseFirst)))
			require.Equal(t, "second\n", readFile(t, filepath.Join(workdir, mockmodel.ConverseSecond)))
			require.NotEmpty(t, sessions[0])
			require.Equal(t, sessions[0], sessions[1], "one session of the agent")
			require.NoError(t, in.Close())
			require.NoError(t, cmd.Wait(), "harness acp ends at EOF")
			requireNoSurvivor(t, workdir)
		})
	}
}
