package logger

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// forgedStore is a session store with a run whose meta names a file
// outside the store ("../victim/data") and one whose meta claims a fresh
// run's id, both ended long ago, and the outside files themselves.
func forgedStore(t *testing.T) (dir, victim string) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "sessions")
	victim = filepath.Join(root, "victim", "data")
	require.NoError(t, os.MkdirAll(filepath.Dir(victim), 0o700))
	for _, ext := range runExts {
		require.NoError(t, os.WriteFile(victim+ext, []byte("keep\n"), 0o600))
	}
	writeRun(t, dir, "run_fresh", time.Now(), time.Now())
	old := t0.Add(-365 * 24 * time.Hour)
	for id, claims := range map[string]string{"run_escape": "../victim/data", "run_claim": "run_fresh"} {
		meta := `{"run":"` + claims + `","agent":"claude","status":"success","start":"` + old.Format(time.RFC3339) + `","end":"` + old.Format(time.RFC3339) + `"}`
		require.NoError(t, os.WriteFile(Path(dir, id, ExtMeta), []byte(meta), 0o600))
		require.NoError(t, os.WriteFile(Path(dir, id, ExtEvents), nil, 0o600))
		for _, ext := range []string{ExtMeta, ExtEvents} {
			require.NoError(t, os.Chtimes(Path(dir, id, ext), old, old))
		}
	}
	return dir, victim
}

// TestPruneForgedMeta: a meta is only that of the run its file name
// names. Prune took the run id from the meta's "run" and removed that
// run's files: a meta saying "../victim/data" removed files outside the
// store, one claiming a fresh run's id removed the fresh run. Now each is
// read as a missing meta, and its own files are pruned by their age.
func TestPruneForgedMeta(t *testing.T) {
	t.Parallel()
	dir, victim := forgedStore(t)
	removed, err := Prune(dir, 720*time.Hour, time.Now())
	require.NoError(t, err)
	require.Equal(t, []string{"run_claim", "run_escape"}, removed, "the forged runs' own files, by their age")
	for _, ext := range runExts {
		_, err := os.Stat(victim + ext)
		require.NoError(t, err, "outside the store: %s", ext)
	}
	for _, ext := range []string{ExtMeta, ExtEvents, ExtNative} {
		_, err := os.Stat(Path(dir, "run_fresh", ext))
		require.NoError(t, err, "the fresh run: %s", ext)
	}
	for _, id := range removed {
		_, err := os.Stat(Path(dir, id, ExtMeta))
		require.ErrorIs(t, err, fs.ErrNotExist, id)
	}
}

// TestListForgedMeta: List, Index.List and Load name each run by its
// files, once: a forged meta reads as missing (status unknown), not as a
// run "../victim/data" nor as a second run_fresh.
func TestListForgedMeta(t *testing.T) {
	t.Parallel()
	dir, _ := forgedStore(t)
	for name, list := range map[string]func() ([]Meta, error){"List": func() ([]Meta, error) { return List(dir) }, "Index": NewIndex(dir).List} {
		metas, err := list()
		require.NoError(t, err, name)
		got := map[string]string{}
		for _, m := range metas {
			got[m.Run] = m.Status
		}
		require.Len(t, metas, 3, name)
		require.Equal(t, map[string]string{"run_fresh": "success", "run_claim": "unknown", "run_escape": "unknown"}, got, name)
	}
	for _, id := range []string{"run_claim", "run_escape"} {
		m, err := Load(dir, id)
		require.NoError(t, err)
		require.Equal(t, id, m.Run)
		require.Equal(t, "unknown", m.Status)
	}
}

// TestPathNotPlain: an id that is not a plain file name reaches no file,
// whoever passes it: Path names none, and the readers find none.
func TestPathNotPlain(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "sessions")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(root, "outside"+ExtEvents), []byte("{}\n"), 0o600))
	for _, id := range []string{"../outside", "..", ".", "", "a/b", `a\b`, "a\x00b", "/etc/passwd"} {
		require.Empty(t, Path(dir, id, ExtEvents), "%q", id)
		_, err := OpenFile(dir, id, ExtEvents)
		require.True(t, errors.Is(err, fs.ErrNotExist), "%q: %v", id, err)
		_, err = ReadFile(dir, id, ExtEvents)
		require.True(t, errors.Is(err, fs.ErrNotExist), "%q: %v", id, err)
	}
	require.Equal(t, filepath.Join(dir, "run_a"+ExtEvents), Path(dir, "run_a", ExtEvents))
}

// TestLineSeqOutOfRange: a seq that is no int64 (a corrupted log line)
// is no seq, where it was clamped to the largest one.
func TestLineSeqOutOfRange(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]int64{
		`{"v":1,"type":"message","run":"r","seq":99999999999999999999999}`: -1,
		`{"type":"message","seq":99999999999999999999999}`:                 -1,
		`{"type":"message","seq":-3}`:                                      -1,
		`{"type":"message","seq":1.5}`:                                     -1,
		`{"type":"message","seq":1e3}`:                                     -1,
		`{"type":"message","seq":9223372036854775807}`:                     9223372036854775807,
		`{"v":1,"type":"message","run":"r","seq":7}`:                       7,
		`{"type":"message","seq":7}`:                                       7,
	} {
		seq, typ := LineSeq([]byte(line))
		require.Equal(t, want, seq, line)
		require.Equal(t, "message", typ, line)
	}
}

// TestFollowSeqOutOfRange: the lines after a corrupted line whose seq is
// past int64 are delivered: it took the largest seq, and every later
// line, its seq not above it, was skipped as delivered already.
func TestFollowSeqOutOfRange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lines := []string{
		`{"v":1,"type":"message","run":"run_z","seq":1}`,
		`{"v":1,"type":"message","run":"run_z","seq":99999999999999999999999}`,
		`{"v":1,"type":"message","run":"run_z","seq":2}`,
		`{"v":1,"type":"result","run":"run_z","seq":3}`,
	}
	writeRun(t, dir, "run_z", t0, t0.Add(time.Second), lines...)
	var seqs []int64
	err := Follow(context.Background(), dir, "run_z", FollowOptions{}, func(seq int64, _ []byte) error {
		seqs = append(seqs, seq)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []int64{1, -1, 2, 3}, seqs, "the corrupted line has no seq; the valid ones after it are delivered")
}
