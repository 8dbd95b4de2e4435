//go:build linux && !race

package process

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Tests too slow under the race detector (make test runs them in a pass
// of their own without it).

// TestStdoutFlood reads 1 GiB of stdout lines, none lost or out of
// order, within floodRun's memory bound.
func TestStdoutFlood(t *testing.T) {
	r, o := floodRun(t, &run{ready: make(chan struct{}), light: true}, "flood-stdout", 1<<30, 120*time.Second)
	t.Logf("%d lines", o.StdoutLines)
	require.NoError(t, o.Reason)
	require.Zero(t, r.badSeq, "lines lost or out of order")
	require.Equal(t, int(o.StdoutLines), r.lastSeq)
}
