//go:build linux

package process

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestWarningsNeverHoldTheSupervisor: a caller whose OnWarning blocks (a
// harness writing the warning to a stdout nobody reads) holds up its later
// warnings, nothing else: the budgets, the escalation and an interrupt
// still end the agent on time, and stderr is still drained. Once the
// consumer moves, every warning arrives, in order, before Wait returns.
// (The supervisor used to send warnings itself, and froze in the first.)
func TestWarningsNeverHoldTheSupervisor(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	shell50 := func(event.Kind) time.Duration { return 50 * ms }
	cases := []struct {
		name, fake string
		args       []string
		opts       Options
		boot       string
		blockedIn  string // the warning the consumer is stuck in
		during     func(r *run)
		check      func(t *testing.T, o Outcome)
	}{
		{
			// The idle budget counts from the tool call's start, as the
			// tool_stalled warning does: both are clear of start-up.
			name: "tool-stalled-then-idle", fake: "hang-in-tool", boot: `"init"`,
			opts:      Options{Idle: 300 * ms, KillGrace: 100 * ms, ToolBudget: shell50},
			blockedIn: event.WarnToolStalled,
			check: func(t *testing.T, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrIdleTimeout)
				require.True(t, o.Killed)
			},
		},
		{
			// Deaf to SIGINT and SIGTERM, with a grace of a minute: only
			// the second interrupt's SIGKILL ends it in time.
			name: "tool-stalled-then-interrupts", fake: "hang-in-tool-deaf", boot: `"init"`,
			opts:      Options{KillGrace: time.Minute, ToolBudget: shell50},
			blockedIn: event.WarnToolStalled,
			during:    func(r *run) { r.p.Interrupt(); r.p.Interrupt() },
			check: func(t *testing.T, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrInterrupted)
				require.Equal(t, "SIGKILL", o.KillSignal)
			},
		},
		{
			// The linger warning is found before its SIGTERM is sent.
			name: "lingered", fake: "result-then-linger",
			opts:      Options{Linger: 50 * ms, KillGrace: 100 * ms},
			blockedIn: event.WarnLingeredAfterResult,
			check: func(t *testing.T, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrLingered)
				require.True(t, o.Lingered)
			},
		},
		{
			// The stderr reader found this one: blocked, it stopped
			// reading, and the agent blocked writing a full pipe.
			name: "stderr-truncated", fake: "flood-stderr", args: []string{"1048576"},
			blockedIn: event.WarnStderrTruncated,
			check: func(t *testing.T, o Outcome) {
				require.NoError(t, o.Reason)
				require.False(t, o.Killed)
				require.Equal(t, 0, o.ExitCode)
				require.EqualValues(t, 1<<20+len("stderr end\n"), o.StderrBytes)
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			gate := make(chan struct{})
			r := startRun(t, t.Context(), &run{ready: make(chan struct{}), warnGate: gate}, c.fake, c.args, c.opts, toolHooks, c.boot)
			released := false
			release := func() {
				if !released {
					released = true
					close(gate)
				}
			}
			t.Cleanup(release) // before startRun's: its Wait needs the consumer
			require.Eventually(t, func() bool { return len(r.warningsOf(c.blockedIn)) == 1 },
				runBound, time.Millisecond, "the consumer never got the %s warning", c.blockedIn)
			if c.during != nil {
				c.during(r)
			}
			select {
			case <-r.p.exited:
			case <-time.After(runBound):
				t.Fatalf("the agent outlived its budgets while the consumer of warnings was stuck in %s", c.blockedIn)
			}
			select {
			case <-r.p.done:
				t.Fatal("Wait returned before the warning was delivered")
			default:
			}
			release()
			o := r.wait(t, runBound)
			c.check(t, o)
			r.mu.Lock()
			defer r.mu.Unlock()
			require.NotEmpty(t, r.warnings)
			require.Equal(t, c.blockedIn, r.warnings[0].Code, "in the order they were found")
		})
	}
}

// TestWarnQueueKeepsOrder: warnings pushed while the consumer is stuck
// are delivered after it, in order, by one goroutine at a time; wait
// returns once they all were.
func TestWarnQueueKeepsOrder(t *testing.T) {
	t.Parallel()
	var q warnQueue
	gate := make(chan struct{})
	var got []string
	inside := 0
	fn := func(w *event.Warning) {
		inside++ // unguarded: the race detector catches overlapping calls
		if w.Message == "0" {
			<-gate
		}
		got = append(got, w.Message)
		inside--
	}
	want := []string{"0", "1", "2", "3", "4"}
	for _, m := range want {
		q.push(fn, &event.Warning{Message: m}) // never waits for fn
	}
	waited := make(chan struct{})
	go func() { q.wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("wait returned with warnings undelivered")
	case <-time.After(20 * time.Millisecond):
	}
	close(gate)
	<-waited
	require.Equal(t, want, got)
	require.Zero(t, inside)
	q.wait() // nothing queued: at once
}
