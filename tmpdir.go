package harness

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// privateTmp is the temporary directory a run makes its agent when the
// agent leaves files in its own at every start (adapters.Agent.PrivateTmp).
// Its harness holds an exclusive flock on the directory for as long as
// the run lasts: the lock goes with the harness however it ends, so a
// directory whose lock can be taken, and whose modification time is
// staleTmpAge old, was left by a harness killed with SIGKILL, and the next
// run that makes one removes it (as the process package does with the
// run cgroups a killed harness left).
type privateTmp struct {
	dir string
	fd  int // the directory, open and locked
}

// privateTmpPrefix begins the name of every run's temporary directory.
const privateTmpPrefix = "harness-tmp-"

// staleTmpAge is how old a directory's modification time must be before
// another harness looks at its lock: one being made (not yet locked) is
// young.
const staleTmpAge = time.Minute

// makePrivateTmp makes a run's temporary directory under the one env
// names (TMPDIR, else /tmp), after removing those that killed harnesses
// left there, and returns it with env pointing TMPDIR, TMP and TEMP at
// it. Where it cannot be made and locked, it returns nil and env as it
// is: the agent keeps the user's directory.
func makePrivateTmp(env []string) (*privateTmp, []string) {
	parent := "/tmp"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok && v != "" {
			parent = v
		}
	}
	removeStaleTmps(parent, time.Now().Add(-staleTmpAge))
	dir, err := os.MkdirTemp(parent, privateTmpPrefix)
	if err != nil {
		return nil, env
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs // the agent's working directory is not harness's
	}
	fd, err := lockDir(dir)
	if err != nil {
		// Unlocked, it would look abandoned to another harness, which
		// would remove it under the run.
		_ = os.Remove(dir)
		return nil, env
	}
	return &privateTmp{dir: dir, fd: fd}, mergeEnv(env, []string{"TMPDIR=" + dir, "TMP=" + dir, "TEMP=" + dir})
}

// remove removes the directory, once nothing of the run is left to use
// it, and then lets go of its lock. A nil p does nothing.
func (p *privateTmp) remove() {
	if p == nil || p.fd < 0 {
		return
	}
	_ = os.RemoveAll(p.dir)
	_ = syscall.Close(p.fd)
	p.fd = -1
}

// lockDir opens dir and takes its exclusive flock, without waiting.
func lockDir(dir string) (int, error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

// removeStaleTmps removes the runs' temporary directories in parent that
// were last changed before cutoff and whose lock can be taken: their
// harness is gone.
func removeStaleTmps(parent string, cutoff time.Time) {
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), privateTmpPrefix) || !e.IsDir() {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		st, err := os.Lstat(dir)
		if err != nil || !st.IsDir() || !st.ModTime().Before(cutoff) {
			continue
		}
		if fd, err := lockDir(dir); err == nil {
			_ = os.RemoveAll(dir)
			_ = syscall.Close(fd)
		}
	}
}
