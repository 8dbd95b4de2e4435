package httplimit

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// serveLoopback serves h with l on a loopback port and returns its address.
func serveLoopback(t *testing.T, h http.Handler, l Limits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := Server(h, l)
	go srv.Serve(Listener(ln, l.MaxConns))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// dial opens a raw connection whose reads give up after a minute: a
// server that holds it longer is the failure, not a hang of the test.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Minute)))
	return c
}

// closedByServer reads c to its end and returns what the server sent.
func closedByServer(t *testing.T, c net.Conn) string {
	t.Helper()
	b, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server held the connection (got %q)", b)
	}
	return string(b)
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	io.WriteString(w, "ok\n")
})

var small = Limits{ReadHeader: 50 * time.Millisecond, Read: 100 * time.Millisecond, Idle: 50 * time.Millisecond, MaxConns: 4}

// TestIdleClosed: a keep-alive connection that sends no next request is
// closed after Idle, as is one that never finishes its header.
func TestIdleClosed(t *testing.T) {
	t.Parallel()
	addr := serveLoopback(t, ok, small)
	c := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	got := closedByServer(t, c)
	require.True(t, strings.HasPrefix(got, "HTTP/1.1 200"), got)

	c = dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n")
	closedByServer(t, c)
}

// TestSlowBodyClosed: a POST whose body never comes is cut at Read,
// whether or not the handler reads it.
func TestSlowBodyClosed(t *testing.T) {
	t.Parallel()
	for name, h := range map[string]http.Handler{
		"read":    ok,
		"refused": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusUnauthorized) }),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := dial(t, serveLoopback(t, h, small))
			io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"a\":")
			closedByServer(t, c)
		})
	}
}

// TestStreamOutlivesReadTimeout: a response that streams for longer than
// Read is not cut, for a GET and for a POST whose body was read.
func TestStreamOutlivesReadTimeout(t *testing.T) {
	t.Parallel()
	next := make(chan struct{})
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		select {
		case <-next:
			io.WriteString(w, "second\n")
		case <-r.Context().Done():
		}
	})
	addr := serveLoopback(t, stream, small)
	for _, req := range []string{
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
	} {
		c := dial(t, addr)
		io.WriteString(c, req)
		br := bufio.NewReader(c)
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		body := bufio.NewReader(res.Body)
		line, err := body.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "first\n", line)
		// Read has passed once a slow body sent after this one was cut.
		slow := dial(t, addr)
		io.WriteString(slow, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\n{")
		closedByServer(t, slow)
		next <- struct{}{}
		line, err = body.ReadString('\n')
		require.NoError(t, err, "the stream was cut")
		require.Equal(t, "second\n", line)
		c.Close()
	}
}

// TestConnCap: connections past MaxConns are answered 503 and closed at
// once; a slot freed serves again.
func TestConnCap(t *testing.T) {
	t.Parallel()
	l := small
	l.Idle, l.ReadHeader, l.Read, l.MaxConns = time.Hour, time.Hour, time.Hour, 2
	addr := serveLoopback(t, ok, l)
	held := []net.Conn{dial(t, addr), dial(t, addr)}
	for _, c := range held { // accepted: each gets an answer
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		require.Equal(t, 200, res.StatusCode)
	}
	over := dial(t, addr)
	got := closedByServer(t, over)
	require.True(t, strings.HasPrefix(got, "HTTP/1.1 503"), got)
	require.Contains(t, got, "too many connections")

	held[0].Close()
	for { // the server frees the slot once it sees the close
		c := dial(t, addr)
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		got := closedByServer(t, c)
		if strings.HasPrefix(got, "HTTP/1.1 200") {
			break
		}
		require.True(t, strings.HasPrefix(got, "HTTP/1.1 503"), got)
	}
}
