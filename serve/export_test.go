package serve

// LiveRuns is how many runs s holds; it waits for the runs it started to
// end first.
func LiveRuns(s *Server) int {
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}
