package bench

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentharness/harness/internal/privtmp"
)

// legacyPrefix named every directory earlier harnesses made in the
// host's temporary directory: a bench's run trees (never locked, kept
// or not) and a run's TMPDIR (locked while the run lasted, by the last
// of them). None of today's prefixes starts with it.
const legacyPrefix = "harness-bench-"

// sweepLegacy removes the harness-bench-* directories in parent that a
// killed bench of an earlier harness left, under today's rules (its lock
// free, not modified for privtmp.StaleAge) and two more, since such a
// bench never locked its run trees and its lock tells nothing: nothing
// in the directory was modified for StaleAge either, and no process
// this one can see works in it (its working directory, executable or an
// open file: a live run's agent, however long it is silent). Kept trees
// of an earlier harness, which nothing tells from a killed bench's, go
// too, as its own runs removed them.
func sweepLegacy(parent string) {
	cutoff := time.Now().Add(-privtmp.StaleAge)
	entries, _ := os.ReadDir(parent)
	var stale []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), legacyPrefix) || !e.IsDir() {
			continue
		}
		if st, err := e.Info(); err == nil && st.ModTime().Before(cutoff) { // lstat: no link
			stale = append(stale, filepath.Join(parent, e.Name()))
		}
	}
	if len(stale) == 0 {
		return // the scan of /proc below only when there is something to sweep
	}
	inUse := procPaths()
	for _, dir := range stale {
		fd, err := privtmp.Lock(dir)
		if err != nil {
			continue // a live run's TMPDIR, or not ours
		}
		if !usedBy(dir, inUse) && !modifiedSince(dir, cutoff) {
			_ = privtmp.RemoveAll(dir)
		}
		_ = syscall.Close(fd)
	}
}

// modifiedSince is whether anything in dir (dir too) was modified at or
// after cutoff; a part it cannot read counts as modified: what cannot be
// looked at is left.
func modifiedSince(dir string, cutoff time.Time) bool {
	modified := false
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		if !st.ModTime().Before(cutoff) {
			modified = true
			return filepath.SkipAll
		}
		return nil
	})
	return modified || err != nil
}

// procPaths are the working directories, executables and open files of
// the processes whose /proc entries this one may read (its user's).
func procPaths() []string {
	var paths []string
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if p.Name()[0] < '0' || p.Name()[0] > '9' {
			continue
		}
		base := filepath.Join("/proc", p.Name())
		for _, l := range []string{"cwd", "exe"} {
			if t, err := os.Readlink(filepath.Join(base, l)); err == nil {
				paths = append(paths, t)
			}
		}
		fds, _ := os.ReadDir(filepath.Join(base, "fd"))
		for _, fd := range fds {
			if t, err := os.Readlink(filepath.Join(base, "fd", fd.Name())); err == nil && strings.HasPrefix(t, "/") {
				paths = append(paths, t)
			}
		}
	}
	return paths
}

// usedBy is whether a path of paths lies in dir (or at its real path).
func usedBy(dir string, paths []string) bool {
	dirs := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		dirs = append(dirs, real)
	}
	for _, p := range paths {
		p = strings.TrimSuffix(p, " (deleted)")
		for _, d := range dirs {
			if p == d || strings.HasPrefix(p, d+"/") {
				return true
			}
		}
	}
	return false
}
