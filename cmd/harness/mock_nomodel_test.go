package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/fakeagent"
)

// --mock runs an agent that calls no model (nop, oracle) as it is, with
// nothing to point: before, it was refused, exit 2, as one that talks to
// its own service only. Cursor still is, with that reason.
func TestMockRunsAgentsOfNoModel(t *testing.T) {
	isolate(t)
	r := invoke(t, "", "run", "-a", "nop", "-p", "x", "--mock", "text", "--no-log")
	require.Equal(t, 0, r.code, r.stderr)

	r = invoke(t, "", "run", "-a", "cursor", "-p", "x", "--mock", "text", "--no-log")
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "cursor cannot run on the scripted model (it talks to its own service only)")
}

// A bench of a mocked agent and nop under --mock runs both (the suite's
// sanity check): the fake claude passes the check, nop fails it.
func TestBenchMockWithNop(t *testing.T) {
	home := isolate(t)
	argv, _ := fakeagent.Command("bench-cli-writer")
	r := invoke(t, "", "bench", "--agents", "claude,nop", "--mock", "tool", "-p", "create out.txt",
		"--check", "test -f out.txt", "--workdir", benchSource(t), "--report", "json", "--no-store",
		"--binary", "claude="+argv[0], "--env", fakeagent.EnvVar+"=bench-cli-writer",
		"--linger", "100ms", "--kill-grace", "200ms", "--results", filepath.Join(home, "results"))
	require.Equal(t, exitAgentFailed, r.code, r.stderr) // nop fails the check, as it should
	rep := decodeReport(t, r.stdout)
	require.Equal(t, "tool", rep.Mock)
	require.Len(t, rep.Runs, 2)
	passed := map[string]bool{}
	for _, run := range rep.Runs {
		passed[run.Agent] = run.Check != nil && run.Check.Passed
	}
	require.Equal(t, map[string]bool{"claude": true, "nop": false}, passed)
}
