//go:build linux

package process

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLinesInThePipeOutliveTheAgent: the agent printed all its lines and
// exited while the harness was still busy with its first line (a slow
// consumer, a long line). What the pipe holds then was written by the run
// and is read to the end, however long past the drain bound the reader
// needs; the old code closed the pipe after the bound and lost it.
func TestLinesInThePipeOutliveTheAgent(t *testing.T) {
	t.Parallel()
	const drainWait = 20 * time.Millisecond
	first := true
	busy := func(r *run, _ string) {
		if !first {
			return
		}
		first = false
		<-r.p.exited               // every line is in the pipe (200 short lines fit)
		time.Sleep(10 * drainWait) // and the drain bound is long past
	}
	r := startFake(t, t.Context(), "print-lines", []string{"200"}, Options{Idle: time.Minute, drainWait: drainWait}, busy, "")
	o := r.wait(t, 30*time.Second)
	require.True(t, o.Exited)
	require.NoError(t, o.Reason)
	require.EqualValues(t, 202, o.StdoutLines, "init line, 200 lines, result")
	r.requireSeqs(t, 202)
}
