package bench_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

// TestHarborAgentTimeoutZero: a task whose [agent].timeout_sec is 0 is
// one Harbor times out at once unless the run overrides the agent's
// timeout. Without --timeout (Options.KeepTimeout) the bench is refused
// with that reason, as a verifier's timeout of 0 is; with it, the runs
// have --timeout's, as Harbor's override_timeout_sec. Before, the runs
// had the configured timeout whether --timeout was given or not, and a
// verdict Harbor never gives.
func TestHarborAgentTimeoutZero(t *testing.T) {
	task := harborTaskWith(t, "[agent]\ntimeout_sec = 0\n[verifier]\ntimeout_sec = 60.0\n",
		"#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
	plan := bench.Plan{Tasks: []bench.Task{task}, Agents: []string{"oracle"}}
	_, err := bench.Run(t.Context(), plan, bench.Options{Dir: t.TempDir()})
	require.EqualError(t, err, `bench: task "task": task.toml: agent.timeout_sec = 0: Harbor times the agent out at once; give the agent's timeout (--timeout)`)

	rep, err := bench.Run(t.Context(), plan, bench.Options{Dir: t.TempDir(), KeepTimeout: true})
	require.NoError(t, err)
	require.True(t, rep.Runs[0].Check.Passed, rep.Runs[0].Error)
}
