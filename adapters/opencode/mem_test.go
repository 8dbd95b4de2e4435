package opencode

import (
	"strconv"
	"strings"
	"testing"

	"github.com/agentharness/harness/adapters/adaptertest"
)

// BenchmarkHugeStep normalizes one step of 128 MiB of text parts and
// reports the peak heap: the text kept for the result is capped, so the
// heap stays flat whatever the step's size.
func BenchmarkHugeStep(b *testing.B) {
	adaptertest.BenchPeakHeap(b, New(), 128<<10, 1090, func(i int) string {
		return `{"type":"text","sessionID":"s","part":{"sessionID":"s","type":"text","text":"` + strconv.Itoa(i) + strings.Repeat("x", 1000) + `"}}`
	})
}
