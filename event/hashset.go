package event

import "slices"

// hashSet is an exact set of 64-bit hashes, for the ids of every tool call
// a run ended, which it must keep for the whole run. It takes about 11
// bytes a member (8 in a sorted slice, the rest in a small map of the
// newest, merged into the slice once it holds an eighth as many), where a
// map of them all took 32: a 300 MB codex stream (525k calls) kept 23 MB
// live, and under harness parse's 32 MiB memory limit the collector ran
// 161 times in it, 61 now (11 MB live at the end). The zero value is
// an empty set.
type hashSet struct {
	sorted []uint64
	recent map[uint64]struct{}
}

// minRecent is how many members the map takes before its first merge.
const minRecent = 1 << 14

// add adds x, which the caller knows is not a member yet.
func (h *hashSet) add(x uint64) {
	if h.recent == nil {
		h.recent = map[uint64]struct{}{}
	}
	h.recent[x] = struct{}{}
	if len(h.recent) >= max(minRecent, len(h.sorted)/8) {
		h.merge()
	}
}

func (h *hashSet) has(x uint64) bool {
	if _, ok := h.recent[x]; ok {
		return true
	}
	// A binary search, written out: slices.BinarySearch's was most of
	// the set's cost.
	lo, hi := 0, len(h.sorted)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if h.sorted[m] < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(h.sorted) && h.sorted[lo] == x
}

func (h *hashSet) len() int { return len(h.sorted) + len(h.recent) }

// merge moves the map's members into the sorted slice: a new slice of the
// exact size, so that the set never holds spare room.
func (h *hashSet) merge() {
	add := make([]uint64, 0, len(h.recent))
	for x := range h.recent {
		add = append(add, x)
	}
	slices.Sort(add)
	merged := make([]uint64, 0, len(h.sorted)+len(add))
	i, j := 0, 0
	for i < len(h.sorted) && j < len(add) {
		if h.sorted[i] < add[j] {
			merged = append(merged, h.sorted[i])
			i++
		} else {
			merged = append(merged, add[j])
			j++
		}
	}
	merged = append(merged, h.sorted[i:]...)
	h.sorted = append(merged, add[j:]...)
	clear(h.recent)
}
