// Package fewmap holds Map, a map for the few entries a stream has live at
// a time: its tool calls in flight.
//
// Nearly every stream has one call open at a time, some a handful. A Go
// map of them cost 800 instructions a call (to add, look up and delete: a
// map emptied of its last entry draws a new seed), 2 to 2.5 % of a harness
// parse of tool-heavy streams; a search of a slice costs 170 (callgrind,
// cursor, codex and gemini streams). More entries than a few (calls made
// in parallel, or left open) are also indexed by a Go map, so that no
// stream makes it quadratic.
package fewmap

// linear is how many entries are searched without an index.
const linear = 8

// Map maps keys to values, as a Go map does. The zero value is empty; it
// is not safe for concurrent use.
type Map[K comparable, V any] struct {
	entries []entry[K, V] // in no order
	index   map[K]int     // key -> position in entries; nil while few
}

type entry[K comparable, V any] struct {
	key K
	val V
}

// find returns the position of key in m.entries, or -1.
func (m *Map[K, V]) find(key K) int {
	if m.index != nil {
		if i, ok := m.index[key]; ok {
			return i
		}
		return -1
	}
	for i := range m.entries {
		if m.entries[i].key == key {
			return i
		}
	}
	return -1
}

// Has reports whether key is in m.
func (m *Map[K, V]) Has(key K) bool { return m.find(key) >= 0 }

// Get returns the value of key.
func (m *Map[K, V]) Get(key K) (V, bool) {
	if i := m.find(key); i >= 0 {
		return m.entries[i].val, true
	}
	var zero V
	return zero, false
}

// Set sets the value of key, replacing the one it had.
func (m *Map[K, V]) Set(key K, val V) {
	if i := m.find(key); i >= 0 {
		m.entries[i].val = val
		return
	}
	m.entries = append(m.entries, entry[K, V]{key, val})
	switch {
	case m.index != nil:
		m.index[key] = len(m.entries) - 1
	case len(m.entries) > linear:
		m.index = make(map[K]int, len(m.entries))
		for i := range m.entries {
			m.index[m.entries[i].key] = i
		}
	}
}

// Delete removes key.
func (m *Map[K, V]) Delete(key K) {
	i := m.find(key)
	if i < 0 {
		return
	}
	last := len(m.entries) - 1
	m.entries[i] = m.entries[last]
	m.entries[last] = entry[K, V]{} // pins nothing
	m.entries = m.entries[:last]
	if m.index != nil {
		delete(m.index, key)
		if i < last {
			m.index[m.entries[i].key] = i
		}
		if len(m.entries) <= linear/2 {
			m.index = nil // few again (not at linear: a count going up and down there would rebuild it each time)
		}
	}
	if cap(m.entries) > 64 && len(m.entries) <= cap(m.entries)/4 {
		m.entries = append([]entry[K, V](nil), m.entries...) // don't keep the room of a burst
	}
}

// Len returns the number of entries.
func (m *Map[K, V]) Len() int { return len(m.entries) }

// Values returns the values, in no order, in a slice of their own.
func (m *Map[K, V]) Values() []V {
	out := make([]V, len(m.entries))
	for i := range m.entries {
		out[i] = m.entries[i].val
	}
	return out
}
