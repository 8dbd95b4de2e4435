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
	"github.com/agentharness/harness/internal/harnesstest"
)

// A Write to a named pipe nobody writes: the live diff must not open it
// (an open waits for a writer, forever, past every budget). The run ends
// with the agent's result and the call's diff is skipped as not_regular.
func TestWriteToFIFOEndsWithinBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	harnesstest.GuardFIFO(t, filepath.Join(dir, fakeagent.FIFOName))
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
