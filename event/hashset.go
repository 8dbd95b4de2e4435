package event

import "math/bits"

// hashSet is an exact set of 64-bit hashes, for the ids of every tool call
// a run ended, which it must keep for the whole run: one table of the
// hashes, open addressing with linear probing, grown twofold at three
// quarters full. A member costs 10.7 bytes at three quarters full and 21
// just after a growth (14 at 300k calls), where a map of them all took
// 32; the table holds no pointers, so the collector does not scan it. A
// lookup is mostly one probe into the table: a sorted slice with a map
// of the newest (before) took 11 to 12 bytes a member, but cost harness
// parse 6 % more CPU on a codex stream in its lookups and merges (perf
// stat, 5 interleaved runs of 200 MB: 990 -> 929 ms; gemini 1042 -> 1010
// ms; peak RSS 39 MB either way, under parse's memory limit). The zero
// value is an empty set.
type hashSet struct {
	slots []uint64 // 0 marks an empty slot; len is a power of two
	n     int      // members in slots
	zero  bool     // 0 is a member (it cannot be stored in slots)
	shift uint     // 64 - log2(len(slots))
}

// add adds x, which the caller knows is not a member yet.
func (h *hashSet) add(x uint64) {
	if x == 0 {
		h.zero = true
		return
	}
	if 4*(h.n+1) > 3*len(h.slots) {
		h.grow()
	}
	h.put(x)
	h.n++
}

// home is x's first slot: x's bits spread by a multiplication (Fibonacci
// hashing), so that members that differ only in their high bits or only
// in their low bits are spread over the table.
func (h *hashSet) home(x uint64) uint64 { return (x * 0x9e3779b97f4a7c15) >> h.shift }

func (h *hashSet) put(x uint64) {
	mask := uint64(len(h.slots) - 1)
	i := h.home(x)
	for h.slots[i] != 0 {
		i = (i + 1) & mask
	}
	h.slots[i] = x
}

func (h *hashSet) grow() {
	old := h.slots
	size := max(1<<12, 2*len(old))
	h.slots, h.shift = make([]uint64, size), uint(64-bits.TrailingZeros(uint(size)))
	for _, x := range old {
		if x != 0 {
			h.put(x)
		}
	}
}

func (h *hashSet) has(x uint64) bool {
	if x == 0 {
		return h.zero
	}
	if h.n == 0 {
		return false
	}
	mask := uint64(len(h.slots) - 1)
	for i := h.home(x); ; i = (i + 1) & mask {
		switch h.slots[i] {
		case x:
			return true
		case 0:
			return false
		}
	}
}

func (h *hashSet) len() int {
	if h.zero {
		return h.n + 1
	}
	return h.n
}
