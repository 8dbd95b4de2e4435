package gemini

import (
	"strconv"
	"strings"
	"testing"

	"github.com/agentharness/harness/adapters/adaptertest"
)

// BenchmarkHugeMessage normalizes one message of 128 MiB of deltas and
// reports the peak heap: what is kept of it is capped, so the heap stays
// flat whatever the message's size.
func BenchmarkHugeMessage(b *testing.B) {
	adaptertest.BenchPeakHeap(b, New(), 128<<10, 1040, func(i int) string {
		return delta(strconv.Itoa(i) + strings.Repeat("x", 1000))
	})
}
