//go:build linux

package process

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// onLine returns a hook calling fn for lines containing substr.
func onLine(substr string, fn func(r *run)) hook {
	return func(r *run, line string) {
		if strings.Contains(line, substr) {
			fn(r)
		}
	}
}

// toolHooks opens and closes the fake's tool call as the composition would.
func toolHooks(r *run, line string) {
	switch {
	case strings.Contains(line, `"type":"tool_use"`):
		r.p.ToolStarted(fakeagent.ToolCallID, "Bash", event.KindShell)
	case strings.Contains(line, `"type":"tool_result"`):
		r.p.ToolEnded(fakeagent.ToolCallID)
	case strings.Contains(line, `"type":"result"`):
		r.p.AgentDone()
	}
}

// endedLeavingOne: the fake printed its three lines and exited 0 by
// itself, leaving one process behind (announced), which the end of the
// run found and killed.
func endedLeavingOne(t *testing.T, r *run, o Outcome) {
	t.Helper()
	require.NoError(t, o.Reason)
	require.Equal(t, 0, o.ExitCode)
	require.False(t, o.Killed)
	require.GreaterOrEqual(t, o.Stragglers, 1)
	require.Len(t, r.pids, 1)
	r.requireSeqs(t, 3)
}

// TestFaults is the supervision fault suite: every scenario of
// docs/supervision.md under tiny budgets, each checked for its bound
// (runBound), its Outcome, its lines, and that nothing of the run is
// left alive.
func TestFaults(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	// Where a case checks the signal a fake died of, a fake that ends at
	// the first signal gets a kill grace of a minute: a loaded machine
	// must not turn its late exit into a SIGKILL.
	cases := []struct {
		name  string
		fake  string
		args  []string
		opts  Options
		hook  hook
		boot  string // see startFake
		check func(t *testing.T, r *run, o Outcome)
	}{
		{
			name: "hang-silent", fake: "hang-silent",
			opts: Options{Idle: 50 * ms, KillGrace: time.Minute},
			check: func(t *testing.T, r *run, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrIdleTimeout)
				require.Equal(t, -1, o.ExitCode)
				require.Equal(t, "SIGTERM", o.Signal)
				require.True(t, o.Killed)
				require.Equal(t, "SIGTERM", o.KillSignal)
				r.requireSeqs(t, 0)
			},
		},
		{
			name: "hang-silent-kill-grace-zero", fake: "hang-silent",
			opts: Options{Idle: 50 * ms},
			check: func(t *testing.T, r *run, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrIdleTimeout)
				require.Equal(t, "SIGKILL", o.Signal)
				require.Equal(t, "SIGKILL", o.KillSignal)
			},
		},
		{
			// Warned after 300 ms of silence, killed after 2 s: a pause of
			// 650 ms warns once and leaves 1.35 s for a loaded machine.
			name: "hang-after-output", boot: `"init"`, fake: "hang-after-output", args: []string{"650ms"},
			opts: Options{Idle: 2 * time.Second, IdleWarning: 1700 * ms, KillGrace: time.Second},
			check: func(t *testing.T, r *run, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrIdleTimeout)
				require.Equal(t, "SIGTERM", o.KillSignal)
				r.requireSeqs(t, 3)
				idle := r.warningsOf(event.WarnIdle)
				require.Len(t, idle, 3, "one idle warning per silence")
				for _, w := range idle {
					require.GreaterOrEqual(t, w.IdleMS, int64(300))
					require.LessOrEqual(t, w.AbortInMS, int64(1700))
					require.Positive(t, w.AbortInMS)
				}
			},
		},
		{
			name: "ignore-sigterm", boot: `"init"`, fake: "ignore-sigterm",
			opts: Options{Idle: 300 * ms, KillGrace: 100 * ms},
			check: func(t *testing.T, r *run, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrIdleTimeout)
				require.Equal(t, "SIGKILL", o.Signal)
				require.Equal(t, "SIGKILL", o.KillSignal)
				require.GreaterOrEqual(t, o.Duration, 400*ms)
				r.requireSeqs(t, 1)
			},
		},
		{
			name: "grandchild-holds-stdout", boot: `"result"`, fake: "grandchild-holds-stdout",
			opts: Options{Idle: time.Minute, KillGrace: 100 * ms}, check: endedLeavingOne,
		},
		{
			name: "setsid-escapee", boot: "fake_child", fake: "setsid-escapee",
			opts: Options{Idle: 300 * ms, KillGrace: time.Minute},
			check: func(t *testing.T, r *run, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrIdleTimeout)
				require.Equal(t, "SIGTERM", o.Signal)
				require.GreaterOrEqual(t, o.Stragglers, 1)
				require.Len(t, r.pids, 1)
				r.requireSeqs(t, 2)
			},
		},
		{
			// The escapee's main thread exits and its other threads run
			// on: /proc calls it a zombie, yet it must be killed.
			name: "leader-exits-escapee", boot: "fake_child", fake: "leader-exits-escapee",
			opts: Options{Idle: 300 * ms, KillGrace: time.Minute},
			check: func(t *testing.T, r *run, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrIdleTimeout)
				require.GreaterOrEqual(t, o.Stragglers, 1)
				require.Len(t, r.pids, 1)
				// Killed, not waited for to the sweep's end: cgroup.kill
				// misses such a process (Linux 6.x), kill(2) does not.
				require.Less(t, o.Duration, sweepTimeout, "the sweep ran to its timeout")
			},
		},
		{
			name: "double-fork-daemon", boot: `"result"`, fake: "double-fork-daemon",
			opts: Options{Idle: time.Minute, KillGrace: 100 * ms}, check: endedLeavingOne,
		},
		{
			// Double fork, new session, emptied environment: only the
			// run's reaper can tell the daemon belongs to the run.
			name: "env-i-setsid-daemon", boot: `"result"`, fake: "env-i-setsid-daemon",
			opts: Options{Idle: time.Minute, KillGrace: 100 * ms}, check: endedLeavingOne,
		},
		{
			name: "no-trailing-newline", fake: "no-trailing-newline",
			opts: Options{Idle: time.Minute},
			check: func(t *testing.T, r *run, o Outcome) {
				require.NoError(t, o.Reason)
				r.requireSeqs(t, 2)
				require.True(t, strings.HasSuffix(r.lines[1], "}"))
			},
		},
		{
			name: "invalid-utf8", fake: "invalid-utf8",
			opts: Options{Idle: time.Minute},
			check: func(t *testing.T, r *run, o Outcome) {
				require.NoError(t, o.Reason)
				r.requireSeqs(t, 3)
				require.Contains(t, r.lines[1], "bad \xff\xfe\xc3\x28 bytes")
			},
		},
		{
			name: "non-json-lines", fake: "non-json-lines",
			opts: Options{Idle: time.Minute},
			check: func(t *testing.T, r *run, o Outcome) {
				require.NoError(t, o.Reason)
				r.requireSeqs(t, 4)
				require.Equal(t, "npm WARN deprecated inflight@1.0.6 seq=2", r.lines[1])
				require.Equal(t, "\x00binary\x01 seq=3", r.lines[2])
			},
		},
		{
			name: "exit-mid-tool", fake: "exit-mid-tool", hook: toolHooks,
			opts: Options{Idle: time.Minute},
			check: func(t *testing.T, r *run, o Outcome) {
				require.NoError(t, o.Reason)
				require.Equal(t, 1, o.ExitCode)
				require.Contains(t, string(o.StderrTail), "Error: socket hang up")
				r.requireSeqs(t, 2)
			},
		},
		{
			name: "killed-by-signal", fake: "killed-by-signal",
			opts: Options{Idle: time.Minute},
			check: func(t *testing.T, r *run, o Outcome) {
				require.NoError(t, o.Reason)
				require.Equal(t, -1, o.ExitCode)
				require.Equal(t, "SIGKILL", o.Signal)
				require.False(t, o.Killed)
				require.Empty(t, o.KillSignal)
				r.requireSeqs(t, 2)
			},
		},
		{
			name: "result-then-linger", boot: `"init"`, fake: "result-then-linger", hook: toolHooks,
			opts: Options{Idle: time.Minute, Linger: 50 * ms, KillGrace: time.Minute},
			check: func(t *testing.T, r *run, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrLingered)
				require.True(t, o.Lingered)
				require.Equal(t, "SIGTERM", o.KillSignal)
				require.Equal(t, "SIGTERM", o.Signal)
				require.Len(t, r.warningsOf(event.WarnLingeredAfterResult), 1)
				r.requireSeqs(t, 4)
			},
		},
		{
			// After the final event only the linger rule applies: an idle
			// budget equal to the linger (or shorter) must not turn a
			// finished answer into a timeout.
			name: "result-then-linger-idle-equal", boot: `"init"`, fake: "result-then-linger", hook: toolHooks,
			opts: Options{Idle: 300 * ms, Linger: 300 * ms, KillGrace: time.Second},
			check: func(t *testing.T, r *run, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrLingered)
				require.True(t, o.Lingered)
				require.Len(t, r.warningsOf(event.WarnLingeredAfterResult), 1)
				r.requireSeqs(t, 4)
			},
		},
		{
			name: "slow-drip", boot: `"init"`, fake: "slow-drip", args: []string{"20ms", "2500ms"},
			opts: Options{Idle: time.Second, KillGrace: 100 * ms},
			check: func(t *testing.T, r *run, o Outcome) {
				require.NoError(t, o.Reason, "a slow but steady agent is not idle")
				require.Equal(t, 0, o.ExitCode)
				require.GreaterOrEqual(t, o.StdoutLines, int64(20))
				r.requireSeqs(t, int(o.StdoutLines))
			},
		},
		{
			// A slow consumer of our output: the callback blocks far
			// longer than the idle budget while the agent keeps printing.
			// Time spent in our own callbacks is not the agent's silence.
			name: "slow-consumer", boot: `"init"`, fake: "slow-drip", args: []string{"20ms", "2500ms"},
			hook: onLine(`"seq":3}`, func(*run) { time.Sleep(1500 * ms) }),
			opts: Options{Idle: 500 * ms, KillGrace: 100 * ms},
			check: func(t *testing.T, r *run, o Outcome) {
				require.NoError(t, o.Reason, "an agent blocked on our output is not idle")
				require.Equal(t, 0, o.ExitCode)
				r.requireSeqs(t, int(o.StdoutLines))
			},
		},
		{
			name: "hard-timeout", boot: `"init"`, fake: "slow-drip", args: []string{"10ms", "1m"},
			opts: Options{Idle: 5 * time.Second, Hard: 300 * ms, KillGrace: time.Minute},
			check: func(t *testing.T, r *run, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrHardTimeout)
				require.Equal(t, "SIGTERM", o.Signal)
				require.GreaterOrEqual(t, o.Duration, 300*ms)
				r.requireSeqs(t, int(o.StdoutLines))
			},
		},
		{
			name: "long-silent-tool", boot: `"tool_use"`, fake: "long-silent-tool", args: []string{"1500ms"}, hook: toolHooks,
			opts: Options{
				Idle: 500 * ms, KillGrace: 100 * ms,
				ToolBudget: func(event.Kind) time.Duration { return 5 * time.Second },
			},
			check: func(t *testing.T, r *run, o Outcome) {
				require.NoError(t, o.Reason, "a silent tool within its budget is not idle")
				require.Empty(t, r.warningsOf(event.WarnToolStalled))
				r.requireSeqs(t, 4)
			},
		},
		{
			name: "tool-past-budget", boot: `"tool_use"`, fake: "tool-past-budget", args: []string{"1200ms", "10ms"}, hook: toolHooks,
			opts: Options{
				Idle: time.Second, KillGrace: 100 * ms,
				ToolBudget: func(event.Kind) time.Duration { return 200 * ms },
			},
			check: func(t *testing.T, r *run, o Outcome) {
				require.NoError(t, o.Reason)
				stalled := r.warningsOf(event.WarnToolStalled)
				require.Len(t, stalled, 1, "one tool_stalled warning per call")
				require.Equal(t, fakeagent.ToolCallID, stalled[0].CallID)
				require.Equal(t, "Bash", stalled[0].Name)
				require.Equal(t, int64(200), stalled[0].BudgetMS)
				require.GreaterOrEqual(t, stalled[0].ElapsedMS, int64(200))
				require.Positive(t, r.errLines)
				r.requireSeqs(t, 4)
			},
		},
		{
			name: "tool-past-budget-and-silent", boot: `"tool_use"`, fake: "long-silent-tool", args: []string{"1m"}, hook: toolHooks,
			opts: Options{
				Idle: 50 * ms, KillGrace: 100 * ms,
				ToolBudget: func(event.Kind) time.Duration { return 200 * ms },
			},
			check: func(t *testing.T, r *run, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrIdleTimeout, "past its budget a silent tool is idle")
				require.Len(t, r.warningsOf(event.WarnToolStalled), 1)
				require.GreaterOrEqual(t, o.Duration, 200*ms)
			},
		},
		{
			name: "stdin-reader", fake: "stdin-reader",
			opts: Options{Idle: time.Minute, Stdin: "hello\n-p --flag-looking\nlast"},
			check: func(t *testing.T, r *run, o Outcome) {
				require.NoError(t, o.Reason)
				r.requireSeqs(t, 5)
				require.Contains(t, r.lines[1], `"text":"hello"`)
				require.Contains(t, r.lines[2], `"text":"-p --flag-looking"`)
				require.Contains(t, r.lines[3], `"text":"last"`)
			},
		},
		{
			name: "exit-nonzero-with-stderr", fake: "exit-nonzero-with-stderr", args: []string{"2"},
			opts: Options{Idle: time.Minute},
			check: func(t *testing.T, r *run, o Outcome) {
				require.NoError(t, o.Reason)
				require.Equal(t, 2, o.ExitCode)
				require.Empty(t, o.Signal)
				require.Equal(t, "Error: Invalid API key · Please run /login\n", string(o.StderrTail))
				require.Equal(t, int64(len(o.StderrTail)), o.StderrBytes)
				require.Equal(t, 1, r.errLines)
			},
		},
		{
			name: "exit-0-without-terminal-event", fake: "exit-0-without-terminal-event",
			opts: Options{Idle: time.Minute},
			check: func(t *testing.T, r *run, o Outcome) {
				require.NoError(t, o.Reason)
				require.Equal(t, 0, o.ExitCode)
				require.True(t, o.Exited)
				r.requireSeqs(t, 2)
			},
		},
		{
			name: "interrupt", fake: "interrupt", hook: onLine(`"tool_use"`, func(r *run) { r.p.Interrupt() }),
			opts: Options{Idle: time.Minute, KillGrace: time.Minute},
			check: func(t *testing.T, r *run, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrInterrupted)
				require.Equal(t, "SIGINT", o.KillSignal)
				require.Equal(t, 130, o.ExitCode)
				require.Len(t, r.pids, 1)
				r.requireSeqs(t, 4)
				require.Contains(t, r.lines[3], `"is_error":true`)
			},
		},
		{
			name: "interrupt-twice", fake: "ignore-sigterm",
			hook: onLine(`"init"`, func(r *run) { r.p.Interrupt(); r.p.Interrupt() }),
			opts: Options{KillGrace: time.Minute},
			check: func(t *testing.T, r *run, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrInterrupted)
				require.Equal(t, "SIGKILL", o.KillSignal)
				require.Equal(t, "SIGKILL", o.Signal)
			},
		},
		{
			name: "interrupt-escalates", fake: "ignore-sigterm",
			hook: onLine(`"init"`, func(r *run) { r.p.Interrupt() }),
			opts: Options{KillGrace: 200 * ms},
			check: func(t *testing.T, r *run, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrInterrupted)
				require.Equal(t, "SIGKILL", o.KillSignal)
				require.Equal(t, "SIGKILL", o.Signal)
				require.GreaterOrEqual(t, o.Duration, 200*ms)
			},
		},
		{
			// The escapee is killed at once with the agent, leaves the
			// cgroup as a zombie and is re-parented (to us, when we are a
			// subreaper): it must still be reaped, and counted.
			name: "setsid-escapee-kill-grace-zero", boot: "fake_child", fake: "setsid-escapee",
			opts: Options{Idle: 300 * ms},
			check: func(t *testing.T, r *run, o Outcome) {
				require.ErrorIs(t, o.Reason, ErrIdleTimeout)
				require.Equal(t, "SIGKILL", o.KillSignal)
				require.GreaterOrEqual(t, o.Stragglers, 1)
				require.Len(t, r.pids, 1)
			},
		},
		{
			// Left the agent's session and exited before any look saw
			// it: its zombie must not outlive the run (one per run of a
			// long-lived harness). Not with walks alone: nothing names it
			// as the run's then (see the package doc).
			name: "setsid-exits", fake: "setsid-exits",
			opts: Options{KillGrace: time.Second},
			check: func(t *testing.T, r *run, o Outcome) {
				require.NoError(t, o.Reason)
				require.Len(t, r.pids, 1)
			},
		},
	}
	// Runs get their processes' cgroup where cgroup v2 is writable (as
	// here, as root), else the run's reaper (the hook is installed in
	// TestMain), else only /proc walks and the run's marker. These cases
	// also run with the two fallbacks; the last cannot catch an escapee
	// that emptied its environment (env-i-setsid-daemon), nor reap one
	// that died before a walk saw it (setsid-exits).
	fallbacks := map[string]bool{
		"grandchild-holds-stdout": true, "setsid-escapee": true, "leader-exits-escapee": true, "setsid-escapee-kill-grace-zero": true, "double-fork-daemon": true,
		"env-i-setsid-daemon": true, "killed-by-signal": true, "stdin-reader": true,
		"interrupt": true, "ignore-sigterm": true, "setsid-exits": true,
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := startFake(t, t.Context(), c.fake, c.args, c.opts, c.hook, c.boot)
			o := r.wait(t, runBound)
			require.True(t, o.Exited)
			c.check(t, r, o)
		})
		if !fallbacks[c.name] {
			continue
		}
		t.Run(c.name+"-reaper", func(t *testing.T) {
			t.Parallel()
			opts := c.opts
			opts.noCgroup = true
			r := startFake(t, t.Context(), c.fake, c.args, opts, c.hook, c.boot)
			require.NotNil(t, r.p.rp)
			o := r.wait(t, runBound)
			require.True(t, o.Exited)
			c.check(t, r, o)
		})
		if c.name == "env-i-setsid-daemon" || c.name == "setsid-exits" {
			continue
		}
		t.Run(c.name+"-walks", func(t *testing.T) {
			t.Parallel()
			opts := c.opts
			opts.noCgroup, opts.noReaper = true, true
			r := startFake(t, t.Context(), c.fake, c.args, opts, c.hook, c.boot)
			require.Nil(t, r.p.rp)
			require.Nil(t, r.p.cg)
			o := r.wait(t, runBound)
			require.True(t, o.Exited)
			c.check(t, r, o)
		})
	}
}

func TestContextCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	r := startFake(t, ctx, "hang-after-output", nil, Options{KillGrace: time.Minute},
		onLine(`"init"`, func(*run) { cancel() }), "")
	o := r.wait(t, runBound)
	require.ErrorIs(t, o.Reason, ErrInterrupted)
	require.ErrorIs(t, o.Reason, context.Canceled)
	require.Equal(t, "SIGINT", o.KillSignal)
	require.Equal(t, "SIGINT", o.Signal)
}
