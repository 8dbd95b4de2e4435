package serve_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/internal/httplimit"
	"github.com/agentharness/harness/logger"
	"github.com/agentharness/harness/serve"
)

// TestStreamUnderLimits: behind the client limits harness serve sets, a
// slow request body is cut while an event stream older than the request
// timeout still gets its events to the end.
func TestStreamUnderLimits(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	lim := httplimit.Limits{ReadHeader: 50 * time.Millisecond, Read: 100 * time.Millisecond, Idle: 50 * time.Millisecond, MaxConns: 8}
	hs := httplimit.Server(serve.New(serve.Config{Dir: dir, Open: true, Token: "test-token-0123456789abcdef"}), lim)
	go hs.Serve(httplimit.Listener(ln, lim.MaxConns))
	t.Cleanup(func() { hs.Close() })
	api := harnesstest.ServeAPI{URL: "http://" + ln.Addr().String(), Token: "test-token-0123456789abcdef"}

	const run = "run_01LIMITS000000000000000"
	sess, err := logger.Open(dir, run, logger.Meta{Agent: "codex"}, logger.WithRedactor(logger.NewRedactor(nil)))
	require.NoError(t, err)
	require.NoError(t, sess.WriteEvent([]byte(`{"v":1,"type":"session_start","run":"`+run+`","seq":1,"ts":1,"agent":"codex","cwd":"/w","pty":false,"argv":[]}`)))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // turns a hang into a failure
	defer cancel()
	res := api.Events(t, ctx, run, nil)
	defer res.Body.Close()
	var events []string
	readSSE(t, res.Body, func(m sse) bool {
		events = append(events, m.event)
		if len(events) == 1 {
			// An unauthenticated POST whose body never comes is cut: the
			// request timeout has passed for the stream too.
			c, err := net.Dial("tcp", ln.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Minute)))
			io.WriteString(c, "POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
			_, err = io.ReadAll(c)
			require.NoError(t, err, "the slow body was held")
			require.NoError(t, sess.WriteEvent([]byte(`{"v":1,"type":"result","run":"`+run+`","seq":2,"ts":2,"status":"success","text":"ok","duration_ms":1,"usage":{},"stats":{"native_lines":0,"unparsed_lines":0,"events":2,"tool_calls":0}}`)))
		}
		return m.event != "end"
	})
	require.Equal(t, []string{"", "", "end"}, events)
	require.NoError(t, sess.Close(logger.Meta{Status: "success"}))
	r := api.Do(t, ctx, "GET", "/api/runs/"+run, "", nil)
	r.Body.Close()
	require.Equal(t, http.StatusOK, r.StatusCode)
}
