package logger

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestNativeLogCap: an agent flooding its stdout wrote 2.5 GB of native
// log in 8 s, with no bound. Past the cap, the native and stderr logs take
// no more lines, whole lines only (a line that does not fit is the first
// left out, and so is every later one, even a short one), and the meta
// counts the bytes left out.
func TestNativeLogCap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := "run_01JTEST00000000000000CAP1"
	s, err := Open(dir, run, Meta{Agent: "claude", Start: time.Now()}, WithNativeMax(20), WithRedactor(NewRedactor(nil)))
	require.NoError(t, err)
	for _, l := range []string{"0123456789", "abcdefgh", "xyz", "1"} { // 11 + 9 fit; 4 and 2 do not
		require.NoError(t, s.WriteNative(event.StreamStdout, []byte(l)))
		require.NoError(t, s.WriteNative(event.StreamStderr, []byte(l)))
	}
	require.NoError(t, s.WriteNative(event.StreamStdout, []byte(strings.Repeat("y", 100))))
	require.NoError(t, s.Close(Meta{Status: "success"}))

	for _, ext := range []string{ExtNative, ExtStderr} {
		data, err := os.ReadFile(Path(dir, run, ext))
		require.NoError(t, err)
		require.Equal(t, "0123456789\nabcdefgh\n", string(data), ext)
	}
	m, err := Load(dir, run)
	require.NoError(t, err)
	require.Equal(t, int64(4+2+101), m.NativeDropped)
	require.Equal(t, int64(4+2), m.StderrDropped)
}

// TestNativeLogUncapped: the default cap leaves an ordinary run whole,
// and WithNativeMax(0) takes the cap away.
func TestNativeLogUncapped(t *testing.T) {
	t.Parallel()
	for _, opts := range [][]Option{nil, {WithNativeMax(0)}} {
		dir := t.TempDir()
		run := "run_01JTEST00000000000000CAP2"
		s, err := Open(dir, run, Meta{Agent: "claude", Start: time.Now()}, append(opts, WithRedactor(NewRedactor(nil)))...)
		require.NoError(t, err)
		line := []byte(strings.Repeat("z", 1000))
		for range 1000 {
			require.NoError(t, s.WriteNative(event.StreamStdout, line))
		}
		require.NoError(t, s.Close(Meta{Status: "success"}))
		fi, err := os.Stat(Path(dir, run, ExtNative))
		require.NoError(t, err)
		require.Equal(t, int64(1001*1000), fi.Size())
		m, err := Load(dir, run)
		require.NoError(t, err)
		require.Zero(t, m.NativeDropped)
	}
}
