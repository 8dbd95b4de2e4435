package serve

// LiveRuns is how many runs s holds; it waits for the runs it started to
// end first.
func LiveRuns(s *Server) int {
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}

// Closing reports whether s.Close was called: the runs s held then have
// been told to stop.
func Closing(s *Server) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
