package syncio

import (
	"errors"
	"io"
	"sync"
	"time"
)

// ErrAbandoned is the error of a GraceWriter's write to an output that
// nobody reads any more.
var ErrAbandoned = errors.New("the output is no longer read")

// GraceWriter passes each Write whole to W, one at a time, as Writer does,
// and stops waiting for a reader that has gone. Until End, a Write waits
// for W as long as W takes. After End (a server's client closed its
// input, or the server is stopping), a Write that W still holds after
// Grace, counted from End or from the write's start when later, is
// abandoned: it goes on in its goroutine, or never ends, and it and every
// later Write fail with ErrAbandoned. A client that closed its input may
// still read the answers it is owed; one that reads nothing for Grace is
// gone, and a write to its full pipe would otherwise hold the server
// forever. The zero value with W set is ready; it must not be copied
// after first use.
type GraceWriter struct {
	W     io.Writer
	Grace time.Duration

	mu    sync.Mutex // held for a whole Write
	dead  bool       // a write was abandoned
	once  sync.Once
	ended chan struct{}
	end   sync.Once
}

func (g *GraceWriter) endedChan() chan struct{} {
	g.once.Do(func() { g.ended = make(chan struct{}) })
	return g.ended
}

// End starts the grace of writes; it may be called more than once.
func (g *GraceWriter) End() { g.end.Do(func() { close(g.endedChan()) }) }

// Write writes p whole to W, alone; see GraceWriter.
func (g *GraceWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dead {
		return 0, ErrAbandoned
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := g.W.Write(p)
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		return r.n, r.err
	case <-g.endedChan():
	}
	t := time.NewTimer(g.Grace)
	defer t.Stop()
	select {
	case r := <-done:
		return r.n, r.err
	case <-t.C:
		g.dead = true
		return 0, ErrAbandoned
	}
}
