package mcpserver

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
