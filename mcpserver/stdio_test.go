package mcpserver_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mcpserver"
)

// rawClient writes lines to ServeStdio as any client might, and reads
// its answers.
type rawClient struct {
	t     *testing.T
	f     *fixture
	w     *io.PipeWriter
	lines chan string
}

func newRawClient(t *testing.T) *rawClient {
	t.Helper()
	return newRawClientCtx(t, context.Background())
}

// newRawClientCtx is newRawClient serving until ctx is done.
func newRawClientCtx(t *testing.T, ctx context.Context) *rawClient {
	t.Helper()
	c := newRawConnCtx(t, ctx)
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.Equal(t, "harness", c.answer().Get("result.serverInfo.name").String())
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// newRawConn is newRawClient before initialize.
func newRawConn(t *testing.T) *rawClient {
	t.Helper()
	return newRawConnCtx(t, context.Background())
}

// newRawConnCtx is newRawConn serving until ctx is done.
func newRawConnCtx(t *testing.T, ctx context.Context) *rawClient {
	t.Helper()
	f := &fixture{runDone: make(chan error, 1), logDir: t.TempDir()}
	f.srv = mcpserver.New(f.options(nil))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		err := f.srv.ServeStdio(ctx, inR, outW)
		outW.Close()
		inR.CloseWithError(io.ErrClosedPipe) // a write after the end fails, not hangs
		f.runDone <- err
	}()
	c := &rawClient{t: t, f: f, w: inW, lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		f.requireEnded(t)
	})
	return c
}

func (c *rawClient) send(line string) {
	c.t.Helper()
	_, err := io.WriteString(c.w, line+"\n")
	require.NoError(c.t, err, "the server reads its input")
}

// answer is the next message that is not a notification.
func (c *rawClient) answer() gjson.Result {
	c.t.Helper()
	// A bound on a hang, not a budget: reading a 16 MiB line through
	// took over 20 s under -race beside a compiler on 2 cores.
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				err := <-c.f.runDone
				c.f.runDone <- err // for the cleanup's check
				c.t.Fatalf("the server ended: %v", err)
			}
			if m := gjson.Parse(l); !m.Get("method").Exists() {
				return m
			}
		case <-timeout:
			c.t.Fatal("no answer")
		}
	}
}

// TestStdioBadLines: a line the SDK cannot take is answered with a
// JSON-RPC error and dropped, and the session and its run go on. It
// ended them: 'garbage' made harness mcp exit 1 ("invalid character
// 'g'") and killed the agent it was running.
func TestStdioBadLines(t *testing.T) {
	t.Parallel()
	c := newRawClient(t)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_agent","arguments":{"agent":"claude","prompt":"hang-silent","wait":"none","idle_timeout_ms":10000}}}`)
	run := c.answer().Get("result.structuredContent.run_id").String()
	require.NotEmpty(t, run)

	for _, tc := range []struct {
		name, line string
		want       []string // each answer: its id, and its error code or "ok"
	}{
		{"not-JSON", "garbage", []string{"null -32700"}},
		{"cut-short", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":`, []string{"null -32700"}},
		{"two-values", `{"jsonrpc":"2.0","id":2,"method":"ping"} {}`, []string{"null -32700"}},
		{"empty-object", `{}`, []string{"null -32600"}},
		{"scalar", `42`, []string{"null -32600"}},
		{"null", `null`, []string{"null -32600"}},
		{"old-version", `{"jsonrpc":"1.0","id":3,"method":"ping"}`, []string{"3 -32600"}},
		{"bool-id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, []string{"null -32600"}},
		// A request all the same (JSON-RPC 2.0 discourages it, MCP forbids
		// it): the SDK took it for a notification and answered nothing.
		{"null-id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, []string{"null -32600"}},
		{"bad-error-member", `{"jsonrpc":"2.0","id":"e","method":"ping","error":"x"}`, []string{`"e" -32600`}},
		{"batch", `[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`,
			[]string{"4 -32600", "5 -32600"}},
		{"empty-batch", `[]`, []string{"null -32600"}},
		{"fraction-id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, []string{"null -32600"}},
		{"exponent-id", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, []string{"null -32600"}},
		{"id-past-2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, []string{"null -32600"}},
		{"id-past-int64", `{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`, []string{"null -32600"}},
		{"largest-exact-id", `{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`, []string{"9007199254740991 ok"}},
		{"smallest-exact-id", `{"jsonrpc":"2.0","id":-9007199254740991,"method":"ping"}`, []string{"-9007199254740991 ok"}},
		{"response-without-result", `{"jsonrpc":"2.0","id":77}`, []string{"null -32600"}},
		{"trailing-blanks", "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"} \t ", []string{"6 ok"}},
		{"blank-then-CRLF", "\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\r", []string{"7 ok"}},
	} {
		c.send(tc.line)
		var got []string
		for range tc.want {
			a := c.answer()
			code := "ok"
			if e := a.Get("error"); e.Exists() {
				code = e.Get("code").String()
				require.NotEmpty(t, e.Get("message").String(), tc.name)
			}
			got = append(got, a.Get("id").Raw+" "+code)
		}
		require.Equal(t, tc.want, got, tc.name)
	}

	c.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"run_status","arguments":{"run_id":"` + run + `"}}}`)
	require.Equal(t, "running", c.answer().Get("result.structuredContent.state").String(), "the run goes on")
}

// TestStdioIDInUse: a request reusing the id of a request still in
// progress is answered Invalid request with that id, and the request in
// progress goes on; once that is answered, its id is free again. The SDK
// dropped the second request without an answer.
func TestStdioIDInUse(t *testing.T) {
	t.Parallel()
	c := newRawClient(t)
	c.send(`{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"run_agent","arguments":{"agent":"claude","prompt":"hang-silent","idle_timeout_ms":10000}}}`)
	c.send(`{"jsonrpc":"2.0","id":"r","method":"ping"}`)
	a := c.answer()
	require.Equal(t, `"r"`, a.Get("id").Raw)
	require.EqualValues(t, -32600, a.Get("error.code").Int())
	require.Contains(t, a.Get("error.message").String(), `id "r" is already in use by a request in progress`)

	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	require.Equal(t, "1", c.answer().Get("id").Raw, "another id is served")
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	require.Equal(t, "1", c.answer().Get("id").Raw, "an answered id is free again")

	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r"}}`)
	a = c.answer()
	require.Equal(t, `"r"`, a.Get("id").Raw, "the request in progress is answered, once")
	c.send(`{"jsonrpc":"2.0","id":"r","method":"ping"}`)
	a = c.answer()
	require.Equal(t, `"r"`, a.Get("id").Raw)
	require.False(t, a.Get("error").Exists(), "its id is free again: %s", a.Raw)
}

// TestStdioOversizeLine: a line over the cap is read through, never
// held, and a request gets an error with its id; the session goes on.
// It ended at 16 MiB ("inbound JSON-RPC frame exceeded the configured
// maximum line length").
func TestStdioOversizeLine(t *testing.T) {
	t.Parallel()
	c := newRawClient(t)
	head := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"run_agent","arguments":{"agent":"claude","prompt":"`
	_, err := io.WriteString(c.w, head)
	require.NoError(t, err)
	chunk := strings.Repeat("x", 1<<20)
	for n := len(head); n <= mcpserver.MaxLine; n += len(chunk) {
		_, err = io.WriteString(c.w, chunk)
		require.NoError(t, err)
	}
	c.send(`"}}}`)
	a := c.answer()
	require.Equal(t, "9", a.Get("id").Raw)
	require.EqualValues(t, -32600, a.Get("error.code").Int())
	require.Contains(t, a.Get("error.message").String(), fmt.Sprintf("harness mcp reads messages of up to %d bytes", mcpserver.MaxLine))

	c.send(`{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	require.Equal(t, "10", c.answer().Get("id").Raw)
}

// TestStdioBigPrompt: a prompt just over MaxPromptBytes reaches
// run_agent's own check and its clear error; the stdio transport killed
// the server at any frame over 16 MiB ("inbound JSON-RPC frame exceeded
// the configured maximum line length"). The session goes on.
func TestStdioBigPrompt(t *testing.T) {
	t.Parallel()
	f := newFixtureStdio(t, nil)
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": strings.Repeat("x", mcpserver.MaxPromptBytes+1)}, nil)
	require.True(t, res.IsError)
	require.Contains(t, harnesstest.MCPText(res), fmt.Sprintf("the prompt is %d bytes, over the 16 MiB limit", mcpserver.MaxPromptBytes+1))

	res = f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "slow-drip"}, nil)
	require.False(t, res.IsError, harnesstest.MCPText(res))
	require.Equal(t, "success", harnesstest.MCPStructured(t, res).Get("state").String())
}

// TestStdioProtocolErrors: a second initialize is refused with a
// JSON-RPC code (Invalid request; the SDK's error had code 0), and
// logging/setLevel to a level MCP does not have with Invalid params (the
// SDK took any string); a level it has is taken.
func TestStdioProtocolErrors(t *testing.T) {
	t.Parallel()
	c := newRawClient(t)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	a := c.answer()
	require.Equal(t, "1", a.Get("id").Raw)
	require.EqualValues(t, -32600, a.Get("error.code").Int(), a.Raw)
	require.Contains(t, a.Get("error.message").String(), `duplicate "initialize"`)

	c.send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"bogus"}}`)
	a = c.answer()
	require.Equal(t, "2", a.Get("id").Raw)
	require.EqualValues(t, -32602, a.Get("error.code").Int(), a.Raw)
	require.Contains(t, a.Get("error.message").String(), `log level "bogus"`)

	c.send(`{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"error"}}`)
	a = c.answer()
	require.Equal(t, "3", a.Get("id").Raw)
	require.False(t, a.Get("error").Exists(), a.Raw)
}

// TestStdioBeforeInitialize: a request before initialize is refused with
// Invalid request, whatever its method; ping is answered, and the
// session initializes after. The SDK's refusal had code 0, which
// JSON-RPC does not have, and comes before any handler sees the request.
func TestStdioBeforeInitialize(t *testing.T) {
	t.Parallel()
	c := newRawConn(t)
	for i, m := range []string{
		`"method":"tools/call","params":{"name":"list_agents","arguments":{}}`,
		`"method":"tools/list"`,
		`"method":"resources/list"`,
		`"method":"no/such/method"`,
	} {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, i+1, m))
		a := c.answer()
		require.Equal(t, fmt.Sprint(i+1), a.Get("id").Raw, a.Raw)
		require.EqualValues(t, -32600, a.Get("error.code").Int(), a.Raw)
		require.Contains(t, a.Get("error.message").String(), "invalid during session initialization", a.Raw)
	}
	c.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	a := c.answer()
	require.Equal(t, `"p"`, a.Get("id").Raw, a.Raw)
	require.True(t, a.Get("result").Exists(), a.Raw)

	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.Equal(t, "harness", c.answer().Get("result.serverInfo.name").String())
	c.send(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	require.NotEmpty(t, c.answer().Get("result.tools").Array())
}
