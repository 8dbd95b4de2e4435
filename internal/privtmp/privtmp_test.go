package privtmp

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// held reports whether someone holds dir's lock (a lock of another open
// file conflicts, in this process too).
func held(t *testing.T, dir string) bool {
	t.Helper()
	fd, err := Lock(dir)
	if err != nil {
		return true
	}
	require.NoError(t, syscall.Close(fd))
	return false
}

// TestMakeAndRemove: Make's directory is under parent, named by prefix,
// absolute, locked while it exists and gone (lock and all) after Remove,
// which a second time, or on nil, does nothing.
func TestMakeAndRemove(t *testing.T) {
	base := t.TempDir()
	t.Chdir(base)
	require.NoError(t, os.Mkdir("rel", 0o700))
	d, err := Make("rel", "run-")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(base, "rel"), filepath.Dir(d.Path), "absolute")
	require.Regexp(t, `^run-\d+$`, filepath.Base(d.Path))
	require.Equal(t, []string{"TMPDIR=" + d.Path, "TMP=" + d.Path, "TEMP=" + d.Path}, d.Env())
	require.True(t, held(t, d.Path))
	require.NoError(t, os.WriteFile(filepath.Join(d.Path, "left"), nil, 0o600))
	readOnly(t, d.Path)

	require.NoError(t, d.Remove())
	require.NoDirExists(t, d.Path)
	require.NoError(t, d.Remove())
	require.NoError(t, (*Dir)(nil).Remove())

	_, err = Make(filepath.Join(base, "missing"), "run-")
	require.Error(t, err)
}

// readOnly leaves in dir a directory that keeps its entries (mode 0555),
// as Go's module cache in an agent's HOME does.
func readOnly(t *testing.T, dir string) {
	t.Helper()
	ro := filepath.Join(dir, "go", "pkg", "mod")
	require.NoError(t, os.MkdirAll(filepath.Join(ro, "m@v1"), 0o755))
	require.NoError(t, os.Chmod(ro, 0o555))
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
}

// TestMakeRemovesStale: Make removes the directories of its prefix that a
// killed harness left (lock free, modified over StaleAge ago; read-only
// directories in them too), and keeps one whose lock is held, one too
// young to tell (being made) and others.
func TestMakeRemovesStale(t *testing.T) {
	parent := t.TempDir()
	old := time.Now().Add(-StaleAge - time.Minute)
	mkdir := func(name string, at time.Time) string {
		dir := filepath.Join(parent, name)
		require.NoError(t, os.Mkdir(dir, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "lib.so"), []byte("lib"), 0o600))
		require.NoError(t, os.Chtimes(dir, at, at))
		return dir
	}
	readOnly(t, mkdir("run-stale", old))
	require.NoError(t, os.Chtimes(filepath.Join(parent, "run-stale"), old, old))
	locked := mkdir("run-locked", old)
	mkdir("run-young", time.Now())
	mkdir("other-stale", old)
	fd, err := Lock(locked)
	require.NoError(t, err)
	defer syscall.Close(fd)

	d, err := Make(parent, "run-")
	require.NoError(t, err)
	defer d.Remove()
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"other-stale", "run-locked", "run-young", filepath.Base(d.Path)}, names)
}

// TestReuse: Reuse makes the directory and locks it; while it is held a
// second Reuse fails at once (EWOULDBLOCK), and after Release the same
// directory, with what was left in it, is locked again and marked used
// now. It removes the directories of its prefix unused for longer than
// it is given, unless held, and refuses a name not of its prefix.
func TestReuse(t *testing.T) {
	parent := t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	d, err := Reuse(parent, "kept-", "kept-a", time.Hour)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(parent, "kept-a"), d.Path)
	require.True(t, held(t, d.Path))
	require.NoError(t, os.WriteFile(filepath.Join(d.Path, "session"), []byte("s"), 0o600))

	_, err = Reuse(parent, "kept-", "kept-a", time.Hour)
	require.ErrorIs(t, err, syscall.EWOULDBLOCK, "held by another")

	d.Release()
	require.False(t, held(t, d.Path))
	d.Release() // a second time does nothing
	require.NoError(t, os.Chtimes(d.Path, old, old))
	again, err := Reuse(parent, "kept-", "kept-a", 3*time.Hour)
	require.NoError(t, err)
	require.Equal(t, d.Path, again.Path)
	require.FileExists(t, filepath.Join(again.Path, "session"), "what the last user left")
	st, err := os.Stat(again.Path)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), st.ModTime(), time.Minute, "marked used now")

	mkdir := func(name string, at time.Time) string {
		dir := filepath.Join(parent, name)
		require.NoError(t, os.Mkdir(dir, 0o700))
		readOnly(t, dir)
		require.NoError(t, os.Chtimes(dir, at, at))
		return dir
	}
	mkdir("kept-unused", old)
	mkdir("kept-recent", time.Now())
	mkdir("other-unused", old)
	require.NoError(t, os.Chtimes(again.Path, old, old)) // unused for long, but held
	b, err := Reuse(parent, "kept-", "kept-b", time.Hour)
	require.NoError(t, err)
	defer b.Release()
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"kept-a", "kept-b", "kept-recent", "other-unused"}, names)
	again.Release()

	for _, bad := range []string{"other", "kept-../x", "kept-a/b"} {
		_, err := Reuse(parent, "kept-", bad, time.Hour)
		require.Error(t, err, bad)
	}
}

// TestReuseRemovedUnderItsLock: another harness that removes the directory
// (stale to it) between Reuse's lock and its check leaves Reuse holding
// the lock of a directory gone; Reuse makes the path again and locks
// that. Removed on every try, it gives up with an error rather than loop.
func TestReuseRemovedUnderItsLock(t *testing.T) {
	parent := t.TempDir()
	tries := 0
	betweenLockAndCheck = func(path string) {
		if tries++; tries == 1 {
			require.NoError(t, os.Remove(path))
		}
	}
	t.Cleanup(func() { betweenLockAndCheck = func(string) {} })
	d, err := Reuse(parent, "mock-", "mock-a", time.Hour)
	require.NoError(t, err)
	require.Equal(t, 2, tries, "made and locked again")
	require.True(t, sameDir(d.fd, d.Path), "the lock is of the directory at the path")
	require.True(t, held(t, d.Path))
	d.Release()

	tries = 0
	betweenLockAndCheck = func(path string) { tries++; require.NoError(t, os.Remove(path)) }
	_, err = Reuse(parent, "mock-", "mock-b", time.Hour)
	require.ErrorContains(t, err, "is removed as often as it is made")
	require.Equal(t, 3, tries)
}
