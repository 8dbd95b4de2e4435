// Package isolate builds the sandbox a bench run (agent and verifier)
// runs in. Engines:
//
//   - none: no sandbox; the run works in its directory on the host.
//   - bwrap (Debian's bubblewrap): no image. The host's file system is
//     seen read-only, under a private root in which the run's own
//     directories are bound writable: the workspace at the task's
//     WORKDIR, a private /tmp and HOME, /logs (and /tests, /solution when
//     the phase has them). Each sandbox has its own PID namespace and
//     dies with the process that started it (--unshare-pid
//     --die-with-parent), so nothing it started outlives it; the network
//     is cut (--unshare-net) when the task does not allow the internet.
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
	Binds   []Bind
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
// can be made; /proc, /dev and /tmp are the sandbox's own.
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
			return path.Clean(o.Inner) == parent || strings.HasPrefix(parent, path.Clean(o.Inner)+"/")
		}) {
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
	args = append(args, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent")
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
// there, or, with no bind over it, p is below one of the sandbox's own
// top-level entries (/tmp, /app, …). A bind of a directory at its own
// path hides nothing below it.
func (s Spec) Hides(p string) bool {
	p = path.Clean(p)
	var over *Bind
	for i := range s.Binds {
		b := &s.Binds[i]
		in := path.Clean(b.Inner)
		if (p == in || strings.HasPrefix(p, in+"/")) && (over == nil || len(in) > len(path.Clean(over.Inner))) {
			over = b
		}
	}
	if over != nil {
		return path.Clean(over.Host) != path.Clean(over.Inner)
	}
	return s.ownTop()[firstElem(p)]
}

func firstElem(p string) string {
	p = strings.TrimPrefix(path.Clean(p), "/")
	first, _, _ := strings.Cut(p, "/")
	return first
}
