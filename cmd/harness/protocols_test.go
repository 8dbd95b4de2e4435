package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/process"
)

// The CLI's protocols, over fake agents: ACP ('harness acp' driven by an
// editor, and 'run --protocol acp' towards an agent), MCP ('harness mcp'
// driven by an SDK client) and HTTP ('harness serve').

// startACPSession starts 'harness acp' in-process over the fake ACP agent
// in mode, connects an editor, and opens a session in a fresh directory.
func startACPSession(t *testing.T, mode string, flags ...string) (*acpsdk.ClientSideConnection, *harnesstest.Editor, acpsdk.SessionId, string) {
	t.Helper()
	isolate(t)
	argv, _ := fakeagent.Command("acp-agent")
	args := append([]string{"acp", "--agent", "fake", "--protocol", "acp", "--command", argv[0], "--command", mode,
		"--env", fakeagent.EnvVar + "=acp-agent", "--linger", "200ms", "--kill-grace", "200ms"}, flags...)
	return harnesstest.ServeACP(t, func(in io.Reader, out io.Writer) {
		assert.Equal(t, 0, run(args, in, out, io.Discard), "harness acp's exit status")
	})
}

// fakeAlive counts live processes of the fake ACP agent in mode: this
// test binary by its path, not its name, which the root package's test
// binary shares (harness.test) and which runs the same fakes when go test
// runs both packages at once.
func fakeAlive(mode string) int {
	exe, _ := fakeagent.Command("acp-agent")
	n := 0
	for _, p := range harnesstest.Processes() {
		if len(p.Args) >= 2 && p.Args[1] == mode && p.Args[0] == exe[0] {
			n++
		}
	}
	return n
}

func TestACPServerPromptWritesTheFile(t *testing.T) {
	conn, ed, sid, dir := startACPSession(t, "normal")
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	resp, err := conn.Prompt(ctx, harnesstest.Prompt(sid, "write hello.txt"))
	require.NoError(t, err)
	require.Equal(t, acpsdk.StopReasonEndTurn, resp.StopReason)
	got, err := os.ReadFile(filepath.Join(dir, fakeagent.ACPFile))
	require.NoError(t, err)
	require.Equal(t, fakeagent.ACPFileText, string(got))
	require.NotNil(t, resp.Usage)
	require.Equal(t, 10, resp.Usage.InputTokens)
	require.Equal(t, 5, resp.Usage.OutputTokens)

	require.Equal(t, "Writing the file.Done.", ed.Text(), "each text once: deltas, not the messages again")
	require.Equal(t, "I should write the file.", ed.Thoughts())
	started := false
	for _, u := range ed.Updates() {
		if u.ToolCall != nil && u.ToolCall.Kind == "edit" {
			started = true
			require.Equal(t, acpsdk.ToolCallStatus("in_progress"), u.ToolCall.Status)
		}
	}
	require.True(t, started)
	done := ed.Completed()
	require.Contains(t, done, acpsdk.ToolCallId("call-1"))
	diff := done["call-1"]
	require.NotNil(t, diff, "the edit's diff")
	require.Nil(t, diff.OldText, "a creation")
	require.Equal(t, fakeagent.ACPFileText, diff.NewText)
	require.Equal(t, filepath.Join(dir, fakeagent.ACPFile), diff.Path)
}

func TestACPServerCancelMidTool(t *testing.T) {
	conn, ed, sid, _ := startACPSession(t, "slow-tool")
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	got := harnesstest.PromptUntilTool(ctx, t, conn, ed, sid, "sleep")
	require.Equal(t, 1, fakeAlive("slow-tool"))
	require.NoError(t, conn.Cancel(ctx, acpsdk.CancelNotification{SessionId: sid}))
	a := <-got
	require.NoError(t, a.Err)
	require.Equal(t, acpsdk.StopReasonCancelled, a.Resp.StopReason)
	require.Equal(t, 0, fakeAlive("slow-tool"), "no process left")
}

func TestACPServerHungAgentReturnsWithinIdle(t *testing.T) {
	conn, ed, sid, _ := startACPSession(t, "hang-prompt", "--idle-timeout", "300ms")
	// Only a hang reaches this bound: the answer's reason (below) says the
	// idle budget ended the prompt, which no timing of ours could prove
	// on a loaded machine.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	resp, err := conn.Prompt(ctx, harnesstest.Prompt(sid, "hang"))
	require.NoError(t, err, "returns within the idle budget (plus the kill)")
	harnesstest.RequireIdleTimeout(t, resp)
	require.Equal(t, 0, fakeAlive("hang-prompt"), "no process left")
	require.Contains(t, ed.Text(), "idle_timeout", "the client is told why")
}

// TestRunProtocolACPAndReparse runs 'harness run --protocol acp' on the fake
// ACP agent (as claude's ACP command), then re-normalizes its session log:
// the log's lines are the agent's JSON-RPC messages, and reparse knows them.
func TestRunProtocolACPAndReparse(t *testing.T) {
	home := isolate(t)
	dir := t.TempDir()
	argv, _ := fakeagent.Command("acp-agent")
	r := invoke(t, "", "run", "--agent", "claude", "--protocol", "acp", "--binary", argv[0], "--cwd", dir,
		"--env", fakeagent.EnvVar+"=acp-agent", "--linger", "200ms", "-p", "write it")
	require.Equal(t, 0, r.code, r.stderr)
	adaptertest.CheckStream(t, []byte(r.stdout))
	got, err := os.ReadFile(filepath.Join(dir, fakeagent.ACPFile))
	require.NoError(t, err)
	require.Equal(t, fakeagent.ACPFileText, string(got))

	rr := reparseOnly(t, home)
	evs, err := event.ReadAll(strings.NewReader(rr.stdout))
	require.NoError(t, err)
	res := evs[len(evs)-1].Body.(*event.Result)
	require.Equal(t, event.ResultSuccess, res.Status)
	require.Equal(t, "Done.", res.Text)
	require.Equal(t, "sess-1", res.SessionID)
	require.EqualValues(t, 10, res.Usage.InputTokens)
	var diff string
	for _, ev := range evs {
		if e, ok := ev.Body.(*event.ToolEnd); ok && e.Diff != "" {
			diff = e.Diff
		}
	}
	require.Contains(t, diff, "+"+strings.TrimSuffix(fakeagent.ACPFileText, "\n"), "a creation's diff, from the captured lines")
	live, err := event.ReadAll(strings.NewReader(r.stdout))
	require.NoError(t, err)
	var liveDiff string
	for _, ev := range live {
		if e, ok := ev.Body.(*event.ToolEnd); ok && e.Diff != "" {
			liveDiff = e.Diff
		}
	}
	require.Equal(t, liveDiff, diff, "the reparse gives the run's diff, its hunk headers too")
}

// TestRunCustomACPAgent: any other ACP agent is one config entry, and then
// 'harness run --agent NAME' runs it.
func TestRunCustomACPAgent(t *testing.T) {
	argv, _ := fakeagent.Command("acp-agent")
	home := isolateWith(t, fmt.Sprintf("[agents.fakeacp]\nprotocol = \"acp\"\ncommand = [%q, \"normal\"]\nenv = { %s = \"acp-agent\" }\n", argv[0], fakeagent.EnvVar))
	dir := filepath.Join(home, "work") // the project file is found from the run's cwd up
	require.NoError(t, os.Mkdir(dir, 0o755))
	r := invoke(t, "", "run", "--agent", "fakeacp", "--cwd", dir, "--linger", "200ms", "--no-log", "-p", "write it")
	require.Equal(t, 0, r.code, r.stderr)
	adaptertest.CheckStream(t, []byte(r.stdout))
	got, err := os.ReadFile(filepath.Join(dir, fakeagent.ACPFile))
	require.NoError(t, err)
	require.Equal(t, fakeagent.ACPFileText, string(got))
	require.Contains(t, r.stdout, `"agent":"fakeacp"`)

	r = invoke(t, "", "run", "--agent", "nosuch", "-p", "x")
	require.Equal(t, exitUsage, r.code, "an unknown name that no entry defines")
}

// TestRunACPBadAgentExitStatus: an ACP agent that breaks the protocol is a
// failed run (exit status 1) with one fatal error of class protocol, and
// one that never answers is ended by the idle budget (124).
func TestRunACPBadAgentExitStatus(t *testing.T) {
	isolate(t)
	argv, _ := fakeagent.Command("acp-agent")
	// The idle budget is small only where it is the point: a busy machine
	// can keep a test binary silent for a second while it starts.
	for _, c := range []struct {
		mode, idle string
		code       int
	}{{"bad-version", "30s", exitAgentFailed}, {"bad-json", "30s", exitAgentFailed}, {"undeclared", "30s", exitAgentFailed}, {"no-init", "1s", exitTimeout}} {
		t.Run(c.mode, func(t *testing.T) {
			r := invoke(t, "", "run", "--agent", "claude", "--protocol", "acp", "--binary", argv[0], "--cwd", t.TempDir(),
				"--env", fakeagent.EnvVar+"=acp-agent", "--idle-timeout", c.idle, "--linger", "200ms", "--no-log", "-p", "x", "--", c.mode)
			require.Equal(t, c.code, r.code, r.stdout)
			adaptertest.CheckStream(t, []byte(r.stdout))
			if c.code == exitAgentFailed {
				require.Contains(t, r.stdout, `"class":"protocol"`)
			}
		})
	}
}

// TestMCPStdio drives 'harness mcp' in-process over pipes with the SDK's
// client: the configuration picks the agent's binary (a fake), the run
// writes a session log, and the session ends when the client goes away.
func TestMCPStdio(t *testing.T) {
	isolateWith(t, fakeClaude("slow-drip")+"[mcp]\nidle_min = \"5s\"\nhard_min = \"1s\"\n")

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	status := make(chan int, 1)
	go func() {
		status <- run([]string{"mcp", "--progress-interval", "20ms"}, inR, outW, &stderr)
		outW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_agent",
		Arguments: map[string]any{"agent": "claude-code", "prompt": "say done", "idle_timeout_ms": 1, "hard_timeout_ms": 8000}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%s", harnesstest.MCPText(res))
	s := harnesstest.MCPStructured(t, res)
	require.Equal(t, "success", s.Get("state").String())
	require.Equal(t, "done", s.Get("text").String())
	require.EqualValues(t, 5000, s.Get("budgets.idle_timeout_ms").Int(), "the config's mcp.idle_min is the floor")
	require.EqualValues(t, 8000, s.Get("budgets.hard_timeout_ms").Int())
	require.Len(t, s.Get("budgets.clamped").Array(), 1)
	logPath := s.Get("summary.session_log").String()
	require.NotEmpty(t, logPath)
	events, err := os.ReadFile(logPath)
	require.NoError(t, err, "the run's session log")
	require.Contains(t, string(events), `"type":"result"`)

	// The server's directory (home here) bounds where a client may run.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_agent",
		Arguments: map[string]any{"agent": "claude", "prompt": "x", "cwd": "../../../../etc"}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Contains(t, harnesstest.MCPText(res), "outside the directories this server runs agents in")

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_agents", Arguments: map[string]any{}})
	require.NoError(t, err)
	exe, _ := fakeagent.Command("slow-drip")
	require.Equal(t, exe[0], harnesstest.MCPStructured(t, res).Get(`agents.#(id=="claude").binary`).String())

	require.NoError(t, cs.Close())
	inW.Close()
	select {
	case code := <-status:
		require.Equal(t, 0, code, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("harness mcp did not end when its client went away")
	}
}

// TestServeRefuses: a listener off loopback without a token, and a token
// file that is not one, are usage errors with one line.
func TestServeRefuses(t *testing.T) {
	home := isolate(t)
	short := filepath.Join(home, "short")
	require.NoError(t, os.WriteFile(short, []byte("abc\n"), 0o600))
	for name, tc := range map[string]struct {
		args []string
		msg  string
	}{
		"all-interfaces": {[]string{"serve", "--listen", "0.0.0.0:0"}, "not a loopback address"},
		"lan":            {[]string{"serve", "--listen", "192.168.1.10:7777"}, "not a loopback address"},
		"short-token":    {[]string{"serve", "--listen", "127.0.0.1:0", "--token-file", short}, "at least 16"},
		"bad-address":    {[]string{"serve", "--listen", "127.0.0.1:notaport"}, "serve:"},
	} {
		t.Run(name, func(t *testing.T) {
			r := invoke(t, "", tc.args...)
			require.Equal(t, exitUsage, r.code, r.stderr)
			require.Contains(t, r.stderr, tc.msg)
			require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
		})
	}
}

// TestTokenFileMode: like ssh with a key, serve and mcp refuse a token
// file that other users may write (exit 2, one line) and warn about one
// they may read.
func TestTokenFileMode(t *testing.T) {
	home := isolate(t)
	tok := strings.Repeat("t", 32) + "\n"
	for _, cmd := range []string{"serve", "mcp"} {
		for name, mode := range map[string]os.FileMode{"world-writable": 0o666, "group-writable": 0o620} {
			t.Run(cmd+"/"+name, func(t *testing.T) {
				f := filepath.Join(home, cmd+name)
				require.NoError(t, os.WriteFile(f, []byte(tok), 0o600))
				require.NoError(t, os.Chmod(f, mode))
				r := invoke(t, "", cmd, "--listen", "127.0.0.1:0", "--token-file", f)
				require.Equal(t, exitUsage, r.code, r.stderr)
				require.Contains(t, r.stderr, "writable by other users")
				require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
			})
		}
	}
	t.Run("serve/world-readable", func(t *testing.T) {
		f := filepath.Join(home, "readable")
		require.NoError(t, os.WriteFile(f, []byte(tok), 0o600))
		require.NoError(t, os.Chmod(f, 0o644))
		var out strings.Builder
		got, err := (&serveCmd{TokenFile: f}).token(&out)
		require.NoError(t, err)
		require.Equal(t, strings.TrimSpace(tok), got)
		require.Contains(t, out.String(), "readable by other users (mode 0644)")
	})
}

// TestServeRun: `harness serve` starts a run through the API with the
// configuration's agent (a fake), streams it as NDJSON, lists it, and
// ends cleanly.
func TestServeRun(t *testing.T) {
	home := isolateWith(t, fakeClaude("slow-drip"))
	tokenFile := filepath.Join(home, "token")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	old := serveContext
	serveContext = func() context.Context { return ctx }
	t.Cleanup(func() { serveContext = old })
	api, status := startServe(t, home)
	st, err := os.Stat(tokenFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	started := api.Start(t, `{"agent":"claude-code","prompt":"drip"}`)
	require.Equal(t, "claude", started.Agent)

	res := api.Events(t, ctx, started.Run, map[string]string{"Accept": "application/x-ndjson"})
	stream, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.NoError(t, event.CheckNDJSON(stream))
	lines := strings.Split(strings.TrimSpace(string(stream)), "\n")
	require.Contains(t, lines[len(lines)-1], `"type":"result"`)
	require.Contains(t, lines[len(lines)-1], `"status":"success"`)
	logged, err := os.ReadFile(filepath.Join(home, ".local", "share", "harness", "sessions", started.Run+".ndjson"))
	require.NoError(t, err)
	require.Equal(t, string(logged), string(stream))

	runs := api.JSON(t, "/api/runs?agent=claude", http.StatusOK)["runs"].([]any)
	require.Len(t, runs, 1)
	require.Equal(t, started.Run, runs[0].(map[string]any)["run"])

	cancel()
	select {
	case code := <-status:
		require.Equal(t, exitOK, code)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// TestRunACPHostileAgent: an ACP agent that floods permission requests and
// never reads its stdin ends with a protocol error (it used to hold
// harness until the timeout, its answers queued without end), and after a
// fatal protocol error nothing the agent says becomes an event but the
// result (later chunks and calls used to).
func TestRunACPHostileAgent(t *testing.T) {
	isolate(t)
	argv, _ := fakeagent.Command("acp-hostile")
	for _, c := range []struct{ mode, message string }{
		{"flood-permission", "does not read harness's answers"},
		{"fatal-then-more", "not a JSON-RPC message"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			r := invoke(t, "", "run", "--agent", "claude", "--protocol", "acp", "--binary", argv[0], "--cwd", t.TempDir(),
				"--env", fakeagent.EnvVar+"=acp-hostile", "--timeout", "60s", "--linger", "200ms", "--no-log", "-p", "x", "--", c.mode)
			require.Equal(t, exitAgentFailed, r.code, r.stdout)
			adaptertest.CheckStream(t, []byte(r.stdout))
			evs, err := event.ReadAll(strings.NewReader(r.stdout))
			require.NoError(t, err)
			fatal := -1
			for i, ev := range evs {
				if e, ok := ev.Body.(*event.Error); ok && e.Fatal {
					fatal = i
					require.Equal(t, event.ClassProtocol, e.Class)
					require.Contains(t, e.Message, c.message)
				}
			}
			require.Positive(t, fatal, r.stdout)
			for _, ev := range evs[fatal+1 : len(evs)-1] {
				// Only the supervisor's word that it ended the agent.
				w, ok := ev.Body.(*event.Warning)
				require.True(t, ok && w.Code == event.WarnLingeredAfterResult, "after the fatal error: %s", r.stdout)
			}
			require.IsType(t, &event.Result{}, evs[len(evs)-1].Body)
		})
	}
}

// TestReparseReadsLoggedProtocol: an ACP run's session log records its
// protocol, and reparse reads it there, whatever the agent printed first
// (a banner before its first JSON-RPC message); a log without the field,
// as harness wrote before it, is still told by its first line.
func TestReparseReadsLoggedProtocol(t *testing.T) {
	home := isolate(t)
	argv, _ := fakeagent.Command("acp-agent")
	r := invoke(t, "", "run", "--agent", "claude", "--protocol", "acp", "--binary", argv[0], "--cwd", t.TempDir(),
		"--env", fakeagent.EnvVar+"=acp-agent", "--linger", "200ms", "-p", "write it")
	require.Equal(t, 0, r.code, r.stderr)
	metas, err := filepath.Glob(filepath.Join(home, ".local", "share", "harness", "sessions", "run_*.meta.json"))
	require.NoError(t, err)
	require.Len(t, metas, 1)
	run := strings.TrimSuffix(filepath.Base(metas[0]), ".meta.json")
	meta, err := os.ReadFile(metas[0])
	require.NoError(t, err)
	require.Contains(t, string(meta), `"protocol": "acp"`)
	reparsed := func() *event.Result {
		t.Helper()
		rr := invoke(t, "", "sessions", "reparse", run)
		require.Equal(t, 0, rr.code, rr.stderr)
		evs, err := event.ReadAll(strings.NewReader(rr.stdout))
		require.NoError(t, err)
		return evs[len(evs)-1].Body.(*event.Result)
	}

	nativePath := strings.TrimSuffix(metas[0], ".meta.json") + ".native.jsonl"
	native, err := os.ReadFile(nativePath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(nativePath, append([]byte("starting the ACP server\n"), native...), 0o600))
	res := reparsed()
	require.Equal(t, event.ResultSuccess, res.Status, "the recorded protocol, not the first line")
	require.Equal(t, "Done.", res.Text)

	require.NoError(t, os.WriteFile(nativePath, native, 0o600))
	require.NoError(t, os.WriteFile(metas[0], bytes.Replace(meta, []byte(`"protocol": "acp"`), []byte(`"protocol": ""`), 1), 0o600))
	res = reparsed()
	require.Equal(t, event.ResultSuccess, res.Status, "an old log: its first line shows JSON-RPC")
	require.Equal(t, "Done.", res.Text)
}

// TestSessionCommand: 'harness session' reads NDJSON commands on stdin —
// two prompts, a line that is no command and one of an unknown type (each
// reported on stderr and skipped), then the end, and a line after it
// (reported, not carried out) — and writes one stream of
// two turns of one agent process; exit 0, no process left.
func TestSessionCommand(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	argv, _ := fakeagent.Command("acp-agent")
	stdin := `{"type":"prompt","text":"write it"}
not json
{"type":"dance"}
{"type":"answer","call_id":"nope","allow":true}

{"type":"prompt","text":"once more"}
{"type":"end"}
{"type":"prompt","text":"after the end: never carried out"}
`
	r := invoke(t, stdin, "session", "--agent", "claude", "--protocol", "acp", "--binary", argv[0], "--cwd", dir,
		"--env", fakeagent.EnvVar+"=acp-agent", "--linger", "200ms", "--idle-timeout", "5s")
	require.Equal(t, 0, r.code, r.stderr)
	adaptertest.CheckStream(t, []byte(r.stdout))
	require.Equal(t, []string{
		"harness: session: line 2: not a JSON command: invalid character 'o' in literal null (expecting 'u')",
		`harness: session: line 3: unknown command type "dance" (want prompt, interrupt, answer or end)`,
		`harness: session: line 4: no permission request "nope" is waiting`,
		"harness: session: line 8: after the end command (line 7): skipped, and so is any line after it",
	}, strings.Split(strings.TrimSpace(r.stderr), "\n"))
	evs, err := event.ReadAll(strings.NewReader(r.stdout))
	require.NoError(t, err)
	require.Len(t, harnesstest.Bodies(evs, event.TypeTurnEnd), 2)
	require.Equal(t, "once more", harnesstest.Bodies(evs, event.TypeTurnStart)[1].(*event.TurnStart).Prompt)
	require.Equal(t, event.ResultSuccess, evs[len(evs)-1].Body.(*event.Result).Status)
	for n := 1; n <= 2; n++ {
		_, err := os.Stat(filepath.Join(dir, fakeagent.TurnFile(n)))
		require.NoError(t, err)
	}
	pid := evs[0].Body.(*event.SessionStart).PID
	require.False(t, process.Alive(pid), "the agent is still alive")
}

// TestSessionCommandEmptyInput: end of input at once ends a session of no
// turn cleanly.
func TestSessionCommandEmptyInput(t *testing.T) {
	isolate(t)
	argv, _ := fakeagent.Command("acp-agent")
	r := invoke(t, "", "session", "--agent", "claude", "--protocol", "acp", "--binary", argv[0], "--cwd", t.TempDir(),
		"--env", fakeagent.EnvVar+"=acp-agent", "--linger", "200ms")
	require.Equal(t, 0, r.code, r.stderr)
	adaptertest.CheckStream(t, []byte(r.stdout))
	require.Empty(t, r.stderr)
}

// TestSessionCommandClaudeDefault: 'harness session --agent claude' speaks
// Claude Code's own protocol unless told otherwise: stream-json input on
// its command line, a user message a prompt, a turn a result.
func TestSessionCommandClaudeDefault(t *testing.T) {
	isolate(t)
	argv, _ := fakeagent.Command(fakeagent.ClaudeStream)
	stdin := `{"type":"prompt","text":"one"}
{"type":"prompt","text":"two"}
`
	r := invoke(t, stdin, "session", "--agent", "claude", "--binary", argv[0], "--cwd", t.TempDir(),
		"--env", fakeagent.EnvVar+"="+fakeagent.ClaudeStream, "--linger", "5s", "--idle-timeout", "5s")
	require.Equal(t, 0, r.code, r.stderr)
	adaptertest.CheckStream(t, []byte(r.stdout))
	evs, err := event.ReadAll(strings.NewReader(r.stdout))
	require.NoError(t, err)
	ss := evs[0].Body.(*event.SessionStart)
	require.Contains(t, ss.Argv, "--input-format")
	require.Equal(t, "fake-1", ss.SessionID)
	ends := harnesstest.Bodies(evs, event.TypeTurnEnd)
	require.Len(t, ends, 2)
	require.Equal(t, "answer 2", ends[1].(*event.TurnEnd).Text)
	require.False(t, evs[len(evs)-1].Body.(*event.Result).LingeredAfterDone)
}

// sessionProtocols are the protocols that hold several turns, each with
// its agent's flags and the fake that speaks it.
var sessionProtocols = []struct {
	name string
	args []string
	fake string
}{
	{"stream-json", []string{"--agent", "claude", "--protocol", "stream-json"}, fakeagent.ClaudeStream},
	{"app-server", []string{"--agent", "codex", "--protocol", "app-server"}, fakeagent.CodexAppServer},
	{"acp", []string{"--agent", "claude", "--protocol", "acp"}, "acp-agent"},
}

// TestSessionReparse: 'sessions reparse' of a live session's log rebuilds
// its turns as the session emitted them — the same events (the
// session_start's cwd too), the same turns, prompts, statuses, answers
// and usage — over each protocol that
// holds several turns (the prompts and the harness's own decisions come
// from the recorded stream, the rest from the agent's lines).
func TestSessionReparse(t *testing.T) {
	for _, tc := range sessionProtocols {
		t.Run(tc.name, func(t *testing.T) {
			home := isolate(t)
			argv, _ := fakeagent.Command(tc.fake)
			args := append([]string{"session"}, tc.args...)
			args = append(args, "--binary", argv[0], "--cwd", t.TempDir(), "--env", fakeagent.EnvVar+"="+tc.fake,
				"--linger", "5s", "--idle-timeout", "5s")
			r := invoke(t, `{"type":"prompt","text":"one"}`+"\n"+`{"type":"prompt","text":"two"}`+"\n", args...)
			require.Equal(t, 0, r.code, r.stderr)
			rr := reparseOnly(t, home)
			require.Equal(t, harnesstest.ReparseParts(t, []byte(r.stdout)), harnesstest.ReparseParts(t, []byte(rr.stdout)))
			require.Equal(t, sessionStartOf(t, r.stdout), sessionStartOf(t, rr.stdout), "cwd and model as recorded")
			evs, err := event.ReadAll(strings.NewReader(rr.stdout))
			require.NoError(t, err)
			require.Len(t, harnesstest.Bodies(evs, event.TypeTurnEnd), 2)
		})
	}
}

// TestSessionWithoutPromptsReparses: a session sent no prompt reparses to
// its recorded stream (a session_start and a successful result). Its
// stream holds no turn, and the reparse took it for a one-prompt run's:
// no session id, no_terminal_event, result error. The meta says "live".
func TestSessionWithoutPromptsReparses(t *testing.T) {
	for _, tc := range sessionProtocols {
		t.Run(tc.name, func(t *testing.T) {
			home := isolate(t)
			argv, _ := fakeagent.Command(tc.fake)
			args := append([]string{"session"}, tc.args...)
			args = append(args, "--binary", argv[0], "--cwd", t.TempDir(), "--env", fakeagent.EnvVar+"="+tc.fake,
				"--linger", "5s", "--idle-timeout", "5s")
			r := invoke(t, "", args...)
			require.Equal(t, 0, r.code, r.stderr)
			rr := reparseOnly(t, home)
			require.Equal(t, harnesstest.ReparseParts(t, []byte(r.stdout)), harnesstest.ReparseParts(t, []byte(rr.stdout)))
			require.Equal(t, sessionStartOf(t, r.stdout), sessionStartOf(t, rr.stdout))
		})
	}
}

// TestReparseACPReadOnly: 'sessions reparse' of an ACP session and of a
// one-prompt ACP run with --permissions read-only gives the recorded
// stream again (the fake offers no mode to set: the prompt is request 3,
// which a replay as full-access took for the answer to its set_mode; the
// edit refused ends denied), with the session_start's cwd and model, and
// the usage the agent reported without a cost priced as the run priced
// it (the registry's price of the run's model).
func TestReparseACPReadOnly(t *testing.T) {
	argv, _ := fakeagent.Command("acp-agent")
	conf := fmt.Sprintf("[agents.fake]\nprotocol = \"acp\"\ncommand = [%q, \"no-cost\"]\nenv = { %s = \"acp-agent\" }\n", argv[0], fakeagent.EnvVar)
	for _, tc := range []struct{ name, stdin string }{
		{"session", `{"type":"prompt","text":"one"}` + "\n" + `{"type":"prompt","text":"two"}` + "\n"},
		{"run", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := isolateWith(t, conf)
			dir := filepath.Join(home, "work") // the project file is found from the run's cwd up
			require.NoError(t, os.Mkdir(dir, 0o755))
			args := []string{tc.name, "--agent", "fake", "--permissions", "read-only", "--model", "claude-sonnet-4-5",
				"--cwd", dir, "--linger", "5s", "--idle-timeout", "5s"}
			if tc.name == "run" {
				args = append(args, "-p", "write it")
			}
			r := invoke(t, tc.stdin, args...)
			require.Equal(t, 0, r.code, r.stderr)
			adaptertest.CheckStream(t, []byte(r.stdout))
			evs, err := event.ReadAll(strings.NewReader(r.stdout))
			require.NoError(t, err)
			for _, b := range harnesstest.Bodies(evs, event.TypeToolEnd) {
				if e := b.(*event.ToolEnd); e.Kind == event.KindEdit {
					require.Equal(t, event.StatusDenied, e.Status, r.stdout)
				}
			}
			require.True(t, evs[len(evs)-1].Body.(*event.Result).CostEstimated, "the run priced its usage\n%s", r.stdout)

			rr := reparseOnly(t, home)
			require.Equal(t, harnesstest.ReparseParts(t, []byte(r.stdout)), harnesstest.ReparseParts(t, []byte(rr.stdout)))
			require.Equal(t, sessionStartOf(t, r.stdout), sessionStartOf(t, rr.stdout), "cwd and model as recorded")
		})
	}
}

// sessionStartOf is the session_start of stream, without what only a
// process has.
func sessionStartOf(t *testing.T, stream string) event.SessionStart {
	t.Helper()
	evs, err := event.ReadAll(strings.NewReader(stream))
	require.NoError(t, err)
	ss := *evs[0].Body.(*event.SessionStart)
	ss.PID, ss.Argv = 0, nil
	return ss
}

// TestRunProtocolStreamJSON: 'harness run --protocol stream-json' is one
// prompt over Claude Code's own protocol: the prompt is the one user
// message, the CLI's result the run's, and its log reparses to the same
// stream; another agent is refused with one line, exit 2.
func TestRunProtocolStreamJSON(t *testing.T) {
	home := isolate(t)
	argv, _ := fakeagent.Command(fakeagent.ClaudeStream)
	r := invoke(t, "", "run", "--agent", "claude", "--protocol", "stream-json", "--binary", argv[0], "--cwd", t.TempDir(),
		"--env", fakeagent.EnvVar+"="+fakeagent.ClaudeStream, "--linger", "5s", "-p", "hello")
	require.Equal(t, 0, r.code, r.stderr)
	adaptertest.CheckStream(t, []byte(r.stdout))
	evs, err := event.ReadAll(strings.NewReader(r.stdout))
	require.NoError(t, err)
	require.Contains(t, evs[0].Body.(*event.SessionStart).Argv, "--input-format")
	require.Empty(t, harnesstest.Bodies(evs, event.TypeTurnStart), "a run has no turns")
	res := evs[len(evs)-1].Body.(*event.Result)
	require.Equal(t, event.ResultSuccess, res.Status)
	require.Equal(t, "answer 1", res.Text)

	rr := reparseOnly(t, home)
	require.Equal(t, harnesstest.ReparseParts(t, []byte(r.stdout)), harnesstest.ReparseParts(t, []byte(rr.stdout)))

	r = invoke(t, "", "run", "--agent", "codex", "--protocol", "stream-json", "--binary", argv[0], "-p", "hello")
	require.Equal(t, 2, r.code, r.stderr)
	require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, r.stderr)
	require.Contains(t, r.stderr, `protocol "stream-json" is claude's own`)
}

// reparseOnly reparses the one run logged under home: exit 0, a valid
// stream.
func reparseOnly(t *testing.T, home string) result {
	t.Helper()
	logged, err := filepath.Glob(filepath.Join(home, ".local", "share", "harness", "sessions", "run_*.meta.json"))
	require.NoError(t, err)
	require.Len(t, logged, 1)
	rr := invoke(t, "", "sessions", "reparse", strings.TrimSuffix(filepath.Base(logged[0]), ".meta.json"))
	require.Equal(t, 0, rr.code, rr.stderr)
	adaptertest.CheckStream(t, []byte(rr.stdout))
	return rr
}

// TestParseLiveProtocols: 'harness parse' reads a capture of Claude
// Code's stream-json and of codex app-server (their stdout alone: no
// prompt, so no turns): a valid stream whose result is the last answer.
func TestParseLiveProtocols(t *testing.T) {
	for _, tc := range []struct{ agent, protocol, capture, text string }{
		{"claude", "stream-json", "../../adapters/claude/testdata/live/two-turns.jsonl", "DONE: second file"},
		{"codex", "app-server", "../../adapters/codex/testdata/appserver/converse.jsonl", "DONE: second file"},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			capture, err := os.ReadFile(tc.capture)
			require.NoError(t, err)
			var native []byte
			for line := range strings.Lines(string(capture)) {
				if !strings.HasPrefix(line, ">>>") { // the live test's directives, not the agent's lines
					native = append(native, line...)
				}
			}
			file := filepath.Join(t.TempDir(), "native.jsonl")
			require.NoError(t, os.WriteFile(file, native, 0o600))
			r := invoke(t, "", "parse", "--agent", tc.agent, "--protocol", tc.protocol, file)
			require.Equal(t, 0, r.code, r.stderr)
			adaptertest.CheckStream(t, []byte(r.stdout))
			evs, err := event.ReadAll(strings.NewReader(r.stdout))
			require.NoError(t, err)
			require.Equal(t, tc.text, evs[len(evs)-1].Body.(*event.Result).Text)
		})
	}
}
