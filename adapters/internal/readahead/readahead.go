// Package readahead is the parse-only speed-up of adapters.Normalize: a
// parser whose reading of a line (finding its fields: most of the work)
// needs none of its state lets Normalize read lines on one goroutine, ahead
// of another that applies them in order with the state, so the two share
// the machine's cores. A live run never uses it: it calls Parse once per
// line. Adapters opt in by embedding a TwoStep; nothing of this is part of
// an adapter's exported API.
package readahead

import "github.com/agentharness/harness/event"

// Parser is implemented by an adapters.Parser that reads ahead. For every
// line, Read then Apply must give what Parse gives.
type Parser interface {
	// Slots returns room for n read lines.
	Slots(n int) Slots
	// Read reads line into slot i. It may run on another goroutine than
	// Apply and Parse, ahead of them, and touches nothing they use. line
	// stays valid until Apply of slot i returns (Apply must copy what it
	// keeps).
	Read(s Slots, i int, line []byte)
	// Apply turns slot i, read earlier, into bodies. The slot keeps what
	// Read put there until it is read into again or cleared.
	Apply(dst []event.Body, s Slots, i int) (out []event.Body, known bool)
}

// Slots is a read-ahead parser's room for read lines, made by SlotsOf.
type Slots interface {
	// Clear empties slots [i, j), so that they pin nothing.
	Clear(i, j int)
}

// slots is room for read lines of type R.
type slots[R any] []R

func (s *slots[R]) Clear(i, j int) { clear((*s)[i:j]) }

// SlotsOf returns room for n read lines of type R.
func SlotsOf[R any](n int) Slots {
	s := make(slots[R], n)
	return &s
}

// Slot returns slot i of s, made by SlotsOf[R].
func Slot[R any](s Slots, i int) *R { return &(*s.(*slots[R]))[i] }

// TwoStep gives a parser that reads a line into an R (no parser state)
// and then applies it (in order, with the state) the methods Parse, Slots,
// Read and Apply. Embed one made by New.
type TwoStep[R any] struct {
	readLine  func(r *R, line []byte)
	applyLine func(dst []event.Body, r *R) ([]event.Body, bool)
	scratch   *R // Parse's reading: a parser is used by one goroutine at a time
}

// New returns the TwoStep of read, which must set all of *r, and apply.
func New[R any](read func(r *R, line []byte), apply func(dst []event.Body, r *R) ([]event.Body, bool)) TwoStep[R] {
	return TwoStep[R]{readLine: read, applyLine: apply, scratch: new(R)}
}

// Parse implements adapters.Parser: read, then apply. It reads into memory
// of its own, kept from call to call: a fresh R each line would be
// allocated on the heap (it goes through a function value), a kilobyte a
// line for some.
func (t TwoStep[R]) Parse(dst []event.Body, line []byte) ([]event.Body, bool) {
	t.readLine(t.scratch, line)
	return t.applyLine(dst, t.scratch)
}

// Slots implements Parser.
func (t TwoStep[R]) Slots(n int) Slots { return SlotsOf[R](n) }

// Read implements Parser.
func (t TwoStep[R]) Read(s Slots, i int, line []byte) { t.readLine(Slot[R](s, i), line) }

// Apply implements Parser.
func (t TwoStep[R]) Apply(dst []event.Body, s Slots, i int) ([]event.Body, bool) {
	return t.applyLine(dst, Slot[R](s, i))
}
