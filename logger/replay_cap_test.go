package logger

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestReplayDropsOverlongLine: replay writes every line of the log as it
// is, up to the stream's cap (event.MaxLineBytes) included, and drops a
// longer one up to its newline, as Tail does (it was written whole).
func TestReplayDropsOverlongLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRun(t, dir, "run_01CAP", t0, t0)
	a := `{"v":1,"type":"session_start","run":"run_01CAP","seq":1,"ts":1}`
	b := `{"v":1,"type":"text_delta","run":"run_01CAP","seq":2,"ts":2,"text":"` // padded to the cap
	b += strings.Repeat("b", event.MaxLineBytes-len(b)-2) + `"}`
	c := `{"v":1,"type":"text_delta","run":"run_01CAP","seq":3,"ts":3,"text":"c"}`
	d := `{"v":1,"type":"result","run":"run_01CAP","seq":4,"ts":4}`
	log := a + "\n" + b + "\n" +
		strings.Repeat("x", 2*event.MaxLineBytes) + "\n" + // over: dropped
		c + "\r\n" + "\n" +
		strings.Repeat("y", event.MaxLineBytes+1) + "\n" + // over by one
		d + "\n" +
		strings.Repeat("z", 3*event.MaxLineBytes) // a last line without newline, over
	require.NoError(t, os.WriteFile(Path(dir, "run_01CAP", ExtEvents), []byte(log), 0o600))
	var out bytes.Buffer
	require.NoError(t, Replay(dir, "run_01CAP", &out, 0, nil))
	require.Equal(t, a+"\n"+b+"\n"+c+"\n"+"\n"+d+"\n", out.String())

	// A last line without newline, under the cap, is written.
	require.NoError(t, os.WriteFile(Path(dir, "run_01CAP", ExtEvents), []byte(a+"\n"+d), 0o600))
	out.Reset()
	require.NoError(t, Replay(dir, "run_01CAP", &out, 1, func(time.Duration) {}))
	require.Equal(t, a+"\n"+d+"\n", out.String())
}

// TestReplayLongLineMemory: a log line with no newline in 64 MiB costs
// replay a few MiB, not the line (a 300 MB one took 604 MB RSS). Not
// parallel: it counts the process's allocations.
func TestReplayLongLineMemory(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, "run_01BIG", t0, t0)
	f, err := os.Create(Path(dir, "run_01BIG", ExtEvents))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(64<<20)) // zeros: sparse, no newline
	require.NoError(t, f.Close())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var out bytes.Buffer
	require.NoError(t, Replay(dir, "run_01BIG", &out, 0, nil))
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20))
	require.Zero(t, out.Len())
}
