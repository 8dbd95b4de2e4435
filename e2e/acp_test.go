package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
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

// TestLiveSession: 'harness session' over ACP with two prompts on the
// scripted model's converse scenario: two turns of one agent process and
// one session id, the second turn answered in the first one's context
// (the scripted model checks the conversation holds the first prompt),
// both files written, no process left, exit 0 at the end of input. Each
// turn's usage is what the model served it (two calls of DefaultUsage)
// where the agent reports usage over ACP (claude-agent-acp) and over
// Claude's and Codex's own protocols; Gemini's and OpenCode's ACP modes
// report none harness can take (docs/events.md, ACP).
//
// Claude and Codex run over their own protocols (stream-json and
// app-server, their defaults) and Claude, as "claude-acp", over ACP
// through claude-agent-acp.
func TestLiveSession(t *testing.T) {
	for _, name := range []string{"gemini", "opencode", "claude", "claude-acp", "codex"} {
		agent, protocol, _ := strings.Cut(name, "-")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			workdir := t.TempDir()
			var stdin bytes.Buffer
			for _, p := range []string{mockmodel.ConversePrompt1, mockmodel.ConversePrompt2} {
				line, _ := json.Marshal(map[string]string{"type": "prompt", "text": p})
				stdin.Write(append(line, '\n'))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			args := []string{"session", "--agent", agent, "--mock", "converse", "--cwd", workdir,
				"--idle-timeout", "60s", "--timeout", "3m", "--linger", "2s", "--kill-grace", "2s"}
			if protocol != "" {
				args = append(args, "--protocol", protocol)
			}
			cmd := exec.CommandContext(ctx, harnessBin, args...)
			cmd.Dir, cmd.Env, cmd.Stdin = workdir, harnessEnv(t, "NO_COLOR=1"), &stdin
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			require.NoError(t, cmd.Run(), "stderr: %s\nstdout:\n%s", errb.String(), out.String())
			adaptertest.CheckStream(t, out.Bytes())
			o := outcome{agent: agent, stdout: out.Bytes(), stderr: errb.String(), workdir: workdir}
			var err error
			o.events, err = event.ReadAll(bytes.NewReader(o.stdout))
			require.NoError(t, err)
			o.result = o.events[len(o.events)-1].Body.(*event.Result)
			requireNoSurvivor(t, workdir)

			require.Equal(t, event.ResultSuccess, o.result.Status, "%s", o)
			require.Len(t, o.all(event.TypeSessionStart), 1)
			ss := o.events[0].Body.(*event.SessionStart)
			require.NotEmpty(t, ss.SessionID, "%s", o)
			require.Equal(t, name == "claude", slices.Contains(ss.Argv, "--input-format"), "claude's default is its own protocol: %v", ss.Argv)
			require.Equal(t, name == "codex", slices.Contains(ss.Argv, "app-server"), "codex's default is its own protocol: %v", ss.Argv)
			require.Equal(t, ss.SessionID, o.result.SessionID)
			ends := o.all(event.TypeTurnEnd)
			require.Len(t, ends, 2, "%s", o)
			var sum event.Usage
			for i, b := range ends {
				e := b.(*event.TurnEnd)
				require.Equal(t, event.ResultSuccess, e.Status, "turn %d\n%s", i+1, o)
				require.NotContains(t, e.Text, mockmodel.ContextMissing, "%s", o)
				served := event.Usage{InputTokens: 2 * int64(mockmodel.DefaultUsage.InputTokens), OutputTokens: 2 * int64(mockmodel.DefaultUsage.OutputTokens)}
				if agent != "claude" && agent != "codex" {
					served = event.Usage{}
				}
				require.Equal(t, served, e.Usage, "turn %d", i+1)
				sum.Add(e.Usage)
			}
			require.Equal(t, sum.InputTokens, o.result.Usage.InputTokens)
			require.Equal(t, sum.OutputTokens, o.result.Usage.OutputTokens)
			require.Equal(t, "first\n", readFile(t, filepath.Join(workdir, mockmodel.ConverseFirst)))
			require.Equal(t, "second\n", readFile(t, filepath.Join(workdir, mockmodel.ConverseSecond)))
			require.True(t, strings.HasSuffix(ends[1].(*event.TurnEnd).Text, "second file"), "%s", o)
		})
	}
}

// TestACPRunReparsesAsRun: a one-prompt run over ACP that edits a file,
// then 'sessions reparse' of its log: the same diffs, to the byte. A
// reparse named the file by its absolute path (codex-acp, Gemini), and
// claude-agent-acp's live diff had a hunk header of its own (+1,1).
func TestACPRunReparsesAsRun(t *testing.T) {
	for _, agent := range []string{"claude", "codex", "gemini"} {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			workdir, tmp := t.TempDir(), t.TempDir()
			env := harnessEnv(t, "NO_COLOR=1", "TMPDIR="+tmp)
			harnessIn := func(args ...string) []byte {
				ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, harnessBin, args...)
				cmd.Dir, cmd.Env = workdir, env
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				require.NoError(t, err, "%q: %s", args, stderr.String())
				return out
			}
			live := harnessIn("run", "--agent", agent, "--protocol", "acp", "--mock", "edit", "--cwd", workdir,
				"-p", "Follow the script.", "--idle-timeout", "90s", "--timeout", "2m", "--kill-grace", "2s", "--linger", "1s")
			var metas []struct{ Run string }
			require.NoError(t, json.Unmarshal(harnessIn("sessions", "list", "--json"), &metas))
			require.Len(t, metas, 1)
			again := harnessIn("sessions", "reparse", metas[0].Run)
			diffs := func(stream []byte) []string {
				evs, err := event.ReadAll(bytes.NewReader(stream))
				require.NoError(t, err)
				var out []string
				for _, b := range harnesstest.Bodies(evs, event.TypeToolEnd) {
					e := b.(*event.ToolEnd)
					out = append(out, e.Diff+e.DiffSkipped)
				}
				return out
			}
			want := diffs(live)
			require.NotEmpty(t, want, "%s", live)
			require.Contains(t, strings.Join(want, ""), "+++ b/", "the edit's diff: %s", live)
			require.Equal(t, want, diffs(again), "live:\n%s\nreparsed:\n%s", live, again)
		})
	}
}
