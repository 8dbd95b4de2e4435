package harness_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// TestTelemetryObserverPerRun: Settings.Telemetry's observer watches its
// own run, and is closed once, when two runs share one Options whose
// Observers has room to spare: appended in place, the second run's
// observer took the first's place, got both runs' events and was closed
// twice (and the race detector saw it).
func TestTelemetryObserverPerRun(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]map[string]int{} // a run's observer → the runs of the events it got
	closed := map[string]int{}
	s := &harness.Settings{Telemetry: func(_ context.Context, ri harness.RunInfo) (harness.Observer, []string) {
		me := ri.Run
		return harness.Observer{
			OnEvent: func(ev event.Event) {
				mu.Lock()
				defer mu.Unlock()
				if seen[me] == nil {
					seen[me] = map[string]int{}
				}
				seen[me][ev.Run]++
			},
			Close: func(*event.Result) { mu.Lock(); closed[me]++; mu.Unlock() },
		}, nil
	}}
	argv, env := fakeagent.Command("slow-drip", "5ms", "100ms")
	b := small()
	task := harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env, Prompt: "go", Cwd: t.TempDir(), Budgets: &b}
	o := harness.Options{Observers: make([]harness.Observer, 0, 4)}
	a, err := s.Start(context.Background(), task, o)
	require.NoError(t, err)
	c, err := s.Start(context.Background(), task, o)
	require.NoError(t, err)
	_, _ = a.Wait()
	_, _ = c.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, r := range []*harness.Run{a, c} {
		require.Len(t, seen[r.RunID()], 1, "the observer of %s saw another run's events", r.RunID())
		require.Positive(t, seen[r.RunID()][r.RunID()])
		require.Equal(t, 1, closed[r.RunID()], "closed once")
	}
}

// TestCannotAskClosesObservers: a session that cannot ask (an agent whose
// ACP adapter has no permission requests) closes the observers with nil,
// as Start does for any task that cannot run; it returned first.
func TestCannotAskClosesObservers(t *testing.T) {
	t.Parallel()
	closes := 0
	o := harness.SessionOptions{Options: harness.Options{Observers: []harness.Observer{{Close: func(r *event.Result) {
		require.Nil(t, r)
		closes++
	}}}}}
	_, err := (&harness.Settings{}).StartSession(context.Background(),
		harness.Task{Agent: "opencode", Permissions: harness.Ask, Cwd: t.TempDir()}, o)
	var ca *harness.CannotAskError
	require.ErrorAs(t, err, &ca)
	require.Equal(t, 1, closes)
}

// TestFlushNeverBesideOnLine: callbacks are called one at a time, Flush
// too: a writer that OnLine fills and Flush writes out needs no lock. A
// warning's goroutine (tool_stalled, with a 1 ms tool budget) flushed
// beside OnLine on the stdout goroutine, 1 to 60 times a run of 40 open
// calls and 3000 lines.
func TestFlushNeverBesideOnLine(t *testing.T) {
	t.Parallel()
	agent := filepath.Join(t.TempDir(), "agent.sh")
	require.NoError(t, os.WriteFile(agent, []byte(`#!/bin/sh
echo '{"type":"system","subtype":"init","session_id":"s1","model":"m","cwd":"/tmp","tools":[]}'
i=0
while [ $i -lt 40 ]; do
  echo '{"type":"assistant","message":{"id":"t'$i'","role":"assistant","content":[{"type":"tool_use","id":"tool'$i'","name":"Bash","input":{"command":"ls"}}]}}'
  i=$((i+1))
done
i=0
while [ $i -lt 3000 ]; do
  echo '{"type":"assistant","message":{"id":"m'$i'","role":"assistant","content":[{"type":"text","text":"hello"}]}}'
  i=$((i+1))
done
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s1","num_turns":1,"duration_ms":12,"usage":{"input_tokens":5,"output_tokens":3}}'
`), 0o755))
	var in, overlaps, warnings atomic.Int32
	enter := func() {
		if in.Add(1) > 1 {
			overlaps.Add(1)
		}
	}
	// Unlocked, as the callbacks' order allows: the race detector (make
	// test) sees an overlap the counter may miss. Each callback takes a
	// while, as a real writer's does, so that one running beside the
	// other is seen.
	w := bufio.NewWriter(io.Discard)
	spin := func() {
		for start := time.Now(); time.Since(start) < 100*time.Microsecond; {
		}
	}
	b := small()
	b.Tool = func(event.Kind) time.Duration { return time.Millisecond }
	for range 3 {
		r, err := harness.Start(context.Background(), harness.Task{Agent: "claude", Binary: agent, Prompt: "x", Cwd: t.TempDir(), Budgets: &b, Raw: true},
			harness.Options{
				OnLine: func(l []byte) { enter(); w.Write(l); spin(); in.Add(-1) },
				OnEvent: func(ev event.Event) {
					if ev.Type == event.TypeWarning {
						warnings.Add(1)
					}
				},
				Flush: func() { enter(); w.Flush(); spin(); in.Add(-1) },
			})
		require.NoError(t, err)
		_, _ = r.Wait()
	}
	require.Positive(t, warnings.Load(), "no tool_stalled warning: nothing flushed from its goroutine")
	require.Zero(t, overlaps.Load(), "Flush ran beside OnLine")
}

// TestStreamJSONRunInterrupted: a one-prompt run over Claude's stream-json
// that the caller interrupts, and whose CLI answers by ending the turn
// (error_during_execution), ends interrupted and cancelled, as a run over
// ACP does and as a turn of a session does: it ended with a fatal
// agent_error, status error and ErrAgentFailed.
func TestStreamJSONRunInterrupted(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command(fakeagent.ClaudeStream)
	b := small()
	answered := make(chan struct{}, 1)
	r, err := harness.Start(context.Background(), harness.Task{Agent: "claude", Binary: argv[0], Protocol: "stream-json",
		Prompt: "go", Cwd: t.TempDir(), Budgets: &b, BaseEnv: append(env, fakeagent.ClaudeStreamMode+"=hang")},
		harness.Options{OnEvent: func(ev event.Event) {
			if ev.Type == event.TypeTextDelta || ev.Type == event.TypeMessage {
				select {
				case answered <- struct{}{}:
				default:
				}
			}
		}})
	require.NoError(t, err)
	select {
	case <-answered: // the turn is in flight: the interrupt is its
	case <-time.After(30 * time.Second):
		t.Fatal("the turn never answered")
	}
	r.Interrupt()
	res, err := r.Wait()
	require.ErrorIs(t, err, harness.ErrInterrupted)
	require.Equal(t, event.ResultCancelled, res.Status)
}
