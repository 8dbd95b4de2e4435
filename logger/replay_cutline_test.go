package logger

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestReplayLeavesOutCutLastLine: a log whose harness was killed
// mid-write ends in the start of a line, without its newline; replay
// wrote it with a newline, as if whole, and `| jq` failed on it. It is
// left out and reported, at any speed, over the cap or not; a whole last
// line without its newline is written, and a line with its newline is
// written as the log has it, whatever it holds.
func TestReplayLeavesOutCutLastLine(t *testing.T) {
	t.Parallel()
	a := `{"v":1,"type":"session_start","run":"run_01CUT","seq":1,"ts":1}`
	notJSON := `not json, but a whole line`
	d := `{"v":1,"type":"result","run":"run_01CUT","seq":3,"ts":4}`
	for _, c := range []struct {
		name    string
		log     string
		want    string
		wantCut int64
	}{
		{"cut-mid-line", a + "\n" + notJSON + "\n" + d[:20], a + "\n" + notJSON + "\n", 20},
		{"cut-at-the-last-byte", a + "\n" + d[:len(d)-1], a + "\n", int64(len(d) - 1)},
		{"cut-over-the-cap", a + "\n" + strings.Repeat("z", 2*event.MaxLineBytes), a + "\n", 2 * event.MaxLineBytes},
		{"whole-without-newline", a + "\n" + d, a + "\n" + d + "\n", 0},
		{"ends-with-newline", a + "\n" + d + "\n", a + "\n" + d + "\n", 0},
		{"only-a-cut-line", d[:10], "", 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(Path(dir, "run_01CUT", ExtEvents), []byte(c.log), 0o600))
			for _, speed := range []float64{0, 1} {
				var out bytes.Buffer
				cut, err := ReplayCut(dir, "run_01CUT", &out, speed, func(time.Duration) {})
				require.NoError(t, err)
				require.Equal(t, c.wantCut, cut, "speed %v", speed)
				require.Equal(t, c.want, out.String(), "speed %v", speed)
				for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
					require.True(t, l == notJSON || l == "" || json.Valid([]byte(l)), "a line no reader decodes: %.40q", l)
				}
			}
		})
	}
}

// TestReplayRefusesNaNSpeed: NaN compares false to everything, so it
// passed the negative check and replayed at once.
func TestReplayRefusesNaNSpeed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(Path(dir, "run_01NAN", ExtEvents), []byte("{}\n"), 0o600))
	var out bytes.Buffer
	require.Error(t, Replay(dir, "run_01NAN", &out, math.NaN(), nil))
	require.Zero(t, out.Len())
}
