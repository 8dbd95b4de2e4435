package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// TestNativeCallbacksOneAtATime: OnNative and the clock are called one at
// a time with the other callbacks, though stdout and stderr are read on
// goroutines of their own: unlocked, as the callbacks' order allows
// (docs: "one at a time, in stream order"). Both were called beside each
// other, OnNative from either reader and Now from the stderr one (its
// native events under Raw), which the race detector (make test) saw.
// Each line's OnNative comes before its events.
func TestNativeCallbacksOneAtATime(t *testing.T) {
	t.Parallel()
	agent := filepath.Join(t.TempDir(), "agent.sh")
	require.NoError(t, os.WriteFile(agent, []byte(`#!/bin/sh
echo '{"type":"system","subtype":"init","session_id":"s1","model":"m","cwd":"/tmp","tools":[]}'
( i=0; while [ $i -lt 2000 ]; do echo "stderr line $i"; i=$((i+1)); done ) >&2 &
i=0
while [ $i -lt 2000 ]; do
  echo '{"type":"assistant","message":{"id":"m'$i'","role":"assistant","content":[{"type":"text","text":"hello"}]}}'
  i=$((i+1))
done
wait
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s1","num_turns":1,"duration_ms":12,"usage":{"input_tokens":5,"output_tokens":3}}'
`), 0o755))
	var in, overlaps atomic.Int32
	enter := func() {
		if in.Add(1) > 1 {
			overlaps.Add(1)
		}
	}
	type call struct {
		native       bool
		stream, line string
	}
	var calls []call // unlocked: the callbacks are called one at a time
	ticks := int64(0)
	base := time.Unix(1700000000, 0)
	b := small()
	r, err := harness.Start(context.Background(), harness.Task{Agent: "claude", Binary: agent, Prompt: "x", Cwd: t.TempDir(), Budgets: &b, Raw: true},
		harness.Options{
			OnNative: func(stream string, line []byte) {
				enter()
				calls = append(calls, call{true, stream, string(line)})
				in.Add(-1)
			},
			OnEvent: func(ev event.Event) {
				enter()
				if n, ok := ev.Body.(*event.Native); ok {
					calls = append(calls, call{false, n.Stream, nativeText(n)})
				}
				in.Add(-1)
			},
			Now: func() time.Time {
				enter()
				ticks++
				in.Add(-1)
				return base.Add(time.Duration(ticks) * time.Microsecond)
			},
		})
	require.NoError(t, err)
	res, err := r.Wait()
	require.NoError(t, err)
	require.Equal(t, event.ResultSuccess, res.Status)
	require.Zero(t, overlaps.Load(), "a callback ran beside another")
	// Per stream, OnNative's lines are the native events' lines, in the
	// same order, and each comes first.
	for _, stream := range []string{event.StreamStdout, event.StreamStderr} {
		var natives, events []int
		var lines []string
		for i, c := range calls {
			if c.stream != stream {
				continue
			}
			if c.native {
				natives = append(natives, i)
				lines = append(lines, c.line)
			} else {
				events = append(events, i)
				require.Less(t, len(events), len(natives)+1, "%s: a native event before its OnNative", stream)
				require.Equal(t, lines[len(events)-1], c.line, "%s: native events out of OnNative's order", stream)
				require.Less(t, natives[len(events)-1], i)
			}
		}
		require.Len(t, natives, len(events), stream)
		require.GreaterOrEqual(t, len(natives), 2000, stream)
	}
}

// nativeText is the line a native event carries: a JSON line as it is,
// another as a string.
func nativeText(n *event.Native) string {
	var s string
	if json.Unmarshal(n.Line, &s) == nil {
		return s
	}
	return string(n.Line)
}

// BenchmarkRunPrintLinesNative is BenchmarkRunPrintLines with the native
// lines wanted (a session log's OnNative, --raw), which are handed on
// under the stream's lock. cpu-ns/op is this process's CPU (not the
// fake agent's): steadier than the wall time on a shared machine.
func BenchmarkRunPrintLinesNative(b *testing.B) {
	argv, env := fakeagent.Command("print-lines", "10000")
	cpu0 := selfCPU()
	for b.Loop() {
		run, err := harness.Start(context.Background(), harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env,
			Prompt: "x", Raw: true, Budgets: ptr(harness.DefaultBudgets())},
			harness.Options{OnLine: func([]byte) {}, OnNative: func(string, []byte) {}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := run.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(selfCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
