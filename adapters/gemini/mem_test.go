package gemini

import (
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// deltaReader streams one assistant message of n deltas, never held whole.
type deltaReader struct {
	n, i int
	buf  []byte
}

func (r *deltaReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.i == r.n {
			return 0, io.EOF
		}
		r.buf = []byte(delta(strconv.Itoa(r.i)+strings.Repeat("x", 1000)) + "\n")
		r.i++
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// BenchmarkHugeMessage normalizes one message of 128 MiB of deltas and
// reports the peak heap: what is kept of it is capped, so the heap stays
// flat whatever the message's size.
func BenchmarkHugeMessage(b *testing.B) {
	const deltas = 128 << 10 // of ~1 KiB
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	b.SetBytes(deltas * 1040)
	for b.Loop() {
		s := event.NewStream(event.StreamConfig{Sink: func(event.Event) {}})
		_ = adapters.Normalize(&deltaReader{n: deltas}, New().NewParser(), s, adapters.NormalizeOptions{})
		s.Finish(event.Outcome{NoProcess: true})
	}
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
}
