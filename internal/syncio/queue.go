package syncio

import (
	"errors"
	"io"
	"sync"
)

// ErrQueueFull is the error of a Queue's Write dropped because the
// messages still waiting hold Max bytes.
var ErrQueueFull = errors.New("the output is not read: too many messages wait for it")

// Queue passes each Write to W in order on a goroutine of its own, so
// that the writer never waits for W: a server's reader that answers a
// line itself must go on reading, or it never sees the end of its input
// while its client reads nothing (and the GraceWriter under W only gives
// up once that end is seen). What waits is bounded: a Write that would
// make the messages waiting hold more than Max bytes is dropped
// (ErrQueueFull). A failed write to W is not reported (it is W's own
// error). The zero value with W and Max set is ready; it must not be
// copied after first use.
type Queue struct {
	W   io.Writer
	Max int

	mu      sync.Mutex
	cond    *sync.Cond // signalled when the writer goroutine stops
	waiting [][]byte
	size    int  // bytes in waiting
	running bool // the writer goroutine runs
}

// Write queues a copy of p for W and returns at once.
func (q *Queue) Write(p []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.size+len(p) > q.Max {
		return 0, ErrQueueFull
	}
	q.waiting = append(q.waiting, append([]byte(nil), p...))
	q.size += len(p)
	if !q.running {
		q.running = true
		go q.run()
	}
	return len(p), nil
}

// run writes what waits, then stops.
func (q *Queue) run() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.waiting) > 0 {
		p := q.waiting[0]
		q.waiting[0] = nil
		q.waiting = q.waiting[1:]
		q.mu.Unlock()
		_, _ = q.W.Write(p)
		q.mu.Lock()
		q.size -= len(p)
	}
	q.running = false
	if q.cond != nil {
		q.cond.Broadcast()
	}
}

// Wait returns once every message queued so far has been handed to W
// and W has returned.
func (q *Queue) Wait() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.cond == nil {
		q.cond = sync.NewCond(&q.mu)
	}
	for q.running {
		q.cond.Wait()
	}
}
