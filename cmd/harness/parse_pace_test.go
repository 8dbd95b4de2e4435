package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPaceMemoryLimit: while a parse keeps more than its fixed memory
// limit allows (a long stream's hashes of ended calls), the limit is
// raised to leave it room above what it keeps, so that the collector does
// not run back to back. Not parallel: the limit is the
// process's.
func TestPaceMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	debug.SetMemoryLimit(parseMemoryLimit)
	kept := make([]byte, 64<<20)
	for i := range kept {
		kept[i] = byte(i)
	}
	runtime.GC()
	stop := paceMemoryLimit(parseMemoryLimit)
	defer stop()
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) < int64(len(kept))+16<<20 {
		require.True(t, time.Now().Before(deadline), "the limit stayed at %d with %d kept", debug.SetMemoryLimit(-1), len(kept))
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(kept)
}
