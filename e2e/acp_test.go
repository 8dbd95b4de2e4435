package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/mockmodel"
)

// acpBinaries are the ACP commands of the four agents, installed by
// scripts/agents.sh from agents.lock.
var acpBinaries = map[string]string{"claude": "claude-agent-acp", "codex": "codex-acp", "gemini": "gemini", "opencode": "opencode"}

// requireACPUsage holds the usage to what each agent's ACP answer carries:
// Claude and Gemini report the turn's exact totals; codex-acp reports
// none (only context occupancy); OpenCode's covers its last model call
// only, so harness reports none.
func requireACPUsage(t *testing.T, o outcome, calls int) {
	t.Helper()
	switch o.agent {
	case "claude", "gemini":
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
			t.Run("text", func(t *testing.T) {
				o := acp(t, "text")
				require.Equal(t, 0, o.code, "%s", o)
				require.Equal(t, event.ResultSuccess, o.result.Status)
				require.Equal(t, mockmodel.TextAnswer, o.result.Text, "%s", o)
				require.NotEmpty(t, o.result.SessionID)
				requireACPUsage(t, o, 1)
			})
			t.Run("tool", func(t *testing.T) {
				o := acp(t, "tool")
				require.Equal(t, 0, o.code, "%s", o)
				require.Equal(t, "hello-from-tool\n", readFile(t, filepath.Join(o.workdir, "out.txt")))
				ends := o.toolEnds()
				require.Len(t, ends, 1, "%s", o)
				require.Equal(t, event.KindShell, ends[0].Kind)
				require.Equal(t, event.StatusOK, ends[0].Status)
				require.Equal(t, mockmodel.ToolAnswer, o.result.Text)
				requireACPUsage(t, o, 2)
			})
			t.Run("edit", func(t *testing.T) {
				o := acp(t, "edit")
				require.Equal(t, 0, o.code, "%s", o)
				require.Equal(t, mockmodel.EditContent, readFile(t, filepath.Join(o.workdir, mockmodel.EditPath)))
				ends := o.toolEnds()
				require.Len(t, ends, 1, "%s", o)
				require.Contains(t, []event.Kind{event.KindWrite, event.KindEdit}, ends[0].Kind)
				require.Equal(t, event.StatusOK, ends[0].Status)
				require.NotEmpty(t, ends[0].Paths, "%s", o)
				require.Contains(t, ends[0].Paths[0], mockmodel.EditPath)
				require.Equal(t, mockmodel.EditAnswer, o.result.Text)
				requireACPUsage(t, o, 2)
				if agent == "opencode" {
					// opencode acp names the file only once it has written
					// it, and sends no diff content: the content before is
					// unknown, and harness says so rather than guess.
					require.Equal(t, event.DiffSkippedUnknown, ends[0].DiffSkipped, "%s", o)
					return
				}
				requireDiffsApply(t, o, map[string]string{})
			})
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
				require.Equal(t, 124, o.code, "%s", o)
				require.Equal(t, event.ResultTimeout, o.result.Status)
				var codes []string
				for _, b := range o.all(event.TypeError) {
					codes = append(codes, b.(*event.Error).Code)
				}
				require.Contains(t, codes, event.ErrIdleTimeout)
				require.NotEmpty(t, o.result.SessionID, "the session was set up: the prompt hung\n%s", o)
				require.Empty(t, o.result.Text, "an answer cut off mid-sentence is not the answer\n%s", o)
			})
		})
	}
}

// acpEditor is the editor's side of 'harness acp': the updates it got.
type acpEditor struct {
	mu      sync.Mutex
	updates []acpsdk.SessionUpdate
}

func (c *acpEditor) SessionUpdate(_ context.Context, n acpsdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n.Update)
	return nil
}

func (c *acpEditor) RequestPermission(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return acpsdk.RequestPermissionResponse{}, errors.New("harness acp must not ask the editor")
}

func (c *acpEditor) ReadTextFile(context.Context, acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	return acpsdk.ReadTextFileResponse{}, errors.New("not advertised")
}

func (c *acpEditor) WriteTextFile(context.Context, acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	return acpsdk.WriteTextFileResponse{}, errors.New("not advertised")
}

func (c *acpEditor) CreateTerminal(context.Context, acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	return acpsdk.CreateTerminalResponse{}, errors.New("not advertised")
}

func (c *acpEditor) KillTerminal(context.Context, acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	return acpsdk.KillTerminalResponse{}, errors.New("not advertised")
}

func (c *acpEditor) TerminalOutput(context.Context, acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	return acpsdk.TerminalOutputResponse{}, errors.New("not advertised")
}

func (c *acpEditor) ReleaseTerminal(context.Context, acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	return acpsdk.ReleaseTerminalResponse{}, errors.New("not advertised")
}

func (c *acpEditor) WaitForTerminalExit(context.Context, acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	return acpsdk.WaitForTerminalExitResponse{}, errors.New("not advertised")
}

// acpServe starts 'harness acp --agent agent --mock scenario' as an editor
// would, and prompts it once in a fresh directory.
func acpServe(t *testing.T, agent, scenario string, flags ...string) (acpsdk.PromptResponse, *acpEditor, string, time.Duration) {
	t.Helper()
	workdir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, harnessBin, append([]string{"acp", "--agent", agent, "--mock", scenario, "--linger", "1s"}, flags...)...)
	home := t.TempDir()
	// The idle warning goes out 3 s before the idle budget ends.
	cmd.Env = append(os.Environ(), "HARNESS_AGENTS_DIR="+agentsDir, "HARNESS_IDLE_WARNING=3s",
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_DATA_HOME="+filepath.Join(home, "data"))
	var stderr lockedBuffer // written by exec's copying goroutine while the test reads it
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	ed := &acpEditor{}
	conn := acpsdk.NewClientSideConnection(ed, in, out)
	_, err = conn.Initialize(ctx, acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber})
	require.NoError(t, err, stderr.String())
	sess, err := conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: workdir, McpServers: []acpsdk.McpServer{}})
	require.NoError(t, err)
	start := time.Now()
	resp, err := conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sess.SessionId,
		Prompt: []acpsdk.ContentBlock{{Text: &acpsdk.ContentBlockText{Type: "text", Text: "Follow the script."}}}})
	took := time.Since(start)
	require.NoError(t, err, stderr.String())
	require.NoError(t, in.Close())
	require.NoError(t, cmd.Wait(), "harness acp ends at EOF: %s", stderr.String())
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
				ed.mu.Lock()
				defer ed.mu.Unlock()
				var text strings.Builder
				var calls, done int
				var diff *acpsdk.ToolCallContentDiff
				for _, u := range ed.updates {
					switch {
					case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
						text.WriteString(u.AgentMessageChunk.Content.Text.Text)
					case u.ToolCall != nil:
						calls++
					case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == "completed":
						done++
						for _, c := range u.ToolCallUpdate.Content {
							if c.Diff != nil {
								diff = c.Diff
							}
						}
					}
				}
				require.Contains(t, text.String(), mockmodel.EditAnswer)
				require.Equal(t, 1, calls)
				require.Equal(t, 1, done)
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
				ed.mu.Lock()
				defer ed.mu.Unlock()
				var text strings.Builder
				for _, u := range ed.updates {
					if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
						text.WriteString(u.AgentMessageChunk.Content.Text.Text)
					}
				}
				require.Equal(t, mockmodel.TextAnswer, text.String())
			})
			t.Run("hang", func(t *testing.T) {
				resp, ed, _, took := acpServe(t, agent, "hang", "--idle-timeout", "5s", "--kill-grace", "1s")
				require.Equal(t, acpsdk.StopReasonRefusal, resp.StopReason)
				meta := resp.Meta["harness"].(map[string]any)
				require.Equal(t, "timeout", meta["status"])
				require.Equal(t, "idle_timeout", meta["error"])
				require.Less(t, took, 60*time.Second, "the prompt returns once the idle budget is spent")
				ed.mu.Lock()
				defer ed.mu.Unlock()
				var thoughts strings.Builder
				for _, u := range ed.updates {
					if u.AgentThoughtChunk != nil {
						thoughts.WriteString(u.AgentThoughtChunk.Content.Text.Text)
					}
				}
				require.Contains(t, thoughts.String(), "[harness idle]", "the idle warning reaches the editor")
			})
		})
	}
}

// lockedBuffer is a bytes.Buffer safe for one writer and concurrent
// readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
