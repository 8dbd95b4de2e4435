// Package syncio holds writers safe for concurrent use: one that keeps
// each Write whole, and one that also gives up on a reader that is gone.
package syncio

import (
	"io"
	"sync"
)

// Writer passes each Write to W under its lock, so that writers on several
// goroutines never interleave one Write's bytes with another's: a whole
// line or message per Write stays whole. A reader of what W holds (a
// buffer) takes the same lock (Lock, Unlock) to read it whole. Its zero
// value needs W set; it must not be copied after first use.
type Writer struct {
	sync.Mutex
	W io.Writer
}

// Write writes p to W, alone.
func (l *Writer) Write(p []byte) (int, error) {
	l.Lock()
	defer l.Unlock()
	return l.W.Write(p)
}
