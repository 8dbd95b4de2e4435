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

// acpBinaries are the ACP commands of the four agents, installed by
// scripts/agents.sh from agents.lock.
var acpBinaries = map[string]string{"claude": "claude-agent-acp", "codex": "codex-acp", "gemini": "gemini", "opencode": "opencode"}

// requireACPUsage holds the usage to what each agent's ACP answer carries:
// Claude and codex-acp report the turn's exact totals; Gemini's counts
// the cache in and the thoughts out without saying how many, and
// OpenCode's covers its last model call only, so harness reports none.
func requireACPUsage(t *testing.T, o outcome, calls int) {
	t.Helper()
	switch o.agent {
	case "claude", "codex":
		requireUsage(t, o, calls)
	default:
		u := o.result.Usage
		u.CostUSD, u.CostEstimated = 0, false
		require.True(t, u.IsZero(), "%s reports no usage over ACP\n%s", o.agent, o)
		require.Empty(t, o.all(event.TypeUsage))
	}
}

func TestACPRealAgents(t *testing.T) {
	for _, agent := range agents {
		t.Run(agent, func(t *testing.T) {
			_, err := os.Stat(filepath.Join(agentsDir, "node_modules", ".bin", acpBinaries[agent]))
			require.NoError(t, err, "run 'make agents': %s is pinned in agents.lock", acpBinaries[agent])
			acp := func(t *testing.T, scenario string, extra ...string) outcome {
				return run(t, agent, scenario, append([]string{"--protocol", "acp", "--linger", "1s"}, extra...)...)
			}
			for _, scenario := range []string{"text", "tool", "edit"} {
				t.Run(scenario, func(t *testing.T) {
					o := acp(t, scenario)
					requireScenario(t, o, scenario, requireACPUsage)
					switch {
					case scenario == "text":
						require.NotEmpty(t, o.result.SessionID)
					case scenario == "edit" && agent == "opencode":
						// opencode acp names the file only once it has written
						// it, and sends no diff content: the content before is
						// unknown, and harness says so rather than guess.
						require.Equal(t, event.DiffSkippedUnknown, o.toolEnds()[0].DiffSkipped, "%s", o)
					case scenario == "edit":
						requireDiffsApply(t, o, map[string]string{})
					}
				})
			}
			t.Run("read-only", func(t *testing.T) {
				// The scripted shell call would write out.txt: read-only
				// refuses it (a mode of the agent's, or harness's answer to
				// its permission request), and the run goes on.
				o := acp(t, "tool", "--permissions", "read-only")
				require.Equal(t, 0, o.code, "%s", o)
				_, err := os.Stat(filepath.Join(o.workdir, "out.txt"))
				require.True(t, os.IsNotExist(err), "read-only wrote out.txt\n%s", o)
				for _, e := range o.toolEnds() {
					require.NotEqual(t, event.StatusOK, e.Status, "%s", o)
				}
			})
			t.Run("hang", func(t *testing.T) {
				o := acp(t, "hang", "--idle-timeout", "10s")
				requireIdleTimeout(t, o, "an answer cut off mid-sentence is not the answer")
				require.NotEmpty(t, o.result.SessionID, "the session was set up: the prompt hung\n%s", o)
			})
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
