package acpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
)

func init() { fakeagent.Register("claude-resumes", claudeResumes) }

// claude-resumes: a Claude Code CLI that keeps conversations. Its session
// is the one --resume names, or a new one: "gone-1" for a prompt holding
// GONE (a session it cannot resume later, as Claude's of a prompt
// cancelled before it kept any of it), else "s1". A --resume of a gone
// session fails as Claude's does, saying nothing on stdout. Its answer is
// "resume=ID", then " mcp=" and the --mcp-config file's content when given
// one.
func claudeResumes(args []string) int {
	var resume, mcp, prompt string
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--resume="); ok {
			resume = v
		}
		if v, ok := strings.CutPrefix(a, "--mcp-config="); ok {
			mcp = v
		}
		if a == "--" && i+1 < len(args) {
			prompt = args[i+1]
		}
	}
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	if strings.HasPrefix(resume, "gone") {
		// Claude Code 2.1's one line, abridged.
		fakeagent.Line(`{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":0,"session_id":` + js(resume) +
			`,"total_cost_usd":0,"errors":[` + js("No conversation found with session ID: "+resume) + `]}`)
		return 1
	}
	sid := resume
	switch {
	case sid != "":
	case strings.Contains(prompt, "GONE"):
		sid = "gone-1"
	default:
		sid = "s1"
	}
	answer := "resume=" + resume
	if mcp != "" {
		b, err := os.ReadFile(mcp)
		if err != nil {
			return 3
		}
		answer += " mcp=" + string(b)
	}
	fakeagent.Line(`{"type":"system","subtype":"init","cwd":"/tmp","session_id":` + js(sid) + `,"tools":[],"model":"fake-model"}`)
	if strings.Contains(prompt, "TWO") {
		fakeagent.Line(`{"type":"assistant","message":{"id":"msg_0","role":"assistant","content":[{"type":"text","text":"interim "}]},"session_id":` + js(sid) + `}`)
	}
	fakeagent.Line(`{"type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":` + js(answer) + `}]},"session_id":` + js(sid) + `}`)
	fakeagent.Line(`{"type":"result","subtype":"success","is_error":false,"result":` + js(answer) + `,"session_id":` + js(sid) +
		`,"usage":{"input_tokens":3,"output_tokens":2}}`)
	return 0
}

// resumesServer serves ACP over claude-resumes, each run started by start
// (harness.Start when nil), and opens a session; the server's log goes to
// logs.
func resumesServer(t *testing.T, start func(context.Context, harness.Task, harness.Options) (*harness.Run, error), logs io.Writer) (*acpsdk.ClientSideConnection, *harnesstest.Editor, acpsdk.SessionId, string) {
	t.Helper()
	argv, env := fakeagent.Command("claude-resumes")
	if start == nil {
		start = harness.Start
	}
	return harnesstest.ServeACP(t, func(in io.Reader, out io.Writer) {
		Serve(context.Background(), in, out, Options{Start: start, Version: "test",
			Logger: slog.New(slog.NewTextHandler(logs, nil)),
			Task: func(cwd, prompt string) harness.Task {
				b := harness.DefaultBudgets()
				b.Linger, b.KillGrace = 200*time.Millisecond, 200*time.Millisecond
				return harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env, Cwd: cwd, Prompt: prompt, Budgets: &b}
			}})
	})
}

// say prompts the session and returns the answer and the text of the
// message chunks it sent.
func say(t *testing.T, conn *acpsdk.ClientSideConnection, ed *harnesstest.Editor, sid acpsdk.SessionId, text string) (acpsdk.PromptResponse, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	before := len(ed.Text())
	resp, err := conn.Prompt(ctx, harnesstest.Prompt(sid, text))
	require.NoError(t, err)
	return resp, ed.Text()[before:]
}

// TestACPServerPromptsContinueTheConversation: an ACP session is one
// conversation: each prompt's run continues the agent's session of the
// one before (--resume). Each prompt went to a new session of the agent,
// which had forgotten the conversation, and the turn still ended end_turn.
func TestACPServerPromptsContinueTheConversation(t *testing.T) {
	conn, ed, sid, _ := resumesServer(t, nil, io.Discard)
	resp, text := say(t, conn, ed, sid, "one")
	require.Equal(t, acpsdk.StopReasonEndTurn, resp.StopReason)
	require.Equal(t, "resume=", text, "the first prompt begins the conversation")
	for _, p := range []string{"two", "three"} {
		resp, text = say(t, conn, ed, sid, p)
		require.Equal(t, acpsdk.StopReasonEndTurn, resp.StopReason)
		require.Equal(t, "resume=s1", text, "%s continues the agent's session", p)
	}

	// Another session is another conversation.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	other, err := conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	require.NoError(t, err)
	_, text = say(t, conn, ed, other.SessionId, "one")
	require.Equal(t, "resume=", text)
}

// TestACPServerNewConversationIsSaid: where the agent cannot continue
// the session's conversation, the prompt runs in a new one and the
// client is told so first, never silently: when the agent refuses to
// resume (an agent driven over ACP), and when the resumed run fails
// having said nothing (Claude's session of a prompt cancelled before it
// kept any of it). The session then continues the new conversation.
func TestACPServerNewConversationIsSaid(t *testing.T) {
	t.Run("agent-cannot-resume", func(t *testing.T) {
		start := func(ctx context.Context, task harness.Task, o harness.Options) (*harness.Run, error) {
			if task.Resume != "" {
				return nil, errors.New("--resume is not supported over ACP yet")
			}
			return harness.Start(ctx, task, o)
		}
		conn, ed, sid, _ := resumesServer(t, start, io.Discard)
		say(t, conn, ed, sid, "one")
		resp, text := say(t, conn, ed, sid, "two")
		require.Equal(t, acpsdk.StopReasonEndTurn, resp.StopReason)
		require.Equal(t, "[harness] claude could not continue this session's conversation (--resume is not supported over ACP yet): "+
			"this prompt starts a new one.\n\nresume=", text)
		var ids []string
		for _, u := range ed.Updates() {
			if c := u.AgentMessageChunk; c != nil && c.MessageId != nil {
				ids = append(ids, *c.MessageId)
			}
		}
		require.Len(t, ids, 3)
		require.NotEqual(t, ids[1], ids[2], "the note is a message of its own")
	})
	t.Run("session-gone", func(t *testing.T) {
		conn, ed, sid, _ := resumesServer(t, nil, io.Discard)
		_, text := say(t, conn, ed, sid, "GONE")
		require.Equal(t, "resume=", text)
		resp, text := say(t, conn, ed, sid, "two")
		require.Equal(t, acpsdk.StopReasonEndTurn, resp.StopReason)
		require.True(t, strings.HasPrefix(text, "[harness] claude could not continue this session's conversation (agent_error: "), text)
		require.Contains(t, text, "No conversation found")
		require.True(t, strings.HasSuffix(text, "this prompt starts a new one.\n\nresume="), text)
		_, text = say(t, conn, ed, sid, "three")
		require.Equal(t, "resume=s1", text, "the new conversation goes on")
	})
}

// TestACPServerMCPServers: the stdio MCP servers of session/new reach
// the agent whose command line takes them (Claude Code: --mcp-config),
// their environment in a file, never in the argv a session log shows;
// those it cannot take (http here) are named in a warning. session/new
// took the servers and passed none.
func TestACPServerMCPServers(t *testing.T) {
	var mu sync.Mutex
	var argv []string
	start := func(ctx context.Context, task harness.Task, o harness.Options) (*harness.Run, error) {
		on := o.OnEvent
		o.OnEvent = func(ev event.Event) {
			if ss, ok := ev.Body.(*event.SessionStart); ok {
				mu.Lock()
				argv = ss.Argv
				mu.Unlock()
			}
			on(ev)
		}
		return harness.Start(ctx, task, o)
	}
	var logs syncBuffer
	conn, ed, _, _ := resumesServer(t, start, &logs)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	sess, err := conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{
		{Stdio: &acpsdk.McpServerStdio{Name: "tools", Command: "/usr/bin/tools", Args: []string{"--stdio"},
			Env: []acpsdk.EnvVariable{{Name: "TOOLS_TOKEN", Value: "hunter2-secret-value"}}}},
		{Http: &acpsdk.McpServerHttpInline{Type: "http", Name: "remote", Url: "http://127.0.0.1:1/mcp", Headers: []acpsdk.HttpHeader{}}},
	}})
	require.NoError(t, err)
	require.Contains(t, logs.String(), "server=remote type=http")
	_, text := say(t, conn, ed, sess.SessionId, "one")
	cfg, ok := strings.CutPrefix(text, "resume= mcp=")
	require.True(t, ok, text)
	require.JSONEq(t, `{"mcpServers":{"tools":{"type":"stdio","command":"/usr/bin/tools","args":["--stdio"],"env":{"TOOLS_TOKEN":"hunter2-secret-value"}}}}`, cfg)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, argv)
	require.NotContains(t, strings.Join(argv, " "), "hunter2", "the environment stays out of the argv")
	require.NotContains(t, logs.String(), "hunter2")
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestACPServerMessagesHaveIDs: each message's chunks carry a messageId
// of their own (a UUID, as ACP wants), so that a client tells an interim
// message from the next; the chunks of harness's own note are a message
// of their own. Two messages came as one: "interim resume=".
func TestACPServerMessagesHaveIDs(t *testing.T) {
	conn, ed, sid, _ := resumesServer(t, nil, io.Discard)
	_, text := say(t, conn, ed, sid, "TWO")
	require.Equal(t, "interim resume=", text)
	var ids []string
	for _, u := range ed.Updates() {
		if c := u.AgentMessageChunk; c != nil {
			require.NotNil(t, c.MessageId)
			require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, *c.MessageId)
			ids = append(ids, *c.MessageId)
		}
	}
	require.Len(t, ids, 2)
	require.NotEqual(t, ids[0], ids[1])
}

// TestACPServerContinuesAnACPAgent: an agent driven over ACP continues
// the session's conversation where it offers session/resume (its session
// named in each answer, no note); one that offers neither session/resume
// nor session/load has each later prompt run in a new conversation, the
// client told so first. Each later prompt was run in a new one, with a
// note, whatever the agent offered.
func TestACPServerContinuesAnACPAgent(t *testing.T) {
	for _, tc := range []struct{ mode, note string }{
		{mode: "resumable"},
		{mode: "normal", note: "[harness] fake-acp could not continue this session's conversation (bad_config: acp: --resume: " +
			"the agent offers neither session/resume nor session/load (its agentCapabilities)): this prompt starts a new one.\n\n"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			argv, env := fakeagent.Command("acp-agent", tc.mode)
			conn, ed, sid, _ := harnesstest.ServeACP(t, func(in io.Reader, out io.Writer) {
				Serve(context.Background(), in, out, Options{Start: harness.Start, Version: "test",
					Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
					Task: func(cwd, prompt string) harness.Task {
						b := harness.DefaultBudgets()
						b.Linger, b.KillGrace = 200*time.Millisecond, 200*time.Millisecond
						return harness.Task{Agent: "fake-acp", Protocol: harness.ProtocolACP, Command: argv, BaseEnv: env,
							Cwd: cwd, Prompt: prompt, Budgets: &b}
					}})
			})
			for i, p := range []string{"one", "two", "three"} {
				resp, text := say(t, conn, ed, sid, p)
				require.Equal(t, acpsdk.StopReasonEndTurn, resp.StopReason, text)
				want := "Writing the file.Done."
				if i > 0 {
					want = tc.note + want
				}
				require.Equal(t, want, text)
				require.Equal(t, "sess-1", resp.Meta["harness"].(map[string]any)["agent_session_id"])
			}
		})
	}
}
