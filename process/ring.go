package process

// tailSize is how much of stderr is kept: the spec's 64 KiB tail.
const tailSize = 64 << 10

// ring keeps the last len(buf) bytes written to it. Its memory is fixed at
// creation whatever is written; it is not safe for concurrent use.
type ring struct {
	buf   []byte
	pos   int   // next write index
	total int64 // bytes ever written
}

func newRing(size int) *ring { return &ring{buf: make([]byte, size)} }

// Write always succeeds: older bytes are overwritten.
func (r *ring) Write(p []byte) (int, error) {
	n := len(p)
	r.total += int64(n)
	if n >= len(r.buf) {
		copy(r.buf, p[n-len(r.buf):])
		r.pos = 0
		return n, nil
	}
	c := copy(r.buf[r.pos:], p)
	if c < n {
		copy(r.buf, p[c:])
	}
	r.pos = (r.pos + n) % len(r.buf)
	return n, nil
}

// Bytes returns a copy of the kept bytes, oldest first.
func (r *ring) Bytes() []byte {
	if r.total < int64(len(r.buf)) {
		return append([]byte(nil), r.buf[:r.total]...)
	}
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.pos:]...)
	return append(out, r.buf[:r.pos]...)
}

// Overflowed reports whether bytes have been lost from the tail.
func (r *ring) Overflowed() bool { return r.total > int64(len(r.buf)) }
