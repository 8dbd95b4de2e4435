// Package privtmp owns the temporary directories harness makes for one
// run or one bench (an agent's own TMPDIR, a bench run's, a bench's run
// trees, the scripted model's homes): each is locked while in use, so
// that one a killed harness left can be told from one in use, and
// removed. It also owns the directories kept from one harness to the
// next (Reuse), locked the same way while in use and removed once
// unused for long.
//
// Each kind of directory has a prefix of its own, and no prefix may be
// the start of another's names: Make removes every stale directory
// whose name starts with its prefix, so a directory named with a longer
// prefix of the same start would be taken for one of its own, as would
// a directory that is never locked (one meant to stay).
package privtmp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Dir is a temporary directory in use. Its harness holds an exclusive
// flock on it for as long as it exists: the lock goes with the harness
// however it ends, so a directory whose lock can be taken, and whose
// modification time is StaleAge old, was left by a harness killed with
// SIGKILL; Make removes such directories (as the process package does
// with the run cgroups a killed harness left). The lock is per open file,
// so it also holds against other runs of the same process. A Dir is not
// safe for concurrent use.
type Dir struct {
	Path string // absolute
	fd   int    // the directory, open (close-on-exec) and locked; -1 once removed
}

// StaleAge is how old a directory's modification time must be before
// Make looks at its lock: one being made (not yet locked) is young.
const StaleAge = time.Minute

// Make removes the stale directories named prefix* in parent, then makes
// and locks a new one there. A directory it could not lock is removed
// again and an error returned: unlocked, it would look abandoned to
// another harness, which would remove it in use.
func Make(parent, prefix string) (*Dir, error) {
	removeStale(parent, prefix, time.Now().Add(-StaleAge))
	path, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs // who uses it may work in another directory
	}
	fd, err := Lock(path)
	if err != nil {
		_ = os.Remove(path)
		return nil, err
	}
	return &Dir{Path: path, fd: fd}, nil
}

// Env is the environment that points TMPDIR, TMP and TEMP at d.
func (d *Dir) Env() []string {
	return []string{"TMPDIR=" + d.Path, "TMP=" + d.Path, "TEMP=" + d.Path}
}

// Remove removes d and what is in it (read-only directories too, which
// tools such as Go's module cache leave), then lets go of its lock; it
// returns the error of the removal, and does nothing on a nil Dir or
// one already removed.
func (d *Dir) Remove() error {
	if d == nil || d.fd < 0 {
		return nil
	}
	err := RemoveAll(d.Path)
	_ = syscall.Close(d.fd)
	d.fd = -1
	return err
}

// Reuse locks the directory parent/name (name starts with prefix),
// making it when there is none, and marks it used now (its modification
// time): a directory kept from one harness to the next, as the scripted
// model's homes that a later run resumes a session from. It first
// removes the directories named prefix* in parent unused for unused
// whose lock can be taken. It does not wait: when another holds the
// lock, it fails with an error that is syscall.EWOULDBLOCK. Release lets
// go of the lock and keeps the directory.
func Reuse(parent, prefix, name string, unused time.Duration) (*Dir, error) {
	if !strings.HasPrefix(name, prefix) || filepath.Base(name) != name {
		return nil, fmt.Errorf("privtmp: %q is not a name of prefix %q", name, prefix)
	}
	removeStale(parent, prefix, time.Now().Add(-unused))
	path := filepath.Join(parent, name)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	for try := 0; ; try++ {
		if err := os.Mkdir(path, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		fd, err := Lock(path)
		if err != nil {
			return nil, err
		}
		betweenLockAndCheck(path)
		// Another harness may have removed it as stale between the two
		// (it was unused for that long): then the lock is of a directory
		// gone, and the path is made again.
		if sameDir(fd, path) {
			now := time.Now()
			_ = os.Chtimes(path, now, now) // used now: not stale for unused
			return &Dir{Path: path, fd: fd}, nil
		}
		_ = syscall.Close(fd)
		if try == 2 {
			return nil, fmt.Errorf("privtmp: %s is removed as often as it is made", path)
		}
	}
}

// betweenLockAndCheck lets a test be the other harness that removes the
// directory between its lock and the check.
var betweenLockAndCheck = func(path string) {}

// sameDir reports whether the open directory fd is still the one at path.
func sameDir(fd int, path string) bool {
	var open, named syscall.Stat_t
	return syscall.Fstat(fd, &open) == nil && syscall.Lstat(path, &named) == nil &&
		open.Dev == named.Dev && open.Ino == named.Ino
}

// Release lets go of d's lock and keeps the directory; it does nothing
// on a nil Dir or one already released or removed.
func (d *Dir) Release() {
	if d == nil || d.fd < 0 {
		return
	}
	_ = syscall.Close(d.fd)
	d.fd = -1
}

// Lock opens dir and takes its exclusive flock, without waiting: the
// lock of a directory Make made, or of one an earlier harness left.
func Lock(dir string) (int, error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return -1, err
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

// removeStale removes the directories named prefix* in parent whose
// modification time is before cutoff and whose lock can be taken: their
// harness is gone.
func removeStale(parent, prefix string, cutoff time.Time) {
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !e.IsDir() {
			continue
		}
		st, err := e.Info() // lstat: the entry is a directory, not a link to one
		if err != nil || !st.ModTime().Before(cutoff) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if fd, err := Lock(dir); err == nil {
			_ = RemoveAll(dir)
			_ = syscall.Close(fd)
		}
	}
}

// RemoveAll removes dir, making its read-only directories writable
// first when it must (a directory of mode 0555 keeps its entries, as Go's
// module cache in an agent's HOME does).
func RemoveAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
