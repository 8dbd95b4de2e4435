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
type runCgroup struct {
	dir string
	fd  int // the directory, opened for clone3
}

var (
	cgroupOnce sync.Once
	cgroupBase string // the harness's own cgroup v2 directory; "" if none
	cgroupBad  bool   // creating a run cgroup failed once: not writable here
	cgroupMu   sync.Mutex
)

// newRunCgroup creates the run's cgroup, or returns nil where cgroup v2 is
// not mounted or not writable (then the reaper, or the /proc walks, do).
func newRunCgroup(token string) *runCgroup {
	if !cgroupsUsable() {
		return nil
	}
	dir := filepath.Join(cgroupBase, "harness-run-"+strings.ToLower(token))
	if err := os.Mkdir(dir, 0o755); err != nil {
		disableCgroups()
		return nil
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil
	}
	return &runCgroup{dir: dir, fd: fd}
}

// cgroupsUsable reports whether runs get a cgroup (as far as is known:
// the first mkdir tells).
func cgroupsUsable() bool {
	cgroupOnce.Do(func() {
		cgroupBase = findCgroupBase()
		removeStaleCgroups(cgroupBase)
	})
	cgroupMu.Lock()
	defer cgroupMu.Unlock()
	return cgroupBase != "" && !cgroupBad
}

// removeStaleCgroups removes the empty run cgroups in base left by a
// harness that was killed before it could (one still being set up is
// young; one in use is not empty, and rmdir refuses it).
func removeStaleCgroups(base string) {
	if base == "" {
		return
	}
	old, _ := filepath.Glob(filepath.Join(base, "harness-run-*"))
	for _, dir := range old {
		if st, err := os.Stat(dir); err == nil && time.Since(st.ModTime()) > time.Minute {
			_ = unix.Rmdir(dir)
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
// hybrid layout mounts it at /sys/fs/cgroup/unified).
func findCgroupBase() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	var self string
	for l := range strings.Lines(string(b)) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(l), "0::"); ok {
			self = p
		}
	}
	if self == "" || strings.HasSuffix(self, " (deleted)") {
		return ""
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
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
		return filepath.Join(mnt, rel)
	}
	return ""
}

// attr puts the child into the cgroup at its birth.
func (c *runCgroup) attr(a *syscall.SysProcAttr) {
	a.UseCgroupFD, a.CgroupFD = true, c.fd
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
// 5.14), else one by one.
func (c *runCgroup) kill() {
	if os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0) == nil {
		return
	}
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
	_ = unix.Close(c.fd)
	for range 50 { // the last exits may still be leaving it
		err := rmdirTree(c.dir)
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
