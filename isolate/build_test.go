package isolate

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A podman build cancelled between two RUN steps, when no step runtime
// runs for the cancel to end (its client exits on SIGINT at once),
// leaves no working container: Build removes its own. Before, the
// build's unlabelled working container stayed. The cancel comes while
// the client itself works between the steps: on an ADD of a URL that
// the test answers only once the build is over.
func TestBuildCancelledBetweenSteps(t *testing.T) {
	e, err := ContainerEngine(Podman)
	require.NoError(t, err)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	pid := strconv.Itoa(os.Getpid())
	// A base of our own name: the build's working container is named
	// after it, so another build's is never taken for this one's.
	base := "localhost/harness-test-between-" + pid + ":1"
	_, err = Run(t.Context(), []string{e.Bin, "tag", baseImage, base})
	require.NoError(t, err)
	working := "harness-test-between-" + pid + "-working-container"
	var id string // the build's
	t.Cleanup(func() {
		left := []string{working}
		if id != "" { // what the old code left
			ids, _ := e.buildContainers(context.Background(), id)
			left = append(left, ids...)
		}
		for _, c := range left {
			Run(context.Background(), []string{e.Bin, "rm", "-f", c})
		}
		Run(context.Background(), []string{e.Bin, "rmi", base})
	})
	fetching := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(fetching) })
		<-r.Context().Done() // the client went away
	}))
	t.Cleanup(srv.Close)
	ctxDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ctxDir, "Dockerfile"),
		[]byte("FROM "+base+"\nRUN true\nADD "+srv.URL+"/file /file\nRUN true\n"), 0o644))

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	image := "localhost/harness-test-between-never-" + pid + ":1"
	go func() { done <- e.Build(ctx, image, ctxDir) }()
	select {
	case <-fetching:
	case err := <-done:
		t.Fatalf("the build ended before its ADD: %v", err)
	}
	// The build's id, from its client's command line: its working
	// containers carry it (one per cached step it went on from). podman
	// may have re-executed itself with the same arguments meanwhile (seen
	// in CI: two processes): they all name the one id.
	clients := processesWith(t, "-t "+image)
	require.NotEmpty(t, clients)
	for _, pid := range clients {
		// A process may be gone by now, or be one podman started with
		// the image among its arguments but not the build's (CI: an empty
		// id): only the build's own name it.
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		_, this, found := strings.Cut(string(cmdline), buildArg+"=")
		if err != nil || !found {
			continue
		}
		this, _, _ = strings.Cut(this, "\x00")
		require.NotEmpty(t, this)
		require.True(t, id == "" || id == this, "two build ids: %s, %s", id, this)
		id = this
	}
	require.NotEmpty(t, id, "no process of the build names its id")
	made, err := e.buildContainers(t.Context(), id)
	require.NoError(t, err)
	require.NotEmpty(t, made, "the build's working containers carry its id")
	cancel()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("Build did not return")
	}
	require.Error(t, err)
	t.Logf("build cancelled between steps: %v", err)
	out, err := Run(t.Context(), []string{e.Bin, "ps", "-a", "--external", "--format", "{{.Names}}"})
	require.NoError(t, err)
	require.NotContains(t, string(out), working, "the build's working container")
	made, err = e.buildContainers(t.Context(), id)
	require.NoError(t, err)
	require.Empty(t, made, "the build's working containers")
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left, "the build's temporary directory")
}
