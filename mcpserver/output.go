package mcpserver

import (
	"errors"
	"io"
	"sync"
	"time"
)

// writeGrace is how long a write to ServeStdio's output may stay blocked
// once the client has closed its input (or ServeStdio is told to stop): a
// client that closed stdin may still read the answers of its interrupted
// calls, but one that takes nothing for this long is gone.
const writeGrace = 5 * time.Second

// errUnread is the error of a write to an output nobody reads any more.
var errUnread = errors.New("mcpserver: the client closed its input and stopped reading the output")

// output is ServeStdio's output, shared by the SDK and input's own
// answers: each Write reaches w whole, one at a time. Until end is
// called it never gives up on a write. After, a write blocked for grace
// (counted from end, or from the write's start when later) is abandoned:
// it goes on in its goroutine, or never ends, and every later write fails
// at once. A client that closed stdin and stopped reading stdout would
// otherwise hold the SDK, which answers every call before it lets the
// session end, and harness mcp with it, forever.
type output struct {
	w     io.Writer
	grace time.Duration
	ended chan struct{}
	once  sync.Once

	mu   sync.Mutex
	dead bool // a write was abandoned
}

func newOutput(w io.Writer, grace time.Duration) *output {
	return &output{w: w, grace: grace, ended: make(chan struct{})}
}

// end tells o that nobody may be reading any more; it may be called more
// than once.
func (o *output) end() { o.once.Do(func() { close(o.ended) }) }

// Write writes p whole to w, alone; see output.
func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dead {
		return 0, errUnread
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := o.w.Write(p)
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		return r.n, r.err
	case <-o.ended:
	}
	t := time.NewTimer(o.grace)
	defer t.Stop()
	select {
	case r := <-done:
		return r.n, r.err
	case <-t.C:
		o.dead = true
		return 0, errUnread
	}
}
