package harness_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
)

// TestParseTimesToolsFromTheCapture: harness parse reports a tool's
// duration from the capture's own timestamps, not from how fast the
// capture is read, and the result's duration from the agent's.
func TestParseTimesToolsFromTheCapture(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/claude/edits.jsonl")
	require.NoError(t, err)
	defer f.Close()
	got := map[string]int64{}
	res, err := harness.Parse(context.Background(), f, "claude", func(ev event.Event) {
		if te, ok := ev.Body.(*event.ToolEnd); ok {
			got[te.CallID] = te.DurationMS
		}
	}, harness.ParseOptions{})
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"toolu_mock000002": 57, "toolu_mock000003": 70, "toolu_mock000005": 23,
		"toolu_mock000006": 40, "toolu_mock000008": 17}, got)
	require.Equal(t, int64(389), res.DurationMS)
}

// TestParseCancelledWhileReading: a cancelled ctx ends a parse whose read
// waits for the pipe's writer, with ctx's error, and leaves the caller's
// file without a deadline. The parse waited for the writer to close, and
// then returned no error: the cancel was lost.
func TestParseCancelledWhileReading(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(); w.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		_, err := harness.Parse(ctx, r, "codex", func(event.Event) { once.Do(func() { close(first) }) }, harness.ParseOptions{})
		done <- err
	}()
	_, err = w.WriteString(`{"type":"thread.started","thread_id":"t1"}` + "\n")
	require.NoError(t, err)
	<-first // the line is parsed: the next read waits for the writer
	cancel()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		w.Close() // let it end
		t.Fatalf("the parse waited for the writer: %v", <-done)
	}
	require.ErrorIs(t, err, context.Canceled)
	// The caller's pipe reads again, without the deadline.
	_, err = w.WriteString("x\n")
	require.NoError(t, err)
	buf := make([]byte, 2)
	_, err = r.Read(buf)
	require.NoError(t, err)
}
