package event_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestScanLog: ScanLog hands over the events ReadLog returns, one at a
// time, and says the same of a cut last line; an error of its fn ends
// the scan and is returned.
func TestScanLog(t *testing.T) {
	data, err := os.ReadFile("../testdata/opencode/multi_step_reasoning.golden.ndjson")
	require.NoError(t, err)
	cut := string(data[:len(data)-20])
	want, wantCut, err := event.ReadLog(strings.NewReader(cut))
	require.NoError(t, err)
	require.True(t, wantCut)
	var got []event.Event
	isCut, err := event.ScanLog(strings.NewReader(cut), func(ev event.Event) error {
		got = append(got, ev)
		return nil
	})
	require.NoError(t, err)
	require.True(t, isCut)
	require.Equal(t, want, got)

	stop := errors.New("stop")
	n := 0
	_, err = event.ScanLog(strings.NewReader(string(data)), func(event.Event) error {
		n++
		return stop
	})
	require.ErrorIs(t, err, stop)
	require.Equal(t, 1, n)
}
