package harness_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/fifotest"
)

// A Write to a named pipe nobody writes: the live diff must not open it
// (an open waits for a writer, forever, past every budget). The run ends
// with the agent's result and the call's diff is skipped as not_regular.
func TestWriteToFIFOEndsWithinBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifotest.Guard(t, filepath.Join(dir, fakeagent.FIFOName))
	argv, env := fakeagent.Command("write-to-fifo")
	b := small()
	b.Hard = 10 * time.Second
	f := runTask(t, harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env, Prompt: "do it", Cwd: dir, Budgets: &b}, nil)
	require.NoError(t, f.err)
	require.Equal(t, event.ResultSuccess, f.result.Status, "%s", f.ndjson)
	ends := f.find(event.TypeToolEnd)
	require.Len(t, ends, 1)
	end := ends[0].(*event.ToolEnd)
	require.Equal(t, event.KindWrite, end.Kind)
	require.Empty(t, end.Diff)
	require.Equal(t, event.DiffSkippedNotRegular, end.DiffSkipped, "%s", f.ndjson)
	st, err := os.Lstat(filepath.Join(dir, fakeagent.FIFOName))
	require.NoError(t, err)
	require.Equal(t, os.ModeNamedPipe, st.Mode().Type(), "the pipe is left as it was")
}

// A tool input nested millions of levels deep, on one line under the
// line cap: the run ends with the agent's result, the input cut and
// reported (on a3236f9 a recursive validation overflowed the Go stack:
// fatal, no result).
func TestDeepToolInputEndsWithResult(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command("deep-tool-input")
	b := small()
	// The agent exits as soon as it has printed; its last lines must not
	// wait in the pipe past the grace while the harness (slow under the
	// race detector) is still on the 16 MB line.
	b.KillGrace = 20 * time.Second
	f := runTask(t, harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env, Prompt: "do it", Cwd: t.TempDir(), Budgets: &b, Raw: true}, nil)
	require.NoError(t, f.err)
	require.Equal(t, event.ResultSuccess, f.result.Status)
	starts := f.find(event.TypeToolStart)
	require.Len(t, starts, 1)
	ts := starts[0].(*event.ToolStart)
	require.Equal(t, "{}", string(ts.Input))
	require.True(t, ts.InputTruncated)
	require.Equal(t, "true", ts.Command)
	require.Len(t, f.find(event.TypeToolEnd), 1)
}
