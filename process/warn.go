package process

import (
	"sync"

	"github.com/agentharness/harness/event"
)

// warnQueue hands warnings to Options.OnWarning on a goroutine of its own,
// in the order they were found. The supervisor and the stderr reader never
// wait for the caller: OnWarning may block as long as the caller's own
// consumer does (a harness writing the warning to a stdout nobody reads),
// and the watchdogs, the escalation, interrupts and the draining of stderr
// must go on meanwhile. Nothing is dropped: Proc.Wait returns once every
// warning has been delivered.
//
// It needs no bound of its own: a run finds at most one tool_stalled per
// tool call, one idle warning per silence (a new silence needs output,
// which a composition blocked on the same consumer is not reading), one
// stderr_truncated and one lingered_after_result.
type warnQueue struct {
	mu      sync.Mutex
	pending []*event.Warning
	idle    chan struct{} // non-nil while a goroutine delivers; closed when it is done
}

// push queues w for fn, starting the delivering goroutine if none runs.
func (q *warnQueue) push(fn func(*event.Warning), w *event.Warning) {
	q.mu.Lock()
	q.pending = append(q.pending, w)
	start := q.idle == nil
	if start {
		q.idle = make(chan struct{})
	}
	q.mu.Unlock()
	if start {
		go q.deliver(fn)
	}
}

// deliver calls fn with each queued warning, oldest first, until none is
// left. Calls never overlap: only one deliver runs at a time.
func (q *warnQueue) deliver(fn func(*event.Warning)) {
	defer ContainPanic()
	for {
		q.mu.Lock()
		if len(q.pending) == 0 {
			q.pending = nil
			close(q.idle)
			q.idle = nil
			q.mu.Unlock()
			return
		}
		w := q.pending[0]
		q.pending[0] = nil
		q.pending = q.pending[1:]
		q.mu.Unlock()
		fn(w)
	}
}

// wait returns once every warning queued so far has been delivered.
func (q *warnQueue) wait() {
	q.mu.Lock()
	idle := q.idle
	q.mu.Unlock()
	if idle != nil {
		<-idle
	}
}
