package mcpserver_test

import (
	"bufio"
	"context"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/mcpserver"
)

// pipeClient is a client of ServeStdio that reads its output only when
// told to, as a client that stops reading stdout.
type pipeClient struct {
	f    *fixture
	in   *io.PipeWriter
	outR *io.PipeReader
	out  *bufio.Reader
}

// newPipeClient serves a session with the given write grace, and
// initializes it.
func newPipeClient(t *testing.T, grace time.Duration) *pipeClient {
	t.Helper()
	return newPipeClientCtx(t, context.Background(), grace)
}

// newPipeClientCtx is newPipeClient serving until ctx is done.
func newPipeClientCtx(t *testing.T, ctx context.Context, grace time.Duration) *pipeClient {
	t.Helper()
	f := &fixture{runDone: make(chan error, 1), logDir: t.TempDir()}
	f.srv = mcpserver.New(f.options(nil))
	mcpserver.SetWriteGrace(f.srv, grace)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		err := f.srv.ServeStdio(ctx, inR, outW)
		inR.CloseWithError(io.ErrClosedPipe) // a write after the end fails, not hangs
		f.runDone <- err
	}()
	c := &pipeClient{f: f, in: inW, outR: outR, out: bufio.NewReader(outR)}
	t.Cleanup(func() {
		inW.Close()
		outR.Close() // writes still going on fail
	})
	c.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	line, err := c.out.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "harness", gjson.Get(line, "result.serverInfo.name").String())
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *pipeClient) send(t *testing.T, line string) {
	t.Helper()
	_, err := io.WriteString(c.in, line+"\n")
	require.NoError(t, err, "the server reads its input")
}

// startUnread starts a run of the fake "interrupt" (wait=none) and sends
// pings, none of whose answers the client reads, and returns once the
// agent is up.
func (c *pipeClient) startUnread(t *testing.T) {
	t.Helper()
	c.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_agent","arguments":{"agent":"claude","prompt":"interrupt","wait":"none"}}}`)
	require.Eventually(t, func() bool { return len(c.f.children.PIDs()) > 0 }, 30*time.Second, 5*time.Millisecond, "the agent starts")
	for i := range 5 {
		c.send(t, `{"jsonrpc":"2.0","id":`+strconv.Itoa(10+i)+`,"method":"ping"}`)
	}
}

// requireCancelled waits for the session's one run to end cancelled,
// nothing of it left.
func (c *pipeClient) requireCancelled(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		c.f.mu.Lock()
		defer c.f.mu.Unlock()
		return len(c.f.closed) == 1
	}, 15*time.Second, 5*time.Millisecond, "the run ends")
	c.f.mu.Lock()
	require.Equal(t, "cancelled", c.f.closed[0].Status)
	c.f.mu.Unlock()
	c.f.children.RequireGone(t)
}

// TestStdioClientGoneUnread: a client that closes stdin and no longer
// reads stdout does not keep ServeStdio: a write blocked past the grace is
// abandoned, the runs are interrupted, and it returns. It never did: the
// SDK ends a session only once every call is answered, the answers
// waited on the full pipe, and the run went on to its budgets (harness
// mcp and its agent lived until the hard budget, an hour).
func TestStdioClientGoneUnread(t *testing.T) {
	t.Parallel()
	c := newPipeClient(t, 50*time.Millisecond)
	c.startUnread(t)
	require.NoError(t, c.in.Close())
	select {
	case err := <-c.f.runDone:
		require.NoError(t, err, "the client's going away is no error")
	case <-time.After(20 * time.Second):
		t.Fatal("ServeStdio goes on after its client closed stdin and stopped reading stdout")
	}
	c.requireCancelled(t)
}

// TestStdioEOFInterruptsRuns: the end of stdin interrupts the session's
// runs at once, however long the answers still written may wait on the
// client (here: the grace is an hour, and the client reads nothing until
// the run is over). They were interrupted only once the SDK had ended the
// session, after the last answer was written.
func TestStdioEOFInterruptsRuns(t *testing.T) {
	t.Parallel()
	c := newPipeClient(t, time.Hour)
	c.startUnread(t)
	require.NoError(t, c.in.Close())
	c.requireCancelled(t)

	go func() { _, _ = io.Copy(io.Discard, c.outR) }() // the client reads again
	select {
	case err := <-c.f.runDone:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("ServeStdio did not return once its output was read")
	}
}

// TestStdioBadLineUnreadThenEOF: the error answer to a line that is not
// JSON-RPC does not keep the reader from seeing the end of stdin when
// nobody reads stdout: ServeStdio gives the answer up after the grace
// and returns. The reader wrote the answer itself, blocked on the full
// pipe, never read the EOF, and harness mcp hung for ever.
func TestStdioBadLineUnreadThenEOF(t *testing.T) {
	t.Parallel()
	c := newPipeClient(t, 50*time.Millisecond)
	c.send(t, "garbage")
	require.NoError(t, c.in.Close())
	select {
	case err := <-c.f.runDone:
		require.NoError(t, err, "the client's going away is no error")
	case <-time.After(20 * time.Second):
		t.Fatal("ServeStdio hangs on the answer to a bad line nobody reads")
	}
}

// TestStdioEOFAnswersCallInFlight: a run_agent call waiting for its run
// (wait=turn) when stdin ends gets its answer, the run interrupted, for
// a client that still reads stdout. It got none: the SDK answers no call
// once its input has ended.
func TestStdioEOFAnswersCallInFlight(t *testing.T) {
	t.Parallel()
	c := newRawClient(t)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_agent","arguments":{"agent":"claude","prompt":"interrupt"}}}`)
	require.Eventually(t, func() bool { return len(c.f.children.PIDs()) > 0 }, 30*time.Second, 5*time.Millisecond, "the agent starts")
	require.NoError(t, c.w.Close())
	a := c.answer()
	require.Equal(t, "1", a.Get("id").Raw, a.Raw)
	require.True(t, a.Get("result.isError").Bool(), a.Raw)
	require.Equal(t, "cancelled", a.Get("result.structuredContent.state").String(), a.Raw)
}

// TestStdioStopAnswersCallInFlight: a run_agent call waiting for its run
// when the server is told to stop (ctx done: SIGTERM) gets its answer,
// the run interrupted, before ServeStdio returns. The session was closed
// right after the runs were interrupted, and the SDK writes nothing
// then: the client read EOF where the cancelled result was due.
func TestStdioStopAnswersCallInFlight(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	c := newRawClientCtx(t, ctx)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_agent","arguments":{"agent":"claude","prompt":"interrupt"}}}`)
	require.Eventually(t, func() bool { return len(c.f.children.PIDs()) > 0 }, 30*time.Second, 5*time.Millisecond, "the agent starts")
	stop()
	a := c.answer()
	require.Equal(t, "1", a.Get("id").Raw, a.Raw)
	require.True(t, a.Get("result.isError").Bool(), a.Raw)
	require.Equal(t, "cancelled", a.Get("result.structuredContent.state").String(), a.Raw)
	require.Equal(t, "ECANCELED", a.Get("result.structuredContent.error.code").String(), a.Raw)
	select {
	case err := <-c.f.runDone:
		require.ErrorIs(t, err, context.Canceled)
		c.f.runDone <- err // for the cleanup's check
	case <-time.After(20 * time.Second):
		t.Fatal("ServeStdio did not return once told to stop")
	}
}

// TestStdioStopUnread: told to stop while its client reads nothing,
// ServeStdio still returns: the answers wait at most the write grace.
func TestStdioStopUnread(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	c := newPipeClientCtx(t, ctx, 50*time.Millisecond)
	c.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_agent","arguments":{"agent":"claude","prompt":"interrupt"}}}`)
	require.Eventually(t, func() bool { return len(c.f.children.PIDs()) > 0 }, 30*time.Second, 5*time.Millisecond, "the agent starts")
	for i := range 5 {
		c.send(t, `{"jsonrpc":"2.0","id":`+strconv.Itoa(10+i)+`,"method":"ping"}`)
	}
	stop()
	select {
	case err := <-c.f.runDone:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(20 * time.Second):
		t.Fatal("ServeStdio waits on a client that reads nothing")
	}
	c.requireCancelled(t)
}
