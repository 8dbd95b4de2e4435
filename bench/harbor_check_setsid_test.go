package bench_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/isolate"
)

// TestHarborCheckSetsidChildEnds: under --isolate none, what a verifier
// (or a bench task's check) starts in a session of its own is ended with
// it, as an agent's is: before, only the check's process group was
// killed, and a setsid child, in another group, outlived the check.
// One child lets go of the check's output, one holds it open.
func TestHarborCheckSetsidChildEnds(t *testing.T) {
	const free, holding = "sleep 3151", "sleep 3152"
	background := "setsid " + free + " </dev/null >/dev/null 2>&1 &\nsetsid " + holding + " &\n"
	t.Run("harbor-verifier", func(t *testing.T) {
		t.Cleanup(func() { killNamed(free); killNamed(holding) }) // what the old code left
		dir := filepath.Join(t.TempDir(), "task")
		copyDir(t, filepath.Join(harborSuite, "create-file"), dir)
		test, err := os.ReadFile(filepath.Join(dir, "tests", "test.sh"))
		require.NoError(t, err)
		require.NoError(t, execfile.Write(filepath.Join(dir, "tests", "test.sh"), append([]byte(background), test...), 0o755))
		rep := runHarbor(t, dir, isolate.None, "oracle")
		c := rep.Runs[0].Check
		require.NotNil(t, c, rep.Runs[0].Error)
		require.Empty(t, c.Error)
		require.Equal(t, bench.OutcomeReward, c.Outcome)
		require.True(t, c.Passed, "%+v", c)
		requireGone(t, free)
		requireGone(t, holding)
	})
	t.Run("check", func(t *testing.T) {
		t.Cleanup(func() { killNamed(free); killNamed(holding) })
		plan := bench.Plan{Tasks: []bench.Task{{Name: "one", Prompt: "write"}}, Agents: []string{"claude"},
			Check: background + "echo checked; test -f out.txt"}
		rep, err := bench.Run(t.Context(), plan, bench.Options{Dir: t.TempDir(), Setup: fakes(writers)})
		require.NoError(t, err)
		c := rep.Runs[0].Check
		require.NotNil(t, c)
		require.True(t, c.Passed, "%+v", c)
		require.Equal(t, "checked\n", c.Output)
		requireGone(t, free)
		requireGone(t, holding)
	})
}

// killNamed SIGKILLs the processes whose command line is cmdline.
func killNamed(cmdline string) {
	for _, p := range harnesstest.ProcsNamed(cmdline) {
		if pid, err := strconv.Atoi(strings.Split(p, "/")[2]); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
