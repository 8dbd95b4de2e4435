package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/process"
)

// TestSignalsNeverWaitForTheStream: Ctrl-C while harness's stdout is
// stalled (a reader that does not read) still interrupts at once, a second
// one kills at once, and the calls in flight are reported meanwhile. (The
// report came first, on the signal goroutine, and waited for the stream,
// which waited for the reader: the agent lived until the reader read.)
func TestSignalsNeverWaitForTheStream(t *testing.T) {
	t.Parallel()
	argv, fakeEnv := fakeagent.Command("hang-in-tool-deaf") // deaf to SIGINT and SIGTERM: only the second Ctrl-C ends it soon
	b := harness.Budgets{KillGrace: time.Minute, Linger: time.Second}
	var (
		mu      sync.Mutex
		pid     int
		stalled = make(chan struct{})
		gate    = make(chan struct{})
	)
	run, err := harness.Start(context.Background(), harness.Task{
		Agent: "claude", Binary: argv[0], BaseEnv: fakeEnv, Prompt: "go", Cwd: t.TempDir(), Budgets: &b,
	}, harness.Options{OnLine: func(line []byte) {
		mu.Lock()
		if pid == 0 {
			var ev struct{ PID int }
			_ = json.Unmarshal(line, &ev)
			pid = ev.PID
		}
		stall := bytes.HasPrefix(line, []byte(`{"v":1,"type":"tool_start"`))
		mu.Unlock()
		if stall {
			close(stalled)
			<-gate // stdout stalls with the tool call open
		}
	}})
	require.NoError(t, err)
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(func() { release(); _, _ = run.Wait() })
	select {
	case <-stalled:
	case <-time.After(time.Minute):
		t.Fatal("the fake never opened its tool call")
	}

	var stderr bytes.Buffer
	sigs := make(chan os.Signal, 4)
	stop := forwardSignals(&env{Stderr: &stderr}, run, sigs)
	sigs <- syscall.SIGINT
	sigs <- syscall.SIGINT
	mu.Lock()
	agent := pid
	mu.Unlock()
	require.NotZero(t, agent)
	require.Eventually(t, func() bool { return !process.Alive(agent) }, 20*time.Second, 5*time.Millisecond,
		"two Ctrl-C left the agent alive while stdout was stalled")
	select {
	case <-gate:
		t.Fatal("stdout moved: nothing to tell")
	default:
	}
	stop() // waits for the report: written while stdout is still stalled
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	require.Len(t, lines, 1, "%s", stderr.String())
	require.Contains(t, lines[0], "tool still running at interrupt: Bash (call="+fakeagent.ToolCallID)

	release()
	res, werr := run.Wait()
	require.ErrorIs(t, werr, harness.ErrInterrupted)
	require.Equal(t, event.ResultCancelled, res.Status)
}
