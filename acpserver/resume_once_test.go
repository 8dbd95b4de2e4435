package acpserver

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
)

func init() { fakeagent.Register("claude-resume-fails", claudeResumeFails) }

// claude-resume-fails: claude-resumes, but a --resume run of a prompt
// holding SILENT1 exits 1 having written nothing, neither on stdout nor
// on stderr, one holding SILENT0 exits 0 so, and one holding STDERR
// exits 1 saying why on stderr only (as Codex, Gemini and OpenCode do
// when they cannot resume). Each run first appends its prompt to the
// file $RUNS.
func claudeResumeFails(args []string) int {
	var prompt string
	resume := false
	for i, a := range args {
		if strings.HasPrefix(a, "--resume=") {
			resume = true
		}
		if a == "--" && i+1 < len(args) {
			prompt = args[i+1]
		}
	}
	f, err := os.OpenFile(os.Getenv("RUNS"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 3
	}
	_, err = f.WriteString(prompt + "\n")
	if f.Close() != nil || err != nil {
		return 3
	}
	switch {
	case resume && strings.Contains(prompt, "SILENT1"):
		return 1
	case resume && strings.Contains(prompt, "SILENT0"):
		return 0
	case resume && strings.Contains(prompt, "STDERR"):
		_, _ = os.Stderr.WriteString("Error: Session not found\n")
		return 1
	}
	return claudeResumes(args)
}

// resumeFailsServer serves ACP over claude-resume-fails and opens a
// session; it returns the file of the prompts the agent ran.
func resumeFailsServer(t *testing.T) (*acpsdk.ClientSideConnection, *harnesstest.Editor, acpsdk.SessionId, string) {
	t.Helper()
	argv, env := fakeagent.Command("claude-resume-fails")
	runs := filepath.Join(t.TempDir(), "runs")
	env = append(env, "RUNS="+runs)
	conn, ed, sid, _ := harnesstest.ServeACP(t, func(in io.Reader, out io.Writer) {
		Serve(context.Background(), in, out, Options{Start: harness.Start, Version: "test",
			Task: func(cwd, prompt string) harness.Task {
				b := harness.DefaultBudgets()
				b.Linger, b.KillGrace = 200*time.Millisecond, 200*time.Millisecond
				return harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env, Cwd: cwd, Prompt: prompt, Budgets: &b}
			}})
	})
	return conn, ed, sid, runs
}

// TestACPServerSilentResumeRunsOnce: a resumed run that fails without a
// word (no event, no error of the agent's, nothing on stderr) is not run
// again in a new conversation: it may have done its work, and nothing
// says the resume was the trouble. The prompt runs once and answers
// refusal saying how the run failed, and the session keeps its
// conversation. The prompt ran a second time, as a new conversation,
// and answered end_turn. A resumed run that says why on stderr still
// falls back to a new conversation, as one that reports an error does
// (TestACPServerNewConversationIsSaid).
func TestACPServerSilentResumeRunsOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, prompt, why string }{
		{"exit-1-silent", "SILENT1", "\n[harness] process_exit: the agent exited with status 1 (error)\n"},
		{"exit-0-silent", "SILENT0", "\n[harness] the run failed (error)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn, ed, sid, runs := resumeFailsServer(t)
			_, text := say(t, conn, ed, sid, "one")
			require.Equal(t, "resume=", text)
			resp, text := say(t, conn, ed, sid, tc.prompt)
			require.Equal(t, acpsdk.StopReasonRefusal, resp.StopReason)
			require.Equal(t, tc.why, text, "the failure is said, and no new conversation begins")
			b, err := os.ReadFile(runs)
			require.NoError(t, err)
			require.Equal(t, "one\n"+tc.prompt+"\n", string(b), "the prompt ran once")
			_, text = say(t, conn, ed, sid, "three")
			require.Equal(t, "resume=s1", text, "the session keeps its conversation")
		})
	}
	t.Run("stderr-says-why", func(t *testing.T) {
		t.Parallel()
		conn, ed, sid, runs := resumeFailsServer(t)
		say(t, conn, ed, sid, "one")
		resp, text := say(t, conn, ed, sid, "STDERR")
		require.Equal(t, acpsdk.StopReasonEndTurn, resp.StopReason)
		require.Equal(t, "[harness] claude could not continue this session's conversation (process_exit: the agent exited with status 1): "+
			"this prompt starts a new one.\n\nresume=", text)
		b, err := os.ReadFile(runs)
		require.NoError(t, err)
		require.Equal(t, "one\nSTDERR\nSTDERR\n", string(b), "the prompt runs again in a new conversation")
	})
}
