package acpserver

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
)

// TestACPServerPanicAnswered: a panic in a prompt's handler, on a
// goroutine of the SDK's (here in the caller's Task, then in its Start,
// which runs with the session locked), answers that prompt with an
// internal error, and the server and the session go on.
func TestACPServerPanicAnswered(t *testing.T) {
	argv, _ := fakeagent.Command("acp-agent")
	settings := &harness.Settings{}
	task := func(cwd, prompt string) harness.Task {
		if prompt == "panic in task" {
			panic("task exploded")
		}
		b := settings.Budgets()
		b.Linger, b.KillGrace = 200*time.Millisecond, 200*time.Millisecond
		return harness.Task{Agent: "fake", Cwd: cwd, Prompt: prompt, Protocol: harness.ProtocolACP,
			Command: []string{argv[0], "normal"}, Env: []string{fakeagent.EnvVar + "=acp-agent"}, Budgets: &b}
	}
	start := func(ctx context.Context, t harness.Task, o harness.Options) (*harness.Run, error) {
		if t.Prompt == "panic in start" {
			panic("start exploded")
		}
		return settings.Start(ctx, t, o)
	}
	conn, _, sid, dir := harnesstest.ServeACP(t, func(in io.Reader, out io.Writer) {
		Serve(context.Background(), in, out, Options{Start: start, Task: task, Version: "test"})
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for _, what := range []string{"task", "start"} {
		_, err := conn.Prompt(ctx, harnesstest.Prompt(sid, "panic in "+what))
		var re *acpsdk.RequestError
		require.ErrorAs(t, err, &re, what)
		require.Equal(t, -32603, re.Code, "Internal error")
		require.Contains(t, fmt.Sprint(re.Data), what+" exploded")
	}
	resp, err := conn.Prompt(ctx, harnesstest.Prompt(sid, "write hello.txt"))
	require.NoError(t, err)
	require.Equal(t, acpsdk.StopReasonEndTurn, resp.StopReason, "the session goes on")
	_, err = os.Stat(filepath.Join(dir, fakeagent.ACPFile))
	require.NoError(t, err)
}

// TestACPServerPanicInWaitFreesSession: a panic at a prompt's run's end
// (here in the Close of an observer Start gave the run, called by Wait
// on the prompt's goroutine) answers that prompt with an internal error,
// and the session takes the next prompt: it is not left busy with the
// run that is over.
func TestACPServerPanicInWaitFreesSession(t *testing.T) {
	argv, _ := fakeagent.Command("acp-agent")
	settings := &harness.Settings{}
	task := func(cwd, prompt string) harness.Task {
		b := settings.Budgets()
		b.Linger, b.KillGrace = 200*time.Millisecond, 200*time.Millisecond
		return harness.Task{Agent: "fake", Cwd: cwd, Prompt: prompt, Protocol: harness.ProtocolACP,
			Command: []string{argv[0], "normal"}, Env: []string{fakeagent.EnvVar + "=acp-agent"}, Budgets: &b}
	}
	start := func(ctx context.Context, t harness.Task, o harness.Options) (*harness.Run, error) {
		if t.Prompt == "panic at the end" {
			o.Observers = append(o.Observers, harness.Observer{Close: func(*event.Result) { panic("close exploded") }})
		}
		return settings.Start(ctx, t, o)
	}
	conn, _, sid, _ := harnesstest.ServeACP(t, func(in io.Reader, out io.Writer) {
		Serve(context.Background(), in, out, Options{Start: start, Task: task, Version: "test"})
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err := conn.Prompt(ctx, harnesstest.Prompt(sid, "panic at the end"))
	var re *acpsdk.RequestError
	require.ErrorAs(t, err, &re)
	require.Equal(t, -32603, re.Code, "Internal error")
	require.Contains(t, fmt.Sprint(re.Data), "close exploded")
	resp, err := conn.Prompt(ctx, harnesstest.Prompt(sid, "write hello.txt"))
	require.NoError(t, err, "the session goes on")
	require.Equal(t, acpsdk.StopReasonEndTurn, resp.StopReason)
}
