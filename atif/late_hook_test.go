package atif

// SetLate sets when a call ends late (over bytes of log or events events
// after its start; -1 and -1: every call that ends) and how many late
// ends Export keeps, for a test; the returned func restores them.
func SetLate(bytes int64, events, count int) (restore func()) {
	b, e, c := lateBytes, lateEvents, maxLate
	lateBytes, lateEvents, maxLate = bytes, events, count
	return func() { lateBytes, lateEvents, maxLate = b, e, c }
}
