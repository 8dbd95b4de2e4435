//go:build linux

package process

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentharness/harness/internal/procstat"
)

// runCgroup is a run's own cgroup v2, a child of the harness's cgroup. The
// agent is cloned into it (CLONE_INTO_CGROUP), so every process the run
// starts is in it from birth to death whatever it does to its session,
// group, parent or environment; only a process allowed to write another
// cgroup's cgroup.procs can leave it.
//
// Its harness holds an exclusive flock on the directory for as long as
// the cgroup exists: the lock goes with the harness however it ends, so a
// cgroup whose lock can be taken was left by a harness killed with
// SIGKILL, and what of its run Pdeathsig did not end (its agent dies, the
// tools it started do not) is ended by a later harness
// (removeStaleCgroups). A lock cannot be fooled by a reused pid, nor by a
// harness in another pid namespace sharing the cgroup.
type runCgroup struct {
	dir  string
	path string // as /proc/PID/cgroup names it (cgroupSelf, then the run's name)
	fd   int    // the directory, opened for clone3 and locked
}

// lockedSuffix ends the name of a run cgroup whose harness locks it.
// Earlier harnesses did not: a later one cannot tell theirs abandoned,
// and only removes them once empty.
const lockedSuffix = "-locked"

var (
	cgroupOnce sync.Once
	cgroupBase string // the harness's own cgroup v2 directory; "" if none
	cgroupSelf string // the same, as /proc/self/cgroup names it
	cgroupBad  bool   // creating a run cgroup failed once: not writable here
	cgroupMu   sync.Mutex
)

// newRunCgroup creates the run's cgroup, or returns nil where cgroup v2 is
// not mounted or not writable (then the reaper, or the /proc walks, do).
func newRunCgroup(token string) *runCgroup {
	if !cgroupsUsable() {
		return nil
	}
	name := "harness-run-" + strings.ToLower(token) + lockedSuffix
	dir := filepath.Join(cgroupBase, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		disableCgroups()
		return nil
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		// Unlocked, it would look abandoned to the next harness, which
		// would end the run: no cgroup rather than that.
		_ = unix.Close(fd)
		_ = os.Remove(dir)
		disableCgroups()
		return nil
	}
	return &runCgroup{dir: dir, path: strings.TrimSuffix(cgroupSelf, "/") + "/" + name, fd: fd}
}

// cgroupsUsable reports whether runs get a cgroup (as far as is known:
// the first mkdir tells).
func cgroupsUsable() bool {
	cgroupOnce.Do(func() {
		cgroupBase, cgroupSelf = findCgroupBase()
		if cgroupBase != "" {
			// Ending what a killed harness left may wait for its
			// processes to die: not the first run's business.
			go removeStaleCgroups(cgroupBase, time.Now().Add(-staleAge))
		}
	})
	cgroupMu.Lock()
	defer cgroupMu.Unlock()
	return cgroupBase != "" && !cgroupBad
}

// staleAge is how old a run cgroup must be before another harness looks
// at it: one being set up (made, not yet locked) is young.
const staleAge = time.Minute

// removeStaleCgroups ends the run cgroups in base that a killed harness
// left, made before cutoff: one of ours whose lock can be taken has lost
// its harness, and what is left in it is SIGKILLed (cgroup.kill) before
// it is removed; one an earlier harness made (unlocked, its owner cannot
// be told gone) is removed only when empty, and rmdir refuses it
// otherwise. A cgroup still in use is locked, or not empty.
func removeStaleCgroups(base string, cutoff time.Time) {
	old, _ := filepath.Glob(filepath.Join(base, "harness-run-*"))
	for _, dir := range old {
		st, err := os.Stat(dir)
		if err != nil || !st.IsDir() || !st.ModTime().Before(cutoff) {
			continue
		}
		if strings.HasSuffix(dir, lockedSuffix) {
			endAbandoned(dir)
		} else {
			_ = unix.Rmdir(dir)
		}
	}
}

// endAbandoned kills what is left in the run cgroup dir and below it, and
// removes them, if its harness is gone: if its lock can be taken.
func endAbandoned(dir string) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return // its harness is alive
	}
	deadline := time.Now().Add(sweepTimeout)
	pause := time.Millisecond
	for populated(dir) && time.Now().Before(deadline) {
		killSubtree(dir)
		time.Sleep(pause) // waiting on the kernel to finish the kills
		pause = min(2*pause, 20*time.Millisecond)
	}
	removeEmptied(dir)
}

// populated reports whether a live process is in the cgroup dir or below
// it (cgroup.events); an unreadable one counts as empty.
func populated(dir string) bool {
	b, err := procstat.ReadFile(filepath.Join(dir, "cgroup.events"))
	return err == nil && bytes.Contains(b, []byte("populated 1"))
}

// killSubtree SIGKILLs everything in the cgroup dir and below it.
func killSubtree(dir string) {
	(&runCgroup{dir: dir}).kill()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			killSubtree(filepath.Join(dir, e.Name()))
		}
	}
}

// disableCgroups stops making run cgroups: they cannot be used here.
func disableCgroups() {
	cgroupMu.Lock()
	cgroupBad = true
	cgroupMu.Unlock()
}

// findCgroupBase returns the directory of this process's cgroup v2 (from
// /proc/self/cgroup and the cgroup2 mount in /proc/self/mountinfo; a
// hybrid layout mounts it at /sys/fs/cgroup/unified), and its path as
// /proc/self/cgroup gives it; "" where there is none.
func findCgroupBase() (dir, self string) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", ""
	}
	self = cgroupLine(b)
	if self == "" || strings.HasSuffix(self, " (deleted)") {
		return "", ""
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		fields := strings.Fields(pre)
		if len(fields) < 5 {
			continue
		}
		root, mnt := fields[3], fields[4]
		rel, ok := strings.CutPrefix(self, root)
		if !ok {
			continue
		}
		return filepath.Join(mnt, rel), self
	}
	return "", ""
}

// cgroupLine returns the cgroup v2 path of a /proc/PID/cgroup file (its
// "0::" line), "" without one.
func cgroupLine(b []byte) string {
	for l := range strings.Lines(string(b)) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(l), "0::"); ok {
			return p
		}
	}
	return ""
}

// holds reports whether pid is, or died, in the cgroup or below it. A
// zombie's /proc/PID/cgroup still names the cgroup it died in (marked
// " (deleted)" once that is removed), when nothing else ties it to its
// run: its environment is gone, its group and session may be its own.
func (c *runCgroup) holds(pid int) bool {
	b, err := procstat.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	p := strings.TrimSuffix(cgroupLine(b), " (deleted)")
	return p == c.path || strings.HasPrefix(p, c.path+"/")
}

// attr puts the child into the cgroup at its birth.
func (c *runCgroup) attr(a *syscall.SysProcAttr) {
	a.UseCgroupFD, a.CgroupFD = true, c.fd
}

// cgroupRefused reports whether a spawn into c failed with err because
// clone3 (CLONE_INTO_CGROUP) refused the cgroup, rather than because the
// agent's exec failed. For the cgroup clone3 returns ENOSYS (no clone3, or
// a seccomp filter: Docker's), E2BIG (Linux 5.3-5.6, which lack
// CLONE_INTO_CGROUP), EINVAL, EPERM (a seccomp filter, an LSM), EACCES
// (a cgroup.procs we may not write), EBADF (not cgroup v2), ENOENT or
// ENODEV (the cgroup removed), EOPNOTSUPP (a threaded subtree) or EBUSY
// (controllers enabled in it). execve returns EACCES, EPERM, ENOENT, E2BIG
// and EINVAL too, so the errno alone cannot tell: the cgroup is tried
// (admits).
func cgroupRefused(err error, c *runCgroup) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case unix.ENOSYS, unix.E2BIG, unix.EINVAL, unix.EPERM, unix.EACCES, unix.EBADF,
		unix.ENOENT, unix.ENODEV, unix.EOPNOTSUPP, unix.EBUSY:
		return !c.admits()
	}
	return false
}

// admits reports whether a process can be cloned into the cgroup: one is,
// to exec a path under a regular file, which execve refuses with ENOTDIR
// and clone3 never does.
func (c *runCgroup) admits() bool {
	probe := filepath.Join(c.dir, "cgroup.procs", "probe")
	_, err := syscall.ForkExec(probe, []string{probe},
		&syscall.ProcAttr{Sys: &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: c.fd}})
	return errors.Is(err, syscall.ENOTDIR)
}

// procs lists the processes in the cgroup (zombies have left it).
func (c *runCgroup) procs() []int {
	b, err := procstat.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range bytes.Fields(b) {
		if n, err := strconv.Atoi(string(f)); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// members returns the processes in the cgroup (pid → start time).
func (c *runCgroup) members() map[int]uint64 {
	out := map[int]uint64{}
	for _, pid := range c.procs() {
		if st, ok := readStat(pid); ok {
			out[pid] = st.start
		}
	}
	return out
}

// kill SIGKILLs everything in the cgroup: at once with cgroup.kill (Linux
// 5.14), and one by one as well. cgroup.kill misses a process whose main
// thread has exited while its other threads run on (Linux 6.18: still
// alive 4 s later), which kill(2) ends at once; it was left to the end of
// the sweep's 5 s, or, in a cgroup a killed harness left, for good.
func (c *runCgroup) kill() {
	_ = os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0)
	for _, pid := range c.procs() {
		if st, ok := readStat(pid); ok {
			signalProc(pid, st.start, syscall.SIGKILL)
		}
	}
}

// empty kills what is in the cgroup until nothing is, or until deadline,
// and returns the processes it found there (pid → start time).
func (c *runCgroup) empty(deadline time.Time) map[int]uint64 {
	seen := map[int]uint64{}
	pause := time.Millisecond
	for {
		pids := c.procs()
		if len(pids) == 0 {
			return seen
		}
		for _, pid := range pids {
			if st, ok := readStat(pid); ok {
				seen[pid] = st.start
			}
		}
		c.kill()
		if time.Now().After(deadline) {
			return seen
		}
		// Waiting on the kernel to finish the kills.
		time.Sleep(pause)
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// remove deletes the (emptied) cgroup, and the cgroups a harness run
// inside it made and could not remove (it was killed with the run).
func (c *runCgroup) remove() {
	_ = unix.Close(c.fd) // and so its lock: from now on it is anyone's to remove
	removeEmptied(c.dir)
}

// removeEmptied removes the cgroup dir, emptied, with its child cgroups.
func removeEmptied(dir string) {
	for range 50 { // the last exits may still be leaving it
		err := rmdirTree(dir)
		if err == nil || !errors.Is(err, unix.EBUSY) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// rmdirTree removes the cgroup dir after its child cgroups (a cgroup's
// files cannot be removed, only its directory once it has no children).
func rmdirTree(dir string) error {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			_ = rmdirTree(filepath.Join(dir, e.Name()))
		}
	}
	return unix.Rmdir(dir)
}
