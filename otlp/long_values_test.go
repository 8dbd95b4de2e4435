package otlp

import (
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/otlptest"
)

// TestLongStringsAreCut: a text longer than maxValueBytes that a library
// caller hands Run.Add (a tool's output of its own, with content on) is
// cut to it on the span, at a rune boundary, as the SDKs' attribute value
// length limit cuts one (the final answer is cut within its JSON). It went
// whole: a span of hundreds of MiB, past what the encoder's padded
// lengths say.
func TestLongStringsAreCut(t *testing.T) {
	rc := otlptest.NewReceiver(t)
	evs := toolStream(1)
	long := "a" + strings.Repeat("é", maxValueBytes) // the cut falls inside an é
	for _, ev := range evs {
		if te, ok := ev.Body.(*event.ToolEnd); ok {
			te.Output = long
		}
		if r, ok := ev.Body.(*event.Result); ok {
			r.Text = long
		}
	}
	if w := export(t, rc, evs, RunInfo{Run: "run_x", Agent: "claude"}, true); len(w) != 0 {
		t.Fatal(w)
	}
	_, spans, _ := rc.Got()
	var seen int
	for _, s := range spans {
		for _, k := range []string{AttrToolResult, AttrOutputMessages} {
			v, ok := s.Attributes().Get(k)
			if !ok {
				continue
			}
			seen++
			if got := v.Str(); len(got) > maxValueBytes || len(got) < maxValueBytes-4 || !utf8.ValidString(got) {
				t.Errorf("%s: %d bytes (valid UTF-8: %v), want at most %d, cut at a rune", k, len(got), utf8.ValidString(got), maxValueBytes)
			}
			if k == AttrOutputMessages && !json.Valid([]byte(v.Str())) {
				t.Errorf("%s is no JSON: the JSON was cut, not the answer", k)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("%d long attributes arrived, want the tool's result and the answer", seen)
	}
}

// TestHugeMessageLength: a message of 256 MiB or more, past what begin's
// four bytes of length say, has its whole length written. Its length lost
// its high bits (a message of 256 MiB said 0 bytes): a malformed request.
func TestHugeMessageLength(t *testing.T) {
	const n = 1 << 28
	b, start := begin(make([]byte, 0, 16+n), 2)
	b = end(b[:start+n], start)
	got, k := binary.Uvarint(b[1:])
	if got != n || 1+k+n != len(b) {
		t.Fatalf("length %d in %d bytes, message of %d bytes: want %d", got, k, len(b)-1-k, n)
	}
}
