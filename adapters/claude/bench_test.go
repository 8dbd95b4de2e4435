package claude

import (
	"runtime"
	"strings"
	"testing"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// BenchmarkNormalize times parser, event.Stream and encoder together on a
// stream built from the testdata, as harness parse runs them.
func BenchmarkNormalize(b *testing.B) {
	adaptertest.BenchNormalize(b, New(), adaptertest.BenchStream(b, "claude", 4<<20, "partial-*"))
}

// BenchmarkParse times the parser alone on the same stream.
func BenchmarkParse(b *testing.B) {
	adaptertest.BenchParse(b, New(), adaptertest.BenchStream(b, "claude", 4<<20, "partial-*"))
}

// BenchmarkOneLongBlock streams 256 MiB of text deltas in one content
// block, as one run, and reports the heap in use at its largest (sampled
// every 4 MiB) and at the end: what the parser holds must not grow with
// the block (issue: 256 MiB took 1 GB). Each delta is parsed and dropped,
// as the Stream does once it has written it.
func BenchmarkOneLongBlock(b *testing.B) {
	const total, piece = 256 << 20, 64 << 10
	delta := []byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` +
		strings.Repeat("a", piece) + `"}},"parent_tool_use_id":null}`)
	b.SetBytes(total)
	b.ReportAllocs()
	var peak, end uint64
	for b.Loop() {
		p := New().NewParser()
		var buf []event.Body
		for _, l := range []string{msgStart, textStart} {
			buf, _ = p.Parse(buf[:0], []byte(l))
		}
		for i := range total / piece {
			buf, _ = p.Parse(buf[:0], delta)
			if i%64 == 0 {
				peak = max(peak, heapInUse())
			}
		}
		for _, l := range []string{textStop, msgDelta, msgStop} {
			buf, _ = p.Parse(buf[:0], []byte(l))
		}
		buf = p.Flush(buf[:0])
		end = max(end, heapInUse())
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(end)/(1<<20), "end-heap-MiB")
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
