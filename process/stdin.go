package process

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// MaxStdinQueue bounds the bytes queued in front of a child's stdin while
// the pipe is full (Proc.Stdin): past it, Write fails with ErrStdinFull.
// One write always fits into an empty queue, however long (a prompt).
const MaxStdinQueue = 4 << 20

// ErrStdinFull is the error of a write to a child's stdin that would queue
// more than MaxStdinQueue bytes: the child does not read its input (an
// agent that floods requests and never reads the answers).
var ErrStdinFull = errors.New("process: the child does not read its stdin")

// Stdin returns the child's stdin with KeepStdin, else nil. Writes never
// block: they are queued and written to the pipe in order by a goroutine
// of the run, so a caller writing from a line callback (OnStdout) cannot
// deadlock with a child that is itself blocked writing its stdout. Close
// writes out what is queued, then closes the pipe (the child reads EOF).
// Once the run is over, or the pipe failed (the child exited or closed
// its stdin), Write returns an error; what was queued is then lost, as it
// would be on a pipe. A write that would queue more than MaxStdinQueue
// bytes while the pipe is full fails with ErrStdinFull (and is not
// queued): the child is not reading. Safe for concurrent use.
func (p *Proc) Stdin() io.WriteCloser {
	if p.stdin == nil {
		return nil // a nil *stdinQueue in an interface would not be nil
	}
	return p.stdin
}

// stdinQueue is a child's stdin kept open: a queue in front of the pipe,
// bounded by MaxStdinQueue. The harness writes only its own small requests
// and answers there, so the queue of a child that reads stays small.
type stdinQueue struct {
	w    *os.File      // set before run starts
	wake chan struct{} // capacity 1: there is something to do

	mu     sync.Mutex
	buf    []byte
	closed bool
	err    error
}

func newStdinQueue(keep bool) *stdinQueue {
	if !keep {
		return nil
	}
	return &stdinQueue{wake: make(chan struct{}, 1)}
}

func (q *stdinQueue) Write(b []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.closed:
		return 0, os.ErrClosed
	case q.err != nil:
		return 0, q.err
	case len(q.buf) > 0 && len(q.buf)+len(b) > MaxStdinQueue:
		// The goroutine of run took what was queued before and is
		// still blocked writing it: the child has not read that either.
		return 0, fmt.Errorf("%w: %d bytes queued unread", ErrStdinFull, len(q.buf))
	}
	q.buf = append(q.buf, b...)
	q.poke()
	return len(b), nil
}

func (q *stdinQueue) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.poke()
	return nil
}

func (q *stdinQueue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// run writes the queue to the pipe until it is closed or fails.
func (q *stdinQueue) run() {
	defer q.w.Close()
	for range q.wake {
		q.mu.Lock()
		b, closed := q.buf, q.closed
		q.buf = nil
		q.mu.Unlock()
		if len(b) > 0 {
			if _, err := q.w.Write(b); err != nil {
				q.mu.Lock()
				q.err = err
				q.mu.Unlock()
				return
			}
		}
		if closed {
			return // Write refuses after Close: b was the last of it
		}
	}
}
