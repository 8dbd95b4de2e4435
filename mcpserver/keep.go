package mcpserver

import "fmt"

// Bounds on what a session keeps of its finished runs. A session may
// last long (an orchestrator delegating hundreds of tasks over stdio, an
// HTTP session living up to HardMax+5 min after its last request), and
// without session logs each run kept up to defaultMaxEventBytes of
// events for run_events until the session ended: memory grew with every
// run.
const (
	// MaxSessionEventBytes bounds the bytes of events a session keeps
	// for its finished runs when there are no session logs. Past it, the
	// oldest finished run's events are dropped first; the run keeps its
	// summary (run_status, cancel_run), and run_events says its events
	// are gone. A run still going is never touched: it keeps its own
	// newest events (Options.MaxEvents, at most 32 MiB).
	MaxSessionEventBytes = 64 << 20
	// MaxFinishedRuns bounds the finished runs a session remembers; past
	// it the oldest is forgotten, and its id is unknown to run_status,
	// run_events and cancel_run. A run still going is always remembered.
	MaxFinishedRuns = 256
)

// retire applies the session's bounds once r is over, before its
// run_agent call is answered: r's events count against the session's
// budget, the oldest finished runs' events are dropped past it, and the
// oldest finished runs are forgotten past the count.
func (s *Server) retire(se *session, r *run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se.finished = append(se.finished, r)
	se.keptBytes += r.keptBytes()
	for _, old := range se.finished {
		if se.keptBytes <= s.sessionEventBytes {
			break
		}
		se.keptBytes -= old.dropEvents()
	}
	for len(se.finished) > s.maxFinished {
		old := se.finished[0]
		se.keptBytes -= old.dropEvents()
		delete(se.runs, old.id)
		se.finished[0] = nil
		se.finished = se.finished[1:]
	}
}

// keptBytes is the size of the events r keeps for run_events.
func (r *run) keptBytes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bytes
}

// dropEvents drops the events r keeps, r being over, and returns their
// bytes. r keeps its summary, and run_events says the events are gone.
func (r *run) dropEvents() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.bytes
	if len(r.events) > 0 {
		r.evicted = true
	}
	r.events, r.bytes = nil, 0
	return n
}

// byteSize prints n in MiB, or in bytes under one.
func byteSize(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
