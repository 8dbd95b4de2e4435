package isolate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// HostPrivate lists a container engine's sockets, at their default paths
// and where DOCKER_HOST or CONTAINER_HOST put them (root on the host to
// whoever reaches them), and never "/", which hidden would be the whole
// host.
func TestHostPrivate(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "/")
	t.Setenv("XDG_RUNTIME_DIR", "relative/run")
	t.Setenv("DOCKER_HOST", "unix:///srv/docker/docker.sock")
	t.Setenv("CONTAINER_HOST", "unix:///srv/podman/podman.sock")
	got := HostPrivate()
	require.Subset(t, got, []string{"/run/docker.sock", "/var/run/docker.sock", "/run/podman/podman.sock",
		"/srv/docker/docker.sock", "/srv/podman/podman.sock"})
	require.NotContains(t, got, "/")
	require.NotContains(t, got, "relative/run")
}
