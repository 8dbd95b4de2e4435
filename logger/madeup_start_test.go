package logger

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNoMetaStartsAtSessionStart: a run whose meta is missing started
// when its session_start says, not at its files' oldest modification
// time (after its first event; the copy's time for copied files, which
// made the duration negative), whether its log ends with its result or
// not; List and an Index say the same as Load.
func TestNoMetaStartsAtSessionStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := t0.Add(123 * time.Millisecond)
	ssLine := func(run string) string {
		return fmt.Sprintf(`{"v":1,"type":"session_start","run":%q,"seq":1,"ts":%d,"agent":"claude","model":"m-1"}`, run, start.UnixMilli())
	}
	result := fmt.Sprintf(`{"v":1,"type":"result","run":"run_01ENDED","seq":2,"ts":%d,"status":"success"}`, start.Add(1900*time.Millisecond).UnixMilli())
	writeRun(t, dir, "run_01ENDED", t0, t0, ssLine("run_01ENDED"), result)
	writeRun(t, dir, "run_01OPEN", t0, t0, ssLine("run_01OPEN"))
	copied := time.Now().Add(-time.Minute) // files copied: their times are the copy's
	for _, run := range []string{"run_01ENDED", "run_01OPEN"} {
		require.NoError(t, os.Remove(Path(dir, run, ExtMeta)))
		for _, ext := range []string{ExtEvents, ExtNative} {
			require.NoError(t, os.Chtimes(Path(dir, run, ext), copied, copied))
		}
	}
	check := func(how string, m Meta) {
		t.Helper()
		require.True(t, m.Start.Equal(start), "%s %s: start %v", how, m.Run, m.Start)
		require.Equal(t, "claude", m.Agent, how)
		if m.Run == "run_01ENDED" {
			require.Equal(t, "success", m.Status, how)
			require.Equal(t, 1900*time.Millisecond, m.End.Sub(m.Start), how)
		} else {
			require.Equal(t, "unknown", m.Status, how)
		}
	}
	for _, run := range []string{"run_01ENDED", "run_01OPEN"} {
		m, err := Load(dir, run)
		require.NoError(t, err)
		check("Load", m)
	}
	for how, list := range map[string]func() ([]Meta, error){"List": func() ([]Meta, error) { return List(dir) }, "Index": NewIndex(dir).List} {
		ms, err := list()
		require.NoError(t, err)
		require.Len(t, ms, 2)
		for _, m := range ms {
			check(how, m)
		}
	}
}
