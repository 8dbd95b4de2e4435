package harness_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// TestInterruptAfterAgentFailure: an agent that reported its failure
// (a fatal agent_error) and lingers is interrupted: the run keeps the
// one fatal error and the status the agent reported (error, not
// cancelled), and the interrupt is a detail of it. Before, the run had
// two fatal errors and ended cancelled.
func TestInterruptAfterAgentFailure(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command("error-result-then-linger")
	b := small()
	b.Linger = time.Minute // only the interrupt ends it
	failed := make(chan struct{})
	var errs []*event.Error
	run, err := harness.Start(context.Background(), harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env,
		Prompt: "do it", Cwd: t.TempDir(), Budgets: &b}, harness.Options{OnEvent: func(ev event.Event) {
		if e, ok := ev.Body.(*event.Error); ok {
			errs = append(errs, e)
			if e.Fatal && len(errs) == 1 {
				close(failed)
			}
		}
	}})
	require.NoError(t, err)
	<-failed
	run.Interrupt()
	res, err := run.Wait()
	require.ErrorIs(t, err, harness.ErrAgentFailed)
	require.NotErrorIs(t, err, harness.ErrInterrupted)
	require.Equal(t, event.ResultError, res.Status)
	var fatal, interrupted int
	for _, e := range errs {
		if e.Fatal {
			fatal++
		}
		if e.Code == event.ErrInterrupted {
			interrupted++
			require.False(t, e.Fatal)
		}
	}
	require.Equal(t, 1, fatal, "%+v", errs)
	require.Equal(t, 1, interrupted, "%+v", errs)
}
