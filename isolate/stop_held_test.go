package isolate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/execfile"
)

// Stop returns though what an engine command left behind holds its
// stderr open: the run client's (run-child) or the existence check's
// (exists-child). Before, Stop waited for that stderr's end, past the
// client's grace and the stop's deadline, as long as the child lived.
func TestStopDespiteHeldStderr(t *testing.T) {
	for name, verb := range map[string]string{"run-child": "run", "exists-child": "container"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			pids, fake := filepath.Join(dir, "pids"), filepath.Join(dir, "podman")
			// The child keeps the verb's stderr; the test ends it.
			hold := `sleep 3600 </dev/null >/dev/null & echo $! >>` + pids
			script := map[string]string{
				"run":       `run) echo ready; exec cat >/dev/null ;;`,
				"container": `container) exit 1 ;;`,
			}
			script[verb] = strings.Replace(script[verb], ") ", ") "+hold+"; ", 1)
			require.NoError(t, execfile.Write(fake, []byte("#!/bin/sh\ncase \"$1\" in\n"+
				script["run"]+"\n"+script["container"]+"\nesac\n"), 0o755))
			killListed(t, pids)
			stopBounds(t, 300*time.Millisecond, 50*time.Millisecond)
			e := &Engine{Name: Podman, Bin: fake}
			r, err := e.Start(t.Context(), Container{Name: "harness-test-held", Image: "img"}, os.Environ())
			require.NoError(t, err)
			stopped := make(chan error, 1)
			go func() { stopped <- r.Stop() }()
			select {
			case err = <-stopped:
			case <-time.After(10 * time.Second): // a watchdog: Stop is bounded by a second or so here
				t.Fatal("Stop did not return while a child held the engine's stderr")
			}
			require.NoError(t, err)
		})
	}
}
