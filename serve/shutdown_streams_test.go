package serve_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/logger"
	"github.com/agentharness/harness/serve"
)

// streamWriter is a client that takes every byte and says when a write
// brought what it waits for.
type streamWriter struct {
	hdr  http.Header
	mu   sync.Mutex
	buf  strings.Builder
	want string
	seen chan struct{} // closed once the output holds want
}

func newStreamWriter(want string) *streamWriter {
	return &streamWriter{hdr: http.Header{}, want: want, seen: make(chan struct{})}
}

func (w *streamWriter) Header() http.Header { return w.hdr }
func (w *streamWriter) WriteHeader(int)     {}
func (w *streamWriter) Flush()              {}
func (w *streamWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.buf.String(), w.want)
	w.buf.Write(p)
	if !had && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
	}
	return len(p), nil
}

func (w *streamWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestStreamsAtClose: Close lets the streams of the server's own runs go
// on to their results and end; the streams of other runs, which nothing
// ends at a shutdown, end at once with a reconnect of reason "shutdown";
// and a stream of a run Close still waits for, whose request the HTTP
// server's shutdown gives up on, says so too rather than stopping mute,
// as a run that ended without a result would.
func TestStreamsAtClose(t *testing.T) {
	t.Run("own-run-to-its-result", func(t *testing.T) {
		f := newFixture(t, "serve-gated")
		run := f.start(t)
		res := f.api.Events(t, t.Context(), run, nil)
		defer res.Body.Close()
		closed := make(chan struct{})
		var got []sse
		readSSE(t, res.Body, func(m sse) bool {
			got = append(got, m)
			if strings.HasPrefix(m.data, `{"v":1,"type":"tool_start"`) {
				go func() { f.srv.Close(); close(closed) }() // the gated run is interrupted
			}
			return m.event != "end"
		})
		<-closed
		require.GreaterOrEqual(t, len(got), 2)
		require.Equal(t, "end", got[len(got)-1].event, "the stream ended with its run")
		result := got[len(got)-2]
		require.Contains(t, result.data, `"type":"result"`)
		require.Contains(t, result.data, `"status":"cancelled"`)
	})

	for _, format := range []string{"sse", "ndjson"} {
		t.Run("other-run-at-once-"+format, func(t *testing.T) { testOtherRunAtClose(t, format == "ndjson") })
	}

	t.Run("own-run-cut", func(t *testing.T) {
		f := deafFixture(t, false, 0) // Close waits a minute for the run
		run, pid := f.startDeaf(t, false)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req := httptest.NewRequest("GET", "/api/runs/"+run+"/events", nil).WithContext(ctx)
		req.Host = "127.0.0.1"
		w := newStreamWriter(`"type":"session_start"`)
		handled := make(chan struct{})
		go func() { f.srv.ServeHTTP(w, req); close(handled) }()
		<-w.seen
		closed := make(chan struct{})
		go func() { f.srv.Close(); close(closed) }()
		for !serve.Closing(f.srv) {
			time.Sleep(time.Millisecond)
		}
		cancel() // the HTTP server's shutdown gives up on the request
		<-handled
		out := w.String()
		var last string
		readSSE(t, strings.NewReader(out), func(m sse) bool {
			if m.id != "" {
				last = m.id
			}
			return true
		})
		require.NotEmpty(t, last)
		require.True(t, strings.HasSuffix(out, fmt.Sprintf("event: reconnect\ndata: {\"reason\":\"shutdown\",\"last_event_id\":%s}\n\n", last)), "%s", out)
		f.srv.Kill()
		<-closed
		endsKilled(t, f, run, pid)
	})
}

func testOtherRunAtClose(t *testing.T, ndjson bool) {
	f := newFixture(t, "serve-gated")
	const run = "run_01EXTERNALSHUT00000000000"
	sess, err := logger.Open(f.dir, run, logger.Meta{Agent: "codex"}, logger.WithRedactor(logger.NewRedactor(nil)))
	require.NoError(t, err)
	defer sess.Close(logger.Meta{Status: "unknown"})
	require.NoError(t, sess.WriteEvent([]byte(`{"v":1,"type":"session_start","run":"`+run+`","seq":1,"ts":1,"agent":"codex","cwd":"/w","pty":false,"argv":[]}`)))
	// Bounded: a stream Close left open would follow the run forever.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	hdr := map[string]string{}
	if ndjson {
		hdr["Accept"] = "application/x-ndjson"
	}
	res := f.api.Events(t, ctx, run, hdr)
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	first, err := br.ReadString('\n') // the stream is under way: then Close
	require.NoError(t, err)
	require.Contains(t, first, "1")
	go f.srv.Close()
	rest, err := io.ReadAll(br)
	require.NoError(t, err, "the stream did not end at Close")
	if ndjson {
		require.Equal(t, `{"reconnect":{"reason":"shutdown","last_event_id":1}}`+"\n", string(rest))
		return
	}
	require.True(t, strings.HasSuffix(string(rest), "event: reconnect\ndata: {\"reason\":\"shutdown\",\"last_event_id\":1}\n\n"), "%s", rest)
	require.NotContains(t, string(rest), "event: end")
}

// TestSlowClientOfFinishedRun: a client that read nothing while its run
// went on to its end is not told to reconnect when it reads again: it
// reads a finished log, which costs the server only its fixed buffers,
// and gets the whole stream and its end. It was sent a slow_client
// reconnect for a run long over.
func TestSlowClientOfFinishedRun(t *testing.T) {
	for _, format := range []string{"sse", "ndjson"} {
		t.Run(format, func(t *testing.T) {
			var clock atomic.Int64 // the server's clock: moved on by hand
			clock.Store(time.Now().UnixNano())
			f := newFixtureWith(t, "serve-gated", func(c *serve.Config) {
				c.MaxLag, c.SlowAfter = 4, time.Minute
				c.Now = func() time.Time { return time.Unix(0, clock.Load()) }
			}, "SERVE_TEST_LINES=40")
			run := f.start(t)
			slow := &stuckWriter{hdr: http.Header{}, release: make(chan struct{}), entered: make(chan struct{})}
			req := httptest.NewRequest("GET", "/api/runs/"+run+"/events", nil)
			req.Host = "127.0.0.1"
			if format == "ndjson" {
				req.Header.Set("Accept", "application/x-ndjson")
			}
			handled := make(chan struct{})
			go func() { f.srv.ServeHTTP(slow, req); close(handled) }()
			<-slow.entered // stuck on its first write
			f.openGate(t)
			require.Equal(t, "success", waitStatus(t, f, run)["status"])
			require.Zero(t, serve.LiveRuns(f.srv), "the run is over")

			clock.Add(int64(2 * time.Minute)) // far behind, for 2 minutes
			close(slow.release)
			<-handled
			out := slow.buf.String()
			log := f.logOf(t, run)
			require.NotContains(t, out, "reconnect")
			if format == "ndjson" {
				require.Equal(t, log, out)
				return
			}
			var got strings.Builder
			var end []sse
			readSSE(t, strings.NewReader(out), func(m sse) bool {
				if m.event == "" {
					got.WriteString(m.data + "\n")
				} else {
					end = append(end, m)
				}
				return true
			})
			require.Equal(t, log, got.String())
			require.Len(t, end, 1)
			require.Equal(t, "end", end[0].event)
		})
	}
}
