package acpserver

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
)

func TestMain(m *testing.M) { harnesstest.Main(m) }

// startServer serves ACP in-process over the ACP fake named fake in mode
// (an agent given by its command, as 'harness acp --protocol acp
// --command' gives it), connects an editor and opens a session in a
// fresh directory.
func startServer(t *testing.T, fake, mode string) (*acpsdk.ClientSideConnection, *harnesstest.Editor, acpsdk.SessionId, string) {
	t.Helper()
	argv, _ := fakeagent.Command(fake)
	settings := &harness.Settings{}
	task := func(cwd, prompt string) harness.Task {
		b := settings.Budgets()
		b.Linger, b.KillGrace = 200*time.Millisecond, 200*time.Millisecond
		return harness.Task{Agent: "fake", Cwd: cwd, Prompt: prompt, Protocol: harness.ProtocolACP,
			Command: []string{argv[0], mode}, Env: []string{fakeagent.EnvVar + "=" + fake}, Budgets: &b}
	}
	return harnesstest.ServeACP(t, func(in io.Reader, out io.Writer) {
		Serve(context.Background(), in, out, Options{Start: settings.Start, Task: task, Version: "test"})
	})
}

// TestACPServerSecondPromptIsRefused: a session/prompt on a session whose
// prompt is running is refused (Invalid request) and the running turn
// goes on untouched to its own end; the session then takes a prompt
// again. The SDK used to cancel the running turn first.
func TestACPServerSecondPromptIsRefused(t *testing.T) {
	conn, ed, sid, dir := startServer(t, "acp-hostile", "wait-go")
	fifo := filepath.Join(dir, fakeagent.ACPGoFifo)
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	// Held open for writing from here on: the fake's open never blocks,
	// and its read waits for a line.
	gate, err := os.OpenFile(fifo, os.O_RDWR, 0)
	require.NoError(t, err)
	defer gate.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	first := harnesstest.PromptUntilTool(ctx, t, conn, ed, sid, "one")
	_, err = conn.Prompt(ctx, harnesstest.Prompt(sid, "two"))
	var re *acpsdk.RequestError
	require.ErrorAs(t, err, &re)
	require.Equal(t, -32600, re.Code, "Invalid request")
	require.Contains(t, fmt.Sprint(re.Data), "already running")

	_, err = gate.WriteString("go\n")
	require.NoError(t, err)
	a := <-first
	require.NoError(t, a.Err)
	require.Equal(t, acpsdk.StopReasonEndTurn, a.Resp.StopReason, "the first turn ran to its end")
	require.Equal(t, "went", ed.Text())

	_, err = gate.WriteString("go\n")
	require.NoError(t, err)
	resp, err := conn.Prompt(ctx, harnesstest.Prompt(sid, "three"))
	require.NoError(t, err)
	require.Equal(t, acpsdk.StopReasonEndTurn, resp.StopReason, "the session is free again")
}

// TestACPServerOversizePrompt: a prompt over the line cap gets a JSON-RPC
// error, and the connection goes on (harness acp used to exit 0 without
// an answer: the SDK's reader ends at a line over 10 MiB).
func TestACPServerOversizePrompt(t *testing.T) {
	conn, _, sid, dir := startServer(t, "acp-agent", "normal")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err := conn.Prompt(ctx, harnesstest.Prompt(sid, strings.Repeat("x", 12<<20)))
	var re *acpsdk.RequestError
	require.ErrorAs(t, err, &re)
	require.Equal(t, -32600, re.Code, "Invalid request")
	require.Contains(t, fmt.Sprint(re.Data), "up to 8388608 bytes")

	resp, err := conn.Prompt(ctx, harnesstest.Prompt(sid, "write hello.txt"))
	require.NoError(t, err)
	require.Equal(t, acpsdk.StopReasonEndTurn, resp.StopReason)
	_, err = os.Stat(filepath.Join(dir, fakeagent.ACPFile))
	require.NoError(t, err)
}
