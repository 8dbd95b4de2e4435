//go:build !linux

package mapfile

// populate: no such advice here; the reader's faults map the pages.
func populate([]byte) {}
