package opencode

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

// partReader streams one step of n text parts, never held whole.
type partReader struct {
	n, i int
	buf  []byte
}

func (r *partReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.i == r.n {
			return 0, io.EOF
		}
		r.buf = []byte(`{"type":"text","sessionID":"s","part":{"sessionID":"s","type":"text","text":"` + strconv.Itoa(r.i) + strings.Repeat("x", 1000) + `"}}` + "\n")
		r.i++
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// BenchmarkHugeStep normalizes one step of 128 MiB of text parts and
// reports the peak heap: the text kept for the result is capped, so the
// heap stays flat whatever the step's size.
func BenchmarkHugeStep(b *testing.B) {
	const parts = 128 << 10 // of ~1 KiB
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
	b.SetBytes(parts * 1090)
	for b.Loop() {
		s := event.NewStream(event.StreamConfig{Sink: func(event.Event) {}})
		_ = adapters.Normalize(&partReader{n: parts}, New().NewParser(), s, adapters.NormalizeOptions{})
		s.Finish(event.Outcome{NoProcess: true})
	}
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
}
