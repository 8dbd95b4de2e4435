package acpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
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

// TestACPServerCancelBeforeRunStarts: a session/cancel taken after its
// prompt was read but before the prompt's run started interrupts the run
// as soon as it starts, and the prompt answers cancelled. Sent in the
// same write as its prompt, the cancel was lost about 4 times in 10 (it
// found no run) and the run went on.
func TestACPServerCancelBeforeRunStarts(t *testing.T) {
	argv, env := fakeagent.Command("hang-silent")
	srv := newServer(Options{Start: harness.Start, Version: "test", Task: func(cwd, prompt string) harness.Task {
		b := harness.DefaultBudgets()
		b.Linger, b.KillGrace = 200*time.Millisecond, 200*time.Millisecond
		return harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env, Cwd: cwd, Prompt: prompt, Budgets: &b}
	}})
	_, _, sid, _ := harnesstest.ServeACP(t, func(in io.Reader, out io.Writer) {
		srv.serve(context.Background(), in, out, nil)
	})
	// The order at its worst: input reads the prompt (its session is
	// claimed) and takes the cancel before the SDK calls Prompt.
	require.True(t, srv.claim(sid))
	require.NoError(t, srv.Cancel(t.Context(), acpsdk.CancelNotification{SessionId: sid}))
	answer := make(chan acpsdk.PromptResponse, 1)
	go func() {
		resp, _ := srv.Prompt(context.Background(), harnesstest.Prompt(sid, "x"))
		answer <- resp
	}()
	select {
	case resp := <-answer:
		require.Equal(t, acpsdk.StopReasonCancelled, resp.StopReason)
	case <-time.After(10 * time.Second):
		t.Fatal("the cancel was lost: the run goes on")
	}

	// The cancel was that prompt's, and one on a session with no prompt
	// is nobody's: neither waits for the next prompt.
	require.NoError(t, srv.Cancel(t.Context(), acpsdk.CancelNotification{SessionId: sid}))
	s := srv.lookup(sid)
	s.mu.Lock()
	defer s.mu.Unlock()
	require.False(t, s.busy || s.cancel || s.run != nil, "the session is free, with no cancel pending")
}

// TestACPServerPromptAfterClientLeft: a prompt read before the client
// went away but started after the server stopped its runs starts none:
// no run outlives Serve.
func TestACPServerPromptAfterClientLeft(t *testing.T) {
	srv := newServer(Options{Version: "test", Start: func(context.Context, harness.Task, harness.Options) (*harness.Run, error) {
		t.Error("a run started after the server stopped")
		return nil, errors.New("no")
	}, Task: func(cwd, prompt string) harness.Task { return harness.Task{} }})
	inR, inW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.serve(context.Background(), inR, io.Discard, nil)
	}()
	sess, err := srv.NewSession(t.Context(), acpsdk.NewSessionRequest{Cwd: t.TempDir()})
	require.NoError(t, err)
	require.True(t, srv.claim(sess.SessionId))
	inW.Close()
	<-done
	resp, err := srv.Prompt(t.Context(), harnesstest.Prompt(sess.SessionId, "x"))
	require.NoError(t, err)
	require.Equal(t, acpsdk.StopReasonCancelled, resp.StopReason)
}

// stuckWriter is the stdout of a client that read one message and then
// stopped reading: its first write is passed on to first, and every
// later one blocks (blocked is closed when the first does) until the
// test ends.
type stuckWriter struct {
	first, blocked, release chan struct{}
	n                       atomic.Int32
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	switch w.n.Add(1) {
	case 1:
		close(w.first)
		return len(p), nil
	case 2:
		close(w.blocked)
	}
	<-w.release
	return 0, io.ErrClosedPipe
}

// TestACPServerEndsWhenClientStopsReading: once the client closed its end
// of stdin, a run blocked writing its events to a stdout nobody reads is
// let go after the write grace: Serve returns, no run left, without the
// prompt's answer, which nobody reads either. It waited forever on the
// full pipe.
func TestACPServerEndsWhenClientStopsReading(t *testing.T) {
	argv, env := fakeagent.Command("hang-after-output")
	srv := newServer(Options{Start: harness.Start, Version: "test", Task: func(cwd, prompt string) harness.Task {
		b := harness.DefaultBudgets()
		b.Linger, b.KillGrace = 200*time.Millisecond, 200*time.Millisecond
		return harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env, Cwd: cwd, Prompt: prompt, Budgets: &b}
	}})
	srv.writeGrace = 100 * time.Millisecond
	w := &stuckWriter{first: make(chan struct{}), blocked: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() { close(w.release) })
	inR, inW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.serve(context.Background(), inR, w, nil)
	}()
	_, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	require.NoError(t, err)
	<-w.first // answered: the connection is set up
	sess, err := srv.NewSession(t.Context(), acpsdk.NewSessionRequest{Cwd: t.TempDir()})
	require.NoError(t, err)
	// Through the SDK: Serve waits for the prompt's answer to be written,
	// and no more than the grace.
	_, err = fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"x"}]}}`+"\n", sess.SessionId)
	require.NoError(t, err)
	<-w.blocked // the run's first update waits for a reader that never comes

	inW.Close()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Serve waits forever on a client that reads nothing")
	}
}

// slowReader is the stdout of a client that reads slowly: each message
// is taken a moment after it is written, and kept.
type slowReader struct {
	mu  sync.Mutex
	out bytes.Buffer
}

func (w *slowReader) Write(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(p)
}

// answer returns the answer to the request of id, or nil.
func (w *slowReader) answer(t *testing.T, id int) map[string]any {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for line := range strings.Lines(w.out.String()) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		if _, req := m["method"]; !req && m["id"] == float64(id) {
			return m
		}
	}
	return nil
}

// TestACPServerAnswersPromptWhenStdinCloses: stdin closing while a
// prompt runs interrupts the run, and the prompt's answer (cancelled) is
// written before Serve returns, after which 'harness acp' exits. Serve
// returned once the run was over, before the SDK wrote the answer, and
// the answer was lost 2 times in 6.
func TestACPServerAnswersPromptWhenStdinCloses(t *testing.T) {
	argv, env := fakeagent.Command("hang-silent")
	for i := range 20 {
		started := make(chan struct{}, 1)
		srv := newServer(Options{Version: "test",
			Start: func(ctx context.Context, task harness.Task, o harness.Options) (*harness.Run, error) {
				r, err := harness.Start(ctx, task, o)
				started <- struct{}{}
				return r, err
			},
			Task: func(cwd, prompt string) harness.Task {
				b := harness.DefaultBudgets()
				b.Linger, b.KillGrace = 200*time.Millisecond, 200*time.Millisecond
				return harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env, Cwd: cwd, Prompt: prompt, Budgets: &b}
			}})
		w := &slowReader{}
		inR, inW := io.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			srv.serve(context.Background(), inR, w, nil)
		}()
		sess, err := srv.NewSession(t.Context(), acpsdk.NewSessionRequest{Cwd: t.TempDir()})
		require.NoError(t, err)
		_, err = fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"x"}]}}`+"\n", sess.SessionId)
		require.NoError(t, err)
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatal("the prompt's run did not start")
		}

		inW.Close()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("Serve did not return after stdin closed")
		}
		a := w.answer(t, 2)
		require.NotNil(t, a, "trial %d: Serve returned before the prompt's answer was written", i)
		result, _ := a["result"].(map[string]any)
		require.Equal(t, "cancelled", result["stopReason"], "trial %d: %v", i, a)
	}
}
