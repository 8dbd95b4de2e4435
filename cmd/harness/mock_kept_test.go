package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/mockmodel"
)

// TestRunMockSaysItsHomeIsThrowaway: while another harness holds the
// agent's home kept for the directory, run --mock runs in a throwaway one
// and says on stderr that its session cannot be resumed (or, resuming
// one, that the session is not there); once that home is free, a run
// uses it and says nothing.
func TestRunMockSaysItsHomeIsThrowaway(t *testing.T) {
	isolate(t)
	ws := t.TempDir()
	other, err := mockmodel.StartMock("text", "")
	require.NoError(t, err)
	a, err := harness.Lookup("claude")
	require.NoError(t, err)
	_, _, throwaway, err := other.PointKept("claude", ws, a.Mock)
	require.NoError(t, err)
	require.False(t, throwaway)

	argv, _ := fakeagent.Command("prompt-echo")
	args := []string{"run", "--agent", "claude", "--binary", argv[0], "--env", fakeagent.EnvVar + "=prompt-echo",
		"--no-log", "--linger", "100ms", "--mock", "text", "--cwd", ws, "-p", "go"}
	r := invoke(t, "", args...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "harness: --mock: another harness is using the home kept for claude in "+ws+
		": this run gets a throwaway one, and its session cannot be resumed with --mock --resume\n")

	r = invoke(t, "", append(args, "--resume", "s-1")...)
	require.Contains(t, r.stderr, "harness: --mock: another harness is using the home kept for claude in "+ws+
		", which holds the sessions to resume: this run gets a throwaway one, where session s-1 is not\n")

	require.NoError(t, other.Close())
	r = invoke(t, "", args...)
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stderr, "--mock")
}
