package harness_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/fakeagent"
)

// TestSessionLogWhileWaiting: SessionLog may be called while Wait runs (a
// status endpoint polling the run): the error the log's Close sets, on
// Wait's goroutine, was read unguarded (the race detector, make test, saw
// it). The log's directory goes away mid-run, so that its Close fails.
func TestSessionLogWhileWaiting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	argv, env := fakeagent.Command("slow-drip", "5ms", "200ms")
	b := small()
	run, err := (&harness.Settings{LogDir: dir}).Start(context.Background(),
		harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env, Prompt: "x", Cwd: t.TempDir(), Budgets: &b}, harness.Options{})
	require.NoError(t, err)
	path, err := run.SessionLog()
	require.NoError(t, err)
	require.NotEmpty(t, path)
	require.NoError(t, os.RemoveAll(dir))
	stop, polled := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				polled <- n
				return
			default:
			}
			_, _ = run.SessionLog()
			n++
			time.Sleep(time.Millisecond) // a poller's pace, not a wait for a condition
		}
	}()
	_, _ = run.Wait()
	close(stop)
	require.Positive(t, <-polled)
	_, err = run.SessionLog()
	require.Error(t, err, "the log's Close failed: its directory is gone")
}
