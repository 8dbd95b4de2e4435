// Package idset owns the sets of ids a run must recognise until it ends,
// however long it is: the tool call ids a stream or parser has seen end
// (an agent may announce or answer one again), the model call ids a
// parser has counted. A member is kept as its 64-bit hash, 11 to 21 bytes
// of a table without pointers (the collector never scans it), where a map
// of the ids and their state kept a few hundred bytes a member and made a
// long parse's heap, and its collections, grow with every call.
package idset

import (
	"hash/maphash"
	"math/bits"
)

// Set is a set of strings, exact but for a collision of their 64-bit
// hashes: seeded at random per Set, so not reproducible, and a lookup
// among a million members hits one by chance about once in 2·10^13. The
// zero value is an empty set. A Set is not safe for concurrent use.
//
// The hashes are spread by their top bits over 64 tables that grow each
// on its own, so a growth copies a shard, not the set: with one
// table, the growth of a million-member set held the old table and the
// new, 24 MB, for a moment, and a parse's peak RSS rose with it (codex,
// 800 MB of stream: 46-54 MB against 40 at 200 MB).
type Set struct {
	shards []hashSet // made at the first Add
	seed   maphash.Seed
	// later holds the hashes Put gave and the tables do not hold yet.
	later  [putBatch]uint64
	nLater int
}

// putBatch is how many members Put holds before the tables take them.
// Taken one at a time, far apart, each waits on memory: a table of a
// million members is megabytes, and where a member goes is random.
// Taken in a row, their misses overlap.
const putBatch = 64

// shardBits is log2 of the number of shards.
const shardBits = 6

// Add adds id; it reports whether id was not a member yet.
func (s *Set) Add(id string) bool {
	s.flush()
	x := maphash.String(s.seed, id)
	return s.shards[x>>(64-shardBits)].add(x)
}

// Put adds id, as Add does, without telling whether it was a member:
// for a set that is looked up far less often than added to (a parser's
// ids of ended calls, asked of only when a call ends twice), it defers
// the table's work and does it for many members in a row.
func (s *Set) Put(id string) {
	if s.nLater == len(s.later) {
		s.flush()
	}
	if s.shards == nil {
		s.seed, s.shards = maphash.MakeSeed(), make([]hashSet, 1<<shardBits)
	}
	s.later[s.nLater] = maphash.String(s.seed, id)
	s.nLater++
}

// flush puts what Put holds into the tables, and makes them at first.
func (s *Set) flush() {
	if s.shards == nil {
		s.seed, s.shards = maphash.MakeSeed(), make([]hashSet, 1<<shardBits)
	}
	for _, x := range s.later[:s.nLater] {
		s.shards[x>>(64-shardBits)].add(x)
	}
	s.nLater = 0
}

// Has reports whether id is a member.
func (s *Set) Has(id string) bool {
	if s.shards == nil {
		return false
	}
	s.flush()
	x := maphash.String(s.seed, id)
	return s.shards[x>>(64-shardBits)].has(x)
}

// Len is the number of members.
func (s *Set) Len() int {
	s.flush()
	n := 0
	for i := range s.shards {
		n += s.shards[i].len()
	}
	return n
}

// hashSet is an exact set of 64-bit hashes, a shard of the ids a Set must
// keep for the whole run: one table of the hashes, open addressing with linear
// probing, grown twofold at three quarters full. A member costs 10.7 bytes
// at three quarters full and 21 just after a growth (14 at 300k calls),
// where a map of them all took 32; the table holds no pointers, so the
// collector does not scan it. A lookup is mostly one probe into the table:
// a sorted slice with a map of the newest (before) took 11 to 12 bytes a
// member, but cost harness parse 6 % more CPU on a codex stream in its
// lookups and merges (perf stat, 5 interleaved runs of 200 MB: 990 -> 929
// ms; gemini 1042 -> 1010 ms; peak RSS 39 MB either way, under parse's
// memory limit). The zero value is an empty set.
type hashSet struct {
	slots []uint64 // 0 marks an empty slot; len is a power of two
	n     int      // members in slots
	zero  bool     // 0 is a member (it cannot be stored in slots)
	shift uint     // 64 - log2(len(slots))
}

// add adds x; it reports whether x was not a member yet.
func (h *hashSet) add(x uint64) bool {
	if x == 0 {
		added := !h.zero
		h.zero = true
		return added
	}
	if 4*(h.n+1) > 3*len(h.slots) {
		h.grow()
	}
	if !h.put(x) {
		return false
	}
	h.n++
	return true
}

// home is x's first slot: x's bits spread by a multiplication (Fibonacci
// hashing), so that members that differ only in their high bits or only
// in their low bits are spread over the table.
func (h *hashSet) home(x uint64) uint64 { return (x * 0x9e3779b97f4a7c15) >> h.shift }

// put stores x unless it is there already (false).
func (h *hashSet) put(x uint64) bool {
	mask := uint64(len(h.slots) - 1)
	i := h.home(x)
	for h.slots[i] != 0 {
		if h.slots[i] == x {
			return false
		}
		i = (i + 1) & mask
	}
	h.slots[i] = x
	return true
}

func (h *hashSet) grow() {
	old := h.slots
	size := max(1<<4, 2*len(old))
	h.slots, h.shift = make([]uint64, size), uint(64-bits.TrailingZeros(uint(size)))
	// Written before the probes read it: a fresh page read first is
	// mapped to the zero page and faults again at its first write, a
	// copy whose TLB flush interrupts the other CPU (perf: 1.8 % of an
	// opencode parse, gone with this; CPU -1 to -3 %, 13 interleaved runs).
	clear(h.slots)
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
