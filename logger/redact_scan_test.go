package logger

import (
	"encoding/binary"
	"strings"
	"testing"
)

// scanBefore is scan as it was before it tested 16 bytes at a time and
// checked a hit's other pair before at (commit 70d3ff4): the reference
// FuzzScanSameAsBefore holds scan to.
func (r *Redactor) scanBefore(line []byte) rule {
	var rules rule
	bg := r.bigrams
	p := 0
	for ; p+8 <= len(line); p += 8 {
		x := binary.LittleEndian.Uint64(line[p:])
		if bg[uint16(x)]|bg[uint16(x>>16)]|bg[uint16(x>>32)]|bg[uint16(x>>48)] == 0 {
			continue
		}
		for q := p; q < p+8; q += 2 {
			rules |= r.aroundBefore(line, q, rules)
		}
	}
	for ; p+1 < len(line); p += 2 {
		rules |= r.aroundBefore(line, p, rules)
	}
	return rules
}

func (r *Redactor) aroundBefore(line []byte, p int, found rule) rule {
	b := r.bigrams[binary.LittleEndian.Uint16(line[p:])]
	var rules rule
	if b&startsBefore != 0 && p > 0 {
		rules |= r.at(line, p-1, found)
	}
	if b&startsHere != 0 {
		rules |= r.at(line, p, found|rules)
	}
	return rules
}

// needlePieces are the needles of r (triggers and secret values), whole
// and cut at every byte, to build lines where needles start, end and
// overlap at every offset.
func needlePieces(r *Redactor) []string {
	var needles []string
	for _, t := range baseTriggers {
		needles = append(needles, t.needle)
	}
	for _, v := range r.env {
		needles = append(needles, string(v))
	}
	pieces := []string{"y", " ", "_", "9", `"`, `\`, "é", "\x00"}
	for _, n := range needles {
		for k := 1; k < len(n); k++ {
			pieces = append(pieces, n[:k], n[k:])
		}
		pieces = append(pieces, n)
	}
	return pieces
}

// FuzzScanSameAsBefore: scan calls for the same rules as scanBefore on
// any line, and on lines made of pieces of needles in mixed case (each
// two bytes of the input pick a piece and its case).
func FuzzScanSameAsBefore(f *testing.F) {
	f.Add([]byte("key"), true)
	f.Add([]byte(`{"Authorization":"x","t":"tok-0123456789abcdef"}`), false)
	f.Add([]byte("xKEyPASSWD sk-aSIA :// :\\/\\/ correct-horse-battery"), false)
	f.Add([]byte{0, 1, 2, 3, 200, 201, 202, 203, 17, 90, 255}, true)
	r := NewRedactor(append(testEnv, "ANTHROPIC_API_KEY=sk-ant-benchmark-0123456789")).
		WithEnv([]string{"X_PASS=pw12", "FOO=ab\"c<d", "BAR=Ünïcode-välue"})
	pieces := needlePieces(r)
	f.Fuzz(func(t *testing.T, in []byte, fromPieces bool) {
		line := in
		if fromPieces {
			var b []byte
			for k := 0; k+1 < len(in); k += 2 {
				n := int(in[k]) | int(in[k+1])<<8
				p := pieces[n%len(pieces)]
				switch n / len(pieces) % 4 {
				case 1:
					p = strings.ToUpper(p)
				case 2:
					p = strings.ToUpper(p[:1]) + p[1:]
				case 3:
					p = p[:len(p)-1] + strings.ToUpper(p[len(p)-1:])
				}
				b = append(b, p...)
			}
			line = b
		}
		if got, want := r.scan(line), r.scanBefore(line); got != want {
			t.Fatalf("%q: scan %b, before %b", line, got, want)
		}
	})
}

// TestScanSameAsBefore: scan and scanBefore agree on the benchmark lines,
// at every cut (each start and length up to 40 bytes).
func TestScanSameAsBefore(t *testing.T) {
	t.Parallel()
	r := benchRedactor()
	for _, c := range benchLines {
		for i := range c.line {
			for j := i; j <= len(c.line) && j <= i+40; j++ {
				if got, want := r.scan(c.line[i:j]), r.scanBefore(c.line[i:j]); got != want {
					t.Fatalf("%q: scan %b, before %b", c.line[i:j], got, want)
				}
			}
		}
		if got, want := r.scan(c.line), r.scanBefore(c.line); got != want {
			t.Fatalf("%s: scan %b, before %b", c.name, got, want)
		}
	}
}
