package isolate

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness/internal/xdgdir"
)

// engineSockets are where a container engine's daemon listens by
// default: root on the host to whoever reaches one.
var engineSockets = []string{"/run/docker.sock", "/var/run/docker.sock", "/run/podman/podman.sock", "/var/run/podman/podman.sock"}

// HostPrivate are the user's host paths a bwrap sandbox must hide (Spec's
// Hide), for the read-only host it shows holds them wherever they lie:
// the SSH agent's socket (SSH_AUTH_SOCK), the runtime directory
// (XDG_RUNTIME_DIR: the session bus, a keyring, a rootless engine's
// socket), a container engine's socket (its default paths, DOCKER_HOST's
// and CONTAINER_HOST's unix://), and the scripted model's directory of
// homes ($XDG_CACHE_HOME/harness/mock: other runs' sessions; a run's own
// is bound over it). A unix socket answers on a read-only bind and
// across --unshare-net. Paths the host does not have are listed too
// (Prefix skips them).
func HostPrivate() []string {
	var paths []string
	add := func(p string) {
		// "/" is no one's private path: hidden, it would be the whole host.
		if filepath.IsAbs(p) && filepath.Clean(p) != "/" {
			paths = append(paths, filepath.Clean(p))
		}
	}
	add(os.Getenv("SSH_AUTH_SOCK"))
	add(os.Getenv("XDG_RUNTIME_DIR"))
	for _, v := range []string{"DOCKER_HOST", "CONTAINER_HOST"} {
		if p, ok := strings.CutPrefix(os.Getenv(v), "unix://"); ok {
			add(p)
		}
	}
	for _, p := range engineSockets {
		add(p)
	}
	add(xdgdir.Cache(nil, "mock"))
	return paths
}
