// Package httplimit bounds what HTTP clients can hold of a long-lived
// server (harness serve, harness mcp --listen): the time to send a
// request's header and body, the time an idle keep-alive connection is
// kept, and the number of connections open at once. Responses are not
// timed here: a stream (Server-Sent Events) lasts as long as its run and
// bounds each of its writes itself.
package httplimit

import (
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// Limits bound a server's clients. A zero field takes Defaults' value.
type Limits struct {
	// ReadHeader is the time a client has to send a request's header.
	ReadHeader time.Duration
	// Read is the time a client has to send a whole request, body
	// included. It does not cut a long response: net/http lifts the read
	// deadline once the body is read (TestStreamOutlivesReadTimeout).
	Read time.Duration
	// Idle is how long a keep-alive connection waits for its next request.
	Idle time.Duration
	// MaxConns is the most connections open at once; one more is answered
	// 503 and closed at once.
	MaxConns int
}

// Defaults: 10 s for a header, 1 min for a request, 2 min idle, and 1024
// connections (or half the file descriptors this process may open, when
// that is less).
func Defaults() Limits {
	n := 1024
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil {
		if open := uint64(rl.Cur); open/2 < uint64(n) { // Cur is an int64 on the BSDs
			n = max(int(open/2), 16)
		}
	}
	return Limits{ReadHeader: 10 * time.Second, Read: time.Minute, Idle: 2 * time.Minute, MaxConns: n}
}

func (l Limits) orDefaults() Limits {
	d := Defaults()
	if l.ReadHeader <= 0 {
		l.ReadHeader = d.ReadHeader
	}
	if l.Read <= 0 {
		l.Read = d.Read
	}
	if l.Idle <= 0 {
		l.Idle = d.Idle
	}
	if l.MaxConns <= 0 {
		l.MaxConns = d.MaxConns
	}
	return l
}

// Server returns an http.Server of h with l's timeouts. It sets no
// WriteTimeout: that would end every stream after it.
func Server(h http.Handler, l Limits) *http.Server {
	l = l.orDefaults()
	return &http.Server{Handler: h, ReadHeaderTimeout: l.ReadHeader, ReadTimeout: l.Read, IdleTimeout: l.Idle}
}

// tooMany is the answer of a connection over the cap.
const tooMany = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: 33\r\n\r\n{\"error\":\"too many connections\"}\n"

// Listener returns ln holding at most max connections open at once (max
// ≤ 0: Defaults'). A connection over the cap is answered 503 and closed
// at once, rather than left waiting in the kernel's queue.
func Listener(ln net.Listener, max int) net.Listener {
	if max <= 0 {
		max = Defaults().MaxConns
	}
	return &capListener{Listener: ln, slots: make(chan struct{}, max)}
}

type capListener struct {
	net.Listener
	slots chan struct{}
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &capConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
			// A fresh socket's send buffer is empty: the write does not
			// wait on the client; the deadline is there all the same.
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = io.WriteString(c, tooMany)
			_ = c.Close()
		}
	}
}

type capConn struct {
	net.Conn
	release func()
	once    sync.Once
}

func (c *capConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// ReadFrom keeps the connection's own (sendfile on TCP) for files served.
func (c *capConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(c.Conn, r)
}
