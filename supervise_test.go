package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/process"
)

// TestStalledSinkStillBounded: a caller whose output stalls (a harness
// whose stdout nobody reads) holds up its own events, never the
// supervision. The sink blocks in the tool_stalled warning, and the agent
// is still ended at its hard budget meanwhile; once the sink moves, the
// warning reaches the stream, before the run's error and result. (The
// warning was emitted on the supervisor's goroutine, which froze in it:
// no hard timeout, no SIGTERM, no SIGKILL until the consumer read.)
func TestStalledSinkStillBounded(t *testing.T) {
	t.Parallel()
	// The sink must stall well before the hard budget ends, or the test
	// cannot tell: on a loaded machine the fake may take seconds to open
	// its tool call, and then the run is tried again with more room.
	for _, hard := range []time.Duration{4 * time.Second, 15 * time.Second} {
		if stalledSinkRun(t, hard) {
			return
		}
	}
	t.Fatal("the fake was too slow to open its tool call, twice")
}

// stalledSinkRun is one run of TestStalledSinkStillBounded with the hard
// budget hard; false: the sink stalled too late to tell, nothing checked.
func stalledSinkRun(t *testing.T, hard time.Duration) bool {
	argv, env := fakeagent.Command("hang-in-tool")
	b := small()
	b.Idle, b.IdleWarning, b.Hard = 0, 0, hard
	b.Tool = func(event.Kind) time.Duration { return 100 * time.Millisecond }
	var (
		mu      sync.Mutex
		out     bytes.Buffer
		pid     int
		stalled bool
		blocked = make(chan time.Time, 1)
		gate    = make(chan struct{})
	)
	start := time.Now()
	run, err := harness.Start(context.Background(), harness.Task{
		Agent: "claude", Binary: argv[0], BaseEnv: env, Prompt: "do it", Cwd: t.TempDir(), Budgets: &b,
	}, harness.Options{OnLine: func(line []byte) {
		mu.Lock()
		out.Write(line)
		if pid == 0 {
			var ev struct{ PID int }
			_ = json.Unmarshal(line, &ev)
			pid = ev.PID
		}
		stall := !stalled && bytes.Contains(line, []byte(`"type":"warning"`))
		stalled = stalled || stall
		mu.Unlock()
		if stall {
			blocked <- time.Now()
			<-gate // the consumer does not read
		}
	}})
	require.NoError(t, err)
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(func() { release(); _, _ = run.Wait() })

	var at time.Time
	select {
	case at = <-blocked:
	case <-time.After(time.Minute):
		t.Fatal("no warning reached the sink")
	}
	if at.Sub(start) > hard-500*time.Millisecond {
		t.Logf("the fake took %s to open its tool call: too late to tell", at.Sub(start))
		release()
		_, _ = run.Wait()
		return false
	}
	mu.Lock()
	agent := pid
	mu.Unlock()
	require.NotZero(t, agent)
	require.Eventually(t, func() bool { return !process.Alive(agent) }, hard+20*time.Second, 5*time.Millisecond,
		"the agent outlived its hard budget while the sink was stalled")
	require.GreaterOrEqual(t, time.Since(start), hard)

	release()
	res, werr := run.Wait()
	require.ErrorIs(t, werr, harness.ErrHardTimeout)
	require.Equal(t, event.ResultTimeout, res.Status)
	mu.Lock()
	ndjson := append([]byte(nil), out.Bytes()...)
	mu.Unlock()
	adaptertest.CheckStream(t, ndjson)
	evs, err := event.ReadAll(bytes.NewReader(ndjson))
	require.NoError(t, err)
	var seen []string
	for _, ev := range evs {
		switch v := ev.Body.(type) {
		case *event.Warning:
			seen = append(seen, v.Code)
		case *event.Error:
			seen = append(seen, v.Code)
		case *event.Result:
			seen = append(seen, "result")
		}
	}
	require.Equal(t, []string{event.WarnToolStalled, event.ErrHardTimeout, "result"}, seen)
	return true
}

// TestIdleTimeoutMessageIsTheSilence: the idle_timeout error says how long
// the agent was silent when the watchdog fired, not that plus the kill
// grace an agent deaf to SIGTERM took (it said "no output for 5s" of an
// idle budget of 3 s and a grace of 2 s).
func TestIdleTimeoutMessageIsTheSilence(t *testing.T) {
	t.Parallel()
	b := small()
	// The fake ignores SIGTERM once it has started: the idle budget must
	// outlast its start-up.
	b.Idle, b.IdleWarning, b.KillGrace = 3*time.Second, 0, 2*time.Second
	f := runFake(t, "ignore-sigterm", b, nil)
	require.Equal(t, event.ErrIdleTimeout, f.errorCode(), "%s", f.ndjson)
	i := slices.IndexFunc(f.find(event.TypeError), func(b event.Body) bool { return b.(*event.Error).Fatal })
	e := f.find(event.TypeError)[i].(*event.Error)
	require.Equal(t, "SIGKILL", e.Signal, "the grace was not used: nothing to tell apart")
	m := regexp.MustCompile(`^no output for (\S+); the agent was stopped$`).FindStringSubmatch(e.Message)
	require.NotNil(t, m, e.Message)
	d, err := time.ParseDuration(m[1])
	require.NoError(t, err)
	require.GreaterOrEqual(t, d, b.Idle)
	require.Less(t, d, b.Idle+b.KillGrace/2, "the kill grace counted as silence")
	require.GreaterOrEqual(t, e.Partial.LastActivityMSAgo, (b.Idle + b.KillGrace).Milliseconds(),
		"the error's partial still says how long ago the last output was")
}

// TestEnvGivenIsPassed: variables named like harness's own secrets are
// removed from the environment an agent inherits, not from what the
// caller hands it on purpose (--env, a config env table, Task.Env): a user
// who writes HARNESS_FOO_SECRET=… for the agent wants the agent to have it
// (and its value is redacted from the session log).
func TestEnvGivenIsPassed(t *testing.T) {
	t.Parallel()
	c, err := harness.Prepare(harness.Task{Agent: "claude", Prompt: "x", Binary: "/bin/true",
		BaseEnv: []string{"PATH=/bin", "HARNESS_INHERITED_SECRET=s1", "HARNESS_MCP_TOKEN=t1"},
		Env:     []string{"HARNESS_FOO_SECRET=s2"}})
	require.NoError(t, err)
	require.Contains(t, c.Env, "HARNESS_FOO_SECRET=s2")
	for _, kv := range c.Env {
		require.NotContains(t, kv, "HARNESS_INHERITED_SECRET")
		require.NotContains(t, kv, "HARNESS_MCP_TOKEN")
	}
}
