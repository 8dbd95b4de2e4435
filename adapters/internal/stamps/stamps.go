// Package stamps keeps the first and the last timestamp of an agent's
// lines, raw, for a parser's NativeSpan (adapters.NativeSpanned): a
// line's bytes are gone after its Parse, and a timestamp is read only
// when the span is asked for, not on every line.
package stamps

// Span is the first and the last timestamp noted.
type Span struct{ first, last []byte }

// Note keeps raw, a line's timestamp as the line wrote it, as the last so
// far, and as the first when it is the first. An empty raw is none.
func (s *Span) Note(raw string) {
	if raw == "" {
		return
	}
	if len(s.first) == 0 {
		s.first = append(s.first, raw...)
	}
	s.last = append(s.last[:0], raw...)
}

// MS is the span from the first timestamp to the last in ms, each read
// by ms; false when none was noted, either cannot be read, or the last
// comes before the first.
func (s *Span) MS(ms func(raw string) (int64, bool)) (int64, bool) {
	first, ok := ms(string(s.first))
	if !ok {
		return 0, false
	}
	last, ok := ms(string(s.last))
	if !ok || last < first {
		return 0, false
	}
	return last - first, true
}
