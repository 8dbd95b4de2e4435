package logger

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
)

// MinLineLen is the least length of a line of a multi-line value that
// is redacted as a value of its own (valueLines). Every full line of a
// key's body is longer (PEM writes 64 characters a line, OpenSSH 70, PGP
// 64 or 76); only the last may be shorter, and under 16 base64
// characters it holds fewer than 96 bits from the end of the key's
// encoding (an RSA key's last CRT coefficient, an OpenSSH key's comment
// and padding), which give no attack on the key. Shorter lines of a
// credentials file or a script ("}", "fi", "[default]", "kind: Config",
// a PGP checksum) are the structure of any such file: as values of their
// own they would blank that text wherever it shows. (Lines, in all their
// forms, of blockMinLen bytes or more are found by a blockIndex; the few
// shorter ones, as other values, by the scan.)
const MinLineLen = 16

// valueLines returns the lines of v that are redacted as values of their
// own when v holds line breaks ("\n", "\r\n" or "\r", or those escaped
// as "\n" and "\r": a key inside a JSON credentials file). Logs are
// redacted a line at a time, and a JSON string or a terminal (CRLF) may
// break v otherwise than v does, so v whole would never match. Each line
// is trimmed of blanks; those shorter than MinLineLen and the armor of a
// PEM block ("-----BEGIN RSA PRIVATE KEY-----", no secret, the same in
// every key) are left out. A value of one line with line breaks around
// it ("pw12\n", as a TOML multi-line string ends) is that line, returned
// as one, a value like any other, when it is at least least bytes long
// (the least of v whole). Nothing when v has no line break.
func valueLines(v string, least int) (lines []string, one string) {
	if !strings.ContainsAny(v, "\r\n") && !strings.Contains(v, `\n`) && !strings.Contains(v, `\r`) {
		return nil, ""
	}
	split := strings.FieldsFunc(strings.NewReplacer(`\r\n`, "\n", `\n`, "\n", `\r`, "\n").Replace(v),
		func(c rune) bool { return c == '\n' || c == '\r' })
	for _, l := range split {
		if l = strings.Trim(l, " \t"); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 1 {
		if len(lines[0]) >= least && lines[0] != v {
			return nil, lines[0]
		}
		return nil, ""
	}
	kept := lines[:0]
	for _, l := range lines {
		armor := strings.HasPrefix(l, "-----") && strings.HasSuffix(l, "-----")
		if len(l) >= MinLineLen && !armor {
			kept = append(kept, l)
		}
	}
	return kept, ""
}

// blockIndex finds long needles (the lines of multi-line values, in
// every form addValues gives them, of blockMinLen bytes or more) in a
// line. They stay out of the scan's bigram table: a key of 50 lines of
// random base64 would mark as many pairs, a bundle of 1000 most of them,
// and a line of text that repeats one (a flood of "yyyy…") would then
// check the needles at every pair (Redact of a flood line: 2 µs with 200
// lines, 55 µs with 1000, against 0.1 µs). Instead, since a needle of
// blockMinLen bytes or more covers a whole 8-byte block at a multiple of
// blockStep of any line it occurs in, at one of its offsets 0 to
// blockStep-1, those blocks of the line are looked up among the blocks
// at those offsets of every needle: first in a filter of 2^16 bits (8
// KiB, in the L1 cache; a key of 50 lines sets 2% of them), then,
// exactly, in a table. That costs about an instruction a byte whatever
// the line holds, and only where there are such needles (callgrind,
// BenchmarkRedactMultiLineEnv: a flood line of 970 bytes 1,991 -> 3,011
// instructions, a line of English 5,199 -> 6,013).
type blockIndex struct {
	filter  *[1 << 10]uint64 // bit filterHash(block) of every block set
	needles [][]byte
	refs    [][]blockRef // refs[slot.ref-1]: where a block occurs
	slots   []blockSlot  // open addressing; a power of 2, at most 1/4 full
	shift   uint8
}

const (
	blockStep   = 16
	blockMinLen = blockStep + 7
)

// filterHash is the bit of blockIndex.filter for block k.
func filterHash(k uint64) uint64 { return (k * goldenMul) >> 48 }

type blockSlot struct {
	key uint64
	ref int32 // 0: empty
}

// blockRef is the needle a block is part of, and where in it.
type blockRef struct{ needle, off int32 }

const goldenMul = 0x9E3779B97F4A7C15

// newBlockIndex indexes needles, each at least blockMinLen bytes long.
func newBlockIndex(needles [][]byte) *blockIndex {
	n := blockStep * len(needles)
	size := 1 << max(6, bits.Len(uint(4*n-1)))
	x := &blockIndex{filter: new([1 << 10]uint64), needles: needles, slots: make([]blockSlot, size),
		shift: uint8(64 - bits.TrailingZeros(uint(size)))}
	for i, nd := range needles {
		for off := range blockStep {
			k := binary.LittleEndian.Uint64(nd[off:])
			h := filterHash(k)
			x.filter[h>>6] |= 1 << (h & 63)
			s := x.slot(k)
			if s.ref == 0 {
				s.key = k
				x.refs = append(x.refs, nil)
				s.ref = int32(len(x.refs))
			}
			x.refs[s.ref-1] = append(x.refs[s.ref-1], blockRef{int32(i), int32(off)})
		}
	}
	return x
}

// slot returns the slot of key k: its own, or the empty one it would go in.
func (x *blockIndex) slot(k uint64) *blockSlot {
	mask := uint64(len(x.slots) - 1)
	for i := (k * goldenMul) >> x.shift; ; i = (i + 1) & mask {
		if s := &x.slots[i]; s.ref == 0 || s.key == k {
			return s
		}
	}
}

// contains reports whether line holds one of the needles.
func (x *blockIndex) contains(line []byte) bool {
	f := x.filter
	// 17 instructions a step (a block loaded from an array: no bounds
	// check in the load).
	for p, last := 0, len(line)-8; p <= last; p += blockStep {
		k := binary.LittleEndian.Uint64((*[8]byte)(line[p:])[:])
		if h := filterHash(k); f[h>>6]>>(h&63)&1 != 0 && x.at(line, p, k) {
			return true
		}
	}
	return false
}

// at reports whether a needle holds the block k at line[p:p+8] where
// line holds it.
func (x *blockIndex) at(line []byte, p int, k uint64) bool {
	s := x.slot(k)
	if s.ref == 0 {
		return false
	}
	for _, ref := range x.refs[s.ref-1] {
		nd := x.needles[ref.needle]
		if start := p - int(ref.off); start >= 0 && start+len(nd) <= len(line) && bytes.Equal(line[start:start+len(nd)], nd) {
			return true
		}
	}
	return false
}
