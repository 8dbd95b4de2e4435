package mcpserver_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mcpserver"
)

// gentleOptions plays every run with the fake of its prompt, under a kill
// grace long enough that a run ended with SIGKILL was not given it: the
// "interrupt" fake answers SIGINT with its result and exit status 130.
func gentleOptions(fp **fixture) func(*mcpserver.Options) {
	return graceOptions(fp, 20*time.Second)
}

// graceOptions is gentleOptions with the kill grace given.
func graceOptions(fp **fixture, grace time.Duration) func(*mcpserver.Options) {
	return func(o *mcpserver.Options) {
		o.Setup = func(tk *harness.Task) (harness.Observer, error) {
			argv, env := fakeagent.Command(tk.Prompt)
			tk.Binary, tk.BaseEnv = argv[0], env
			tk.Budgets.Linger, tk.Budgets.KillGrace = 100*time.Millisecond, grace
			f := *fp
			return harness.Observer{
				OnNative: func(stream string, line []byte) { f.children.Note(line) },
				Close: func(res *event.Result) {
					f.mu.Lock()
					f.closed = append(f.closed, res)
					f.mu.Unlock()
				}}, nil
		}
	}
}

// startInterruptible starts the "interrupt" fake with wait=none and waits
// for its tool call, by which time it heeds SIGINT.
func startInterruptible(t *testing.T, f *fixture) string {
	t.Helper()
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "interrupt", "wait": "none"}, nil)
	require.False(t, res.IsError, harnesstest.MCPText(res))
	id := harnesstest.MCPStructured(t, res).Get("run_id").String()
	waitStatus(t, f, id, func(st gjson.Result) bool { return len(st.Get("tools_in_flight").Array()) > 0 })
	return id
}

// requireGentle checks the one run of f ended by its own answer to SIGINT,
// not by a SIGKILL.
func requireGentle(t *testing.T, f *fixture) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Len(t, f.closed, 1)
	res := f.closed[0]
	require.Equal(t, "cancelled", res.Status)
	require.Empty(t, res.Signal, "the agent was killed rather than interrupted")
	require.NotNil(t, res.ExitCode)
	require.Equal(t, 130, *res.ExitCode, "the agent's own exit on SIGINT")
}

// A session's end interrupts each of its runs once: the library takes a
// second interrupt within 2 s for a second Ctrl-C and kills at once, and
// the session's end interrupted its runs twice (three times over stdio),
// so a run of a client that went away was SIGKILLed at once, without the
// grace to end on its own (and save its session for a resume). The agent
// here ignores SIGINT and SIGTERM: only the kill at the end of the grace
// ends it.
func TestSessionEndInterruptsOnce(t *testing.T) {
	t.Parallel()
	const grace = 2 * time.Second
	var f *fixture
	f = newFixture(t, graceOptions(&f, grace))
	startDeaf(t, f)
	start := time.Now()
	require.NoError(t, f.cs.Close())
	select {
	case err := <-f.runDone:
		require.NoError(t, err)
		f.runDone <- nil // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatal("the session's end did not end its run")
	}
	require.GreaterOrEqual(t, time.Since(start), grace*3/4, "the session's end killed the agent at once")
}

// Over stdio, the end of stdin interrupts the runs once, as above.
func TestStdioEOFInterruptsOnce(t *testing.T) {
	t.Parallel()
	var f *fixture
	f = newFixtureStdio(t, gentleOptions(&f))
	startInterruptible(t, f)
	require.NoError(t, f.cs.Close()) // the client is gone
	select {
	case err := <-f.runDone:
		require.NoError(t, err)
		f.runDone <- nil // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatal("the end of stdin did not end the run")
	}
	requireGentle(t, f)
}

// cancel_run is idempotent (its annotations say so): a second call, as
// from a client that retries, waits for the same interrupt, and does not
// turn it into an immediate SIGKILL. The agent ignores SIGINT and
// SIGTERM: only the kill at the end of the grace ends it.
func TestCancelRunTwiceInterruptsOnce(t *testing.T) {
	t.Parallel()
	const grace = 2 * time.Second
	var f *fixture
	f = newFixture(t, graceOptions(&f, grace))
	id := startDeaf(t, f)
	start := time.Now()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			r := f.call(t, "cancel_run", map[string]any{"run_id": id}, nil)
			require.False(t, r.IsError, harnesstest.MCPText(r))
		})
		time.Sleep(100 * time.Millisecond) // the second call comes after the first
	}
	wg.Wait()
	require.GreaterOrEqual(t, time.Since(start), grace*3/4, "the second cancel_run killed the agent at once")
}

// startDeaf starts the "ignore-sigterm" fake with wait=none and waits for
// its first event, by which time it ignores SIGINT and SIGTERM.
func startDeaf(t *testing.T, f *fixture) string {
	t.Helper()
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "ignore-sigterm", "wait": "none"}, nil)
	require.False(t, res.IsError, harnesstest.MCPText(res))
	id := harnesstest.MCPStructured(t, res).Get("run_id").String()
	waitStatus(t, f, id, func(st gjson.Result) bool { return st.Get("events").Int() > 0 })
	return id
}

// waitStatus polls run_status of run id until ok holds of it.
func waitStatus(t *testing.T, f *fixture, id string, ok func(gjson.Result) bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		st := harnesstest.MCPStructured(t, f.call(t, "run_status", map[string]any{"run_id": id}, nil))
		if ok(st) {
			return
		}
		require.Equal(t, "running", st.Get("state").String())
		time.Sleep(10 * time.Millisecond) // polling a condition
	}
	t.Fatal("the run did not get there in time")
}
