// Package isolate builds the sandbox a bench run (agent and verifier)
// runs in. Engines:
//
//   - none: no sandbox; the run works in its directory on the host.
//   - bwrap (Debian's bubblewrap): no image. The host's file system is
//     seen read-only (but for the directories a phase must not read,
//     shown empty), under a private root in which the run's own
//     directories are bound writable: the workspace at the task's
//     WORKDIR, a private /tmp and HOME, /logs (and /tests, /solution when
//     the phase has them). Each sandbox has its own PID namespace and
//     dies with the process that started it (--unshare-pid
//     --die-with-parent), so nothing it started outlives it; the network
//     is cut (--unshare-net) when the task does not allow the internet.
//     It has no capability, even when harness runs as root: its own user
//     namespace (--unshare-user, uid 0 still 0 when harness is root) with
//     every capability dropped (--cap-drop ALL) and no_new_privs set (as
//     bwrap always does), so it cannot mount, unmount or remount: a
//     read-only bind stays read-only and a hidden directory stays hidden.
package isolate

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Engines.
const (
	None  = "none"
	Bwrap = "bwrap"
)

// Engines lists the engines this build knows.
var Engines = []string{None, Bwrap, Podman, Docker}

// IsContainer reports whether engine runs containers (podman, docker).
func IsContainer(engine string) bool { return engine == Podman || engine == Docker }

// Check says whether engine can be used here: a one-line error when the
// engine is unknown or not installed.
func Check(engine string) error {
	switch engine {
	case "", None:
		return nil
	case Bwrap:
		if _, err := exec.LookPath("bwrap"); err != nil {
			return errors.New("isolate bwrap: bubblewrap is not installed (apt-get install bubblewrap)")
		}
		return nil
	case Podman, Docker:
		_, err := ContainerEngine(engine)
		return err
	}
	return fmt.Errorf("isolate %q: want %s or %s", engine, strings.Join(Engines[:len(Engines)-1], ", "), Engines[len(Engines)-1])
}

// Bind is a host directory shown at Inner inside the sandbox.
type Bind struct {
	Host, Inner string
	ReadOnly    bool
}

// Spec is one sandbox: what it binds, where its process starts, whether
// it has the network.
type Spec struct {
	Binds []Bind
	// Hide are host paths the sandbox shows empty, made before the binds
	// (a bind below one still shows): a directory gets a tmpfs over it,
	// any other file /dev/null bound read-only over it. They are what
	// the read-only host holds that the phase must not read, such as a
	// task's solution, other runs' workspaces and the caller's own
	// outputs (session logs, results). A path the host does not have is
	// skipped; one below a bind of another directory is hidden by it
	// already; one below a bind of a directory at its own path is
	// refused (the bind would show it).
	Hide    []string
	Chdir   string
	Network bool
	// GPUs binds the host's NVIDIA devices (/dev/nvidia*) into the
	// sandbox's own /dev.
	GPUs bool
}

// Prefix returns the bwrap command line that runs a command (appended
// after it) in the sandbox. The root is a tmpfs holding a read-only bind
// of every top-level entry of the host's / (symlinks kept as symlinks),
// so that binds at paths the host does not have (/app, /tests, /logs)
// can be made; /proc, /dev and /tmp are the sandbox's own. The command
// runs with no capability (--unshare-user --cap-drop ALL): uid 0 when
// harness is root, but unable to mount, unmount or remount anything.
func (s Spec) Prefix() ([]string, error) {
	bin, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, errors.New("isolate bwrap: bubblewrap is not installed (apt-get install bubblewrap)")
	}
	args := []string{bin, "--tmpfs", "/"}
	top, err := os.ReadDir("/")
	if err != nil {
		return nil, fmt.Errorf("isolate bwrap: %w", err)
	}
	own := s.ownTop()
	for _, e := range top {
		name := e.Name()
		if own[name] {
			continue
		}
		p := "/" + name
		if e.Type()&os.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				continue
			}
			args = append(args, "--symlink", target, p)
			continue
		}
		args = append(args, "--ro-bind", p, p)
	}
	args = append(args, "--dev", "/dev", "--proc", "/proc")
	if s.GPUs {
		devs, _ := filepath.Glob("/dev/nvidia*")
		for _, d := range devs {
			args = append(args, "--dev-bind", d, d)
		}
	}
	for i, h := range s.Hide {
		if !filepath.IsAbs(h) {
			return nil, fmt.Errorf("isolate bwrap: %s: want an absolute path", h)
		}
		if over := s.bindOver(h); over != nil && path.Clean(over.Host) == path.Clean(over.Inner) {
			return nil, fmt.Errorf("isolate bwrap: %s: cannot be hidden below the bind of %s at its own path", h, over.Inner)
		}
		// What the host does not have there, or what another hidden
		// directory, a bind or the sandbox's own /tmp covers, is out of
		// sight already.
		if slices.ContainsFunc(s.Hide[:i], func(o string) bool { return within(h, o) }) ||
			slices.ContainsFunc(s.Hide[i+1:], func(o string) bool { return within(h, o) && path.Clean(o) != path.Clean(h) }) {
			continue
		}
		st, err := os.Stat(h)
		if err != nil || (Spec{Binds: s.Binds}).Hides(h) {
			continue
		}
		if !st.IsDir() {
			args = append(args, "--ro-bind", "/dev/null", h)
			continue
		}
		args = append(args, "--tmpfs", h)
	}
	for _, b := range s.Binds {
		if !filepath.IsAbs(b.Inner) {
			return nil, fmt.Errorf("isolate bwrap: %s: want an absolute path", b.Inner)
		}
		// Below a host entry (read-only), bwrap cannot make a missing
		// mount point; below the sandbox's own tmpfs root it can.
		hostBound := false
		if _, err := os.Lstat("/" + firstElem(b.Inner)); err == nil && !own[firstElem(b.Inner)] {
			hostBound = true
		}
		if parent := path.Dir(path.Clean(b.Inner)); hostBound && parent != "/" && !slices.ContainsFunc(s.Binds, func(o Bind) bool {
			return within(parent, o.Inner)
		}) && !slices.ContainsFunc(s.Hide, func(h string) bool { return within(parent, h) }) {
			if st, err := os.Stat(parent); err != nil || !st.IsDir() {
				return nil, fmt.Errorf("isolate bwrap: %s: its parent %s is not a directory on the host", b.Inner, parent)
			}
		}
		flag := "--bind"
		if b.ReadOnly {
			flag = "--ro-bind"
		}
		args = append(args, flag, b.Host, b.Inner)
	}
	if slices.ContainsFunc(s.Binds, func(b Bind) bool { return path.Clean(b.Inner) == "/tmp" && !b.ReadOnly }) {
		// The sandbox's temporary directory is its own /tmp: a host
		// TMPDIR elsewhere (/var/tmp/x) is read-only in here, and an
		// agent that makes its files there fails (EROFS).
		for _, v := range []string{"TMPDIR", "TMP", "TEMP"} {
			args = append(args, "--setenv", v, "/tmp")
		}
	}
	// Without a user namespace and --cap-drop, bwrap run by root leaves
	// the command every capability: it could remount a read-only bind
	// writable, unmount a hidden directory's tmpfs, mount over anything.
	// The user namespace alone is not enough (root's bwrap makes the
	// mounts inside it, so they are not locked), nor needed for the drop;
	// together they leave no capability, not even in the bounding set.
	args = append(args, "--unshare-user", "--cap-drop", "ALL",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent")
	if !s.Network {
		args = append(args, "--unshare-net")
	}
	if s.Chdir != "" {
		args = append(args, "--chdir", s.Chdir)
	}
	return append(args, "--"), nil
}

// ownTop is the top-level names of the sandbox's own root entries: /proc,
// /dev, /tmp, and a name it binds itself (/app, /tests), which hides the
// host's entry of that name.
func (s Spec) ownTop() map[string]bool {
	own := map[string]bool{"proc": true, "dev": true, "tmp": true}
	for _, b := range s.Binds {
		if first := firstElem(b.Inner); first != "" && path.Dir(path.Clean(b.Inner)) == "/" {
			own[first] = true
		}
	}
	return own
}

// Hides reports whether the host's absolute path p is out of the
// sandbox's sight: the innermost bind over p shows another directory
// there, or, with no bind over it, p is below a hidden directory (Hide)
// or one of the sandbox's own top-level entries (/tmp, /app, …). A bind
// of a directory at its own path hides nothing below it.
func (s Spec) Hides(p string) bool {
	p = path.Clean(p)
	if over := s.bindOver(p); over != nil { // made after the hides: it decides
		return path.Clean(over.Host) != path.Clean(over.Inner)
	}
	return slices.ContainsFunc(s.Hide, func(h string) bool { return within(p, h) }) || s.ownTop()[firstElem(p)]
}

// bindOver is the innermost bind at or above p, or nil.
func (s Spec) bindOver(p string) *Bind {
	var over *Bind
	for i := range s.Binds {
		b := &s.Binds[i]
		if within(p, b.Inner) && (over == nil || len(path.Clean(b.Inner)) > len(path.Clean(over.Inner))) {
			over = b
		}
	}
	return over
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	p, dir = path.Clean(p), path.Clean(dir)
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

func firstElem(p string) string {
	p = strings.TrimPrefix(path.Clean(p), "/")
	first, _, _ := strings.Cut(p, "/")
	return first
}
