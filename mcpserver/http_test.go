package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mcpserver"
)

const httpToken = "s3cret-0123456789abcdef"

// newFixtureHTTP is a fixture's server behind Handler, with no client
// connected; mutate may change the server before Handler is called.
func newFixtureHTTP(t *testing.T, mutate func(*mcpserver.Server)) (*fixture, *httptest.Server) {
	t.Helper()
	f := &fixture{runDone: make(chan error, 1), logDir: t.TempDir()}
	f.srv = mcpserver.New(f.options(nil))
	if mutate != nil {
		mutate(f.srv)
	}
	ts := httptest.NewServer(f.srv.Handler(httpToken))
	t.Cleanup(func() {
		f.srv.Close()
		ts.CloseClientConnections()
		ts.Close()
		f.children.RequireGone(t)
	})
	return f, ts
}

// httpPost POSTs one JSON-RPC message to the session sid ("" for none),
// as a client of protocol 2025-06-18.
func httpPost(ctx context.Context, url, sid, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+httpToken)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	return http.DefaultClient.Do(req)
}

// httpInit opens a session and returns its id.
func httpInit(t *testing.T, url string) string {
	t.Helper()
	resp, err := httpPost(context.Background(), url, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	resp, err = httpPost(context.Background(), url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	return sid
}

// requirePing checks the session sid still answers.
func requirePing(t *testing.T, url, sid string) {
	t.Helper()
	resp, err := httpPost(context.Background(), url, sid, `{"jsonrpc":"2.0","id":99,"method":"ping"}`)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.Contains(t, string(b), `"id":99,"result":{}`)
}

// TestHTTPDroppedCallCancelsRun: a client that drops the connection of
// its run_agent call (wait=turn), sending nothing else, has the call
// cancelled, and its run with it; the session goes on. The SDK cancels no
// call whose POST is gone before protocol 2026-07-28: the run went on
// until its budgets ended it, or a DELETE of the session.
func TestHTTPDroppedCallCancelsRun(t *testing.T) {
	t.Parallel()
	f, ts := newFixtureHTTP(t, nil)
	sid := httpInit(t, ts.URL)
	ctx, drop := context.WithCancel(context.Background())
	defer drop()
	called := make(chan error, 1)
	go func() {
		resp, err := httpPost(ctx, ts.URL, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_agent","arguments":{"agent":"claude","prompt":"interrupt","hard_timeout_ms":30000}}}`)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		called <- err
	}()
	require.Eventually(t, func() bool { return len(f.children.PIDs()) > 0 }, 30*time.Second, 5*time.Millisecond, "the agent starts")
	drop() // the client closes the connection
	require.Error(t, <-called)
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.closed) == 1
	}, 15*time.Second, 5*time.Millisecond, "the run ends when its call's connection is gone")
	f.mu.Lock()
	require.Equal(t, "cancelled", f.closed[0].Status)
	f.mu.Unlock()
	f.children.RequireGone(t)
	requirePing(t, ts.URL, sid)
}

// TestHTTPBigPrompt: a request may be as long as a stdio line, so a
// prompt just over MaxPromptBytes reaches run_agent's own check and its
// clear error over HTTP too. The SDK's default cap (4 MiB) refused it,
// and any prompt over 4 MiB, with a plain-text 413. Not parallel: under
// the race detector two 16 MiB requests at once (TestStdioBigPrompt's)
// take the SDK past the calls' deadline on a busy machine.
func TestHTTPBigPrompt(t *testing.T) {
	f, ts := newFixtureHTTP(t, nil)
	require.EqualValues(t, mcpserver.MaxLine, mcpserver.MaxBody(f.srv), "a request may be as long as a stdio line")
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL,
		HTTPClient: &http.Client{Transport: bearer{httpToken, http.DefaultTransport}}, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_agent",
		Arguments: map[string]any{"agent": "claude", "prompt": strings.Repeat("x", mcpserver.MaxPromptBytes+1)}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Contains(t, harnesstest.MCPText(res), fmt.Sprintf("the prompt is %d bytes, over the 16 MiB limit", mcpserver.MaxPromptBytes+1))
}

// TestHTTPOversizeRequest: a request over the cap is answered 413, read
// through and never held, also to a client that sends its whole request
// before it reads the answer (as most do): the connection was reset
// under it once the server had answered. With a Content-Length it is
// answered at once, with a JSON-RPC error naming the limits; without
// one (chunked) the SDK answers once it has read the cap. The session
// goes on.
func TestHTTPOversizeRequest(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	_, ts := newFixtureHTTP(t, func(s *mcpserver.Server) { mcpserver.SetMaxBody(s, limit) })
	sid := httpInit(t, ts.URL)
	body := []byte(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_agent","arguments":{"agent":"claude","prompt":"` +
		strings.Repeat("x", 16<<20) + `"}}}`)
	for _, chunked := range []bool{false, true} {
		name := map[bool]string{false: "content-length", true: "chunked"}[chunked]
		conn, err := net.Dial("tcp", ts.Listener.Addr().String())
		require.NoError(t, err)
		defer conn.Close()
		require.NoError(t, conn.SetDeadline(time.Now().Add(time.Minute)))
		head := "POST / HTTP/1.1\r\nHost: " + ts.Listener.Addr().String() + "\r\nContent-Type: application/json\r\n" +
			"Accept: application/json, text/event-stream\r\nAuthorization: Bearer " + httpToken + "\r\n" +
			"MCP-Protocol-Version: 2025-06-18\r\nMcp-Session-Id: " + sid + "\r\n"
		if chunked {
			_, err = io.WriteString(conn, head+"Transfer-Encoding: chunked\r\n\r\n")
			require.NoError(t, err, name)
			cw := httputil.NewChunkedWriter(conn)
			_, err = cw.Write(body)
			require.NoError(t, err, "%s: the server reads the request through", name)
			require.NoError(t, cw.Close())
			_, err = io.WriteString(conn, "\r\n")
		} else {
			_, err = io.WriteString(conn, head+fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body)))
			require.NoError(t, err, name)
			_, err = io.Copy(conn, bytes.NewReader(body))
		}
		require.NoError(t, err, "%s: the server reads the request through", name)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err, name)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "%s: %s", name, b)
		if chunked {
			require.Contains(t, string(b), fmt.Sprint(limit), name)
			continue
		}
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		m := gjson.ParseBytes(b)
		require.Equal(t, "null", m.Get("id").Raw)
		require.EqualValues(t, -32600, m.Get("error.code").Int())
		require.Equal(t, fmt.Sprintf("invalid request: the request is %d bytes; harness mcp reads requests of up to %d bytes (a run_agent prompt is at most 16 MiB)", len(body), limit),
			m.Get("error.message").String())
	}
	requirePing(t, ts.URL, sid)
}

// TestHTTPBeforeInitialize: a request in a POST without a session, not
// initialize, is refused with Invalid request, as over stdio; the SDK's
// refusal had code 0, which JSON-RPC does not have.
func TestHTTPBeforeInitialize(t *testing.T) {
	t.Parallel()
	_, ts := newFixtureHTTP(t, nil)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_agents","arguments":{}}}`,
	} {
		resp, err := httpPost(context.Background(), ts.URL, "", body)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		data, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "event: message\ndata: ")
		require.True(t, ok, string(b))
		a := gjson.Parse(data)
		require.Equal(t, gjson.Get(body, "id").Raw, a.Get("id").Raw, data)
		require.EqualValues(t, -32600, a.Get("error.code").Int(), data)
		require.Contains(t, a.Get("error.message").String(), "invalid during session initialization")
	}
	requirePing(t, ts.URL, httpInit(t, ts.URL)) // a session still opens
}
