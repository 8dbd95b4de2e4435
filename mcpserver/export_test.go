package mcpserver

import "time"

// BufferedEvents is how many events the runs of s's sessions hold in
// memory.
func BufferedEvents(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, se := range s.sessions {
		for _, r := range se.runs {
			r.mu.Lock()
			n += len(r.events)
			r.mu.Unlock()
		}
	}
	return n
}

// MaxLine is the longest line ServeStdio reads.
const MaxLine = maxLine

// SetWriteGrace sets how long a write to ServeStdio's output may stay
// blocked once the client has gone.
func SetWriteGrace(s *Server, d time.Duration) { s.writeGrace = d }

// MaxBody is the largest request body s's Handler takes; SetMaxBody sets
// it, before Handler is called.
func MaxBody(s *Server) int64       { return s.maxBody }
func SetMaxBody(s *Server, n int64) { s.maxBody = n }

// KeptEventBytes is the size of the events the runs of s's sessions hold
// in memory.
func KeptEventBytes(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, se := range s.sessions {
		for _, r := range se.runs {
			n += r.keptBytes()
		}
	}
	return n
}

// SetSessionBounds sets what a session of s keeps of its finished runs:
// bytes of events, and runs.
func SetSessionBounds(s *Server, bytes, runs int) {
	s.mu.Lock()
	s.sessionEventBytes, s.maxFinished = bytes, runs
	s.mu.Unlock()
}
