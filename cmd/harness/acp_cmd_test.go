package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
)

// startACPSession starts 'harness acp' in-process over the fake ACP agent
// in mode, connects an editor, and opens a session in a fresh directory.
func startACPSession(t *testing.T, mode string, flags ...string) (*acpsdk.ClientSideConnection, *harnesstest.Editor, acpsdk.SessionId, string) {
	t.Helper()
	isolate(t)
	argv, _ := fakeagent.Command("acp-agent")
	args := append([]string{"acp", "--agent", "fake", "--protocol", "acp", "--command", argv[0], "--command", mode,
		"--env", fakeagent.EnvVar + "=acp-agent", "--linger", "200ms", "--kill-grace", "200ms"}, flags...)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(args, inR, outW, io.Discard)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case code := <-done:
			require.Equal(t, 0, code)
		case <-time.After(10 * time.Second):
			t.Error("harness acp did not end at EOF")
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	dir := t.TempDir()
	conn, ed, sid := harnesstest.Connect(t, ctx, inW, outR, dir)
	return conn, ed, sid, dir
}

// fakeAlive counts live processes of the fake ACP agent in mode.
func fakeAlive(mode string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		pid, _ := strconv.Atoi(e.Name())
		if len(args) >= 2 && args[1] == mode && strings.HasSuffix(args[0], filepath.Base(os.Args[0])) && harnesstest.Alive(pid) {
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
	type answer struct {
		resp acpsdk.PromptResponse
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		r, err := conn.Prompt(ctx, harnesstest.Prompt(sid, "sleep"))
		got <- answer{r, err}
	}()
	select {
	case <-ed.ToolCalled():
	case <-ctx.Done():
		t.Fatal("no tool_call")
	}
	require.Equal(t, 1, fakeAlive("slow-tool"))
	require.NoError(t, conn.Cancel(ctx, acpsdk.CancelNotification{SessionId: sid}))
	a := <-got
	require.NoError(t, a.err)
	require.Equal(t, acpsdk.StopReasonCancelled, a.resp.StopReason)
	require.Equal(t, 0, fakeAlive("slow-tool"), "no process left")
}

func TestACPServerHungAgentReturnsWithinIdle(t *testing.T) {
	conn, ed, sid, _ := startACPSession(t, "hang-prompt", "--idle-timeout", "300ms")
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	start := time.Now()
	resp, err := conn.Prompt(ctx, harnesstest.Prompt(sid, "hang"))
	require.NoError(t, err)
	require.Less(t, time.Since(start), 3*time.Second, "returns within the idle budget (plus the kill)")
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

	logged, err := filepath.Glob(filepath.Join(home, ".local", "share", "harness", "sessions", "run_*.ndjson"))
	require.NoError(t, err)
	require.Len(t, logged, 1)
	rr := invoke(t, "", "sessions", "reparse", strings.TrimSuffix(filepath.Base(logged[0]), ".ndjson"))
	require.Equal(t, 0, rr.code, rr.stderr)
	adaptertest.CheckStream(t, []byte(rr.stdout))
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
	for _, c := range []struct {
		mode string
		code int
	}{{"bad-version", exitAgentFailed}, {"bad-json", exitAgentFailed}, {"undeclared", exitAgentFailed}, {"no-init", exitTimeout}} {
		t.Run(c.mode, func(t *testing.T) {
			r := invoke(t, "", "run", "--agent", "claude", "--protocol", "acp", "--binary", argv[0], "--cwd", t.TempDir(),
				"--env", fakeagent.EnvVar+"=acp-agent", "--idle-timeout", "1s", "--linger", "200ms", "--no-log", "-p", "x", "--", c.mode)
			require.Equal(t, c.code, r.code, r.stdout)
			adaptertest.CheckStream(t, []byte(r.stdout))
			if c.code == exitAgentFailed {
				require.Contains(t, r.stdout, `"class":"protocol"`)
			}
		})
	}
}
