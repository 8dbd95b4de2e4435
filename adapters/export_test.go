package adapters

// SetWaitingForBatch makes Normalize's reader call f whenever it is about
// to wait for a batch to come back; the returned func undoes it. For a
// test that is not parallel: it sets what every Normalize reads.
func SetWaitingForBatch(f func()) (restore func()) {
	waitingForBatch = f
	return func() { waitingForBatch = nil }
}
