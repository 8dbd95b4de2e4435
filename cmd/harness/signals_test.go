package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/signal"
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

// TestSessionSecondSignalKills: in a session, as in a run, the first
// Ctrl-C asks the agent to stop (SIGINT, SIGTERM, SIGKILL after the
// grace) and a second within 2 s kills it at once. (The session cancelled
// its context at each signal: the second did nothing, and an agent deaf
// to SIGINT and SIGTERM lived out the grace.)
func TestSessionSecondSignalKills(t *testing.T) {
	isolate(t)
	// harness's own handler stops at its return; the signals this test
	// sends itself until then must never reach the default action.
	guard := make(chan os.Signal, 1)
	signal.Notify(guard, syscall.SIGINT)
	defer signal.Stop(guard)
	argv, _ := fakeagent.Command("ignore-sigterm") // deaf to SIGINT and SIGTERM, and silent: the session waits
	stdin, inw := io.Pipe()
	defer inw.Close()
	var out, errb bytes.Buffer
	started := make(chan struct{})
	stdout := &interruptOnLine{w: &out, marker: `"type":"session_start"`, fire: func() { close(started) }}
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"session", "--agent", "claude", "--binary", argv[0], "--cwd", t.TempDir(), "--no-log",
			"--env", fakeagent.EnvVar + "=ignore-sigterm", "--idle-timeout", "0", "--timeout", "2m", "--kill-grace", "1m"}, stdin, stdout, &errb)
	}()
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("the session never started")
	}
	// Ctrl-C, again and again: the runtime folds a signal into one still
	// pending, so the second is sent until it is seen.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	bound := time.After(20 * time.Second)
	var code int
wait:
	for {
		select {
		case code = <-done:
			break wait
		case <-tick.C:
			require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
		case <-bound:
			t.Fatal("two Ctrl-C left the session running (its kill grace is 1m)")
		}
	}
	require.Equal(t, exitInterrupted, code, errb.String())
	evs := sessionStream(t, result{code, out.String(), errb.String()})
	res := evs[len(evs)-1].Body.(*event.Result)
	require.Equal(t, event.ResultCancelled, res.Status)
	require.Equal(t, "SIGKILL", res.Signal, "killed, not ended by a grace")
}

// TestSessionSignalReportsToolsInFlight: a Ctrl-C that ends a session
// names on stderr each tool call still running, as it does for a run (a
// session said nothing of them).
func TestSessionSignalReportsToolsInFlight(t *testing.T) {
	isolate(t)
	guard := make(chan os.Signal, 1)
	signal.Notify(guard, syscall.SIGINT)
	defer signal.Stop(guard)
	argv, _ := fakeagent.Command("hang-in-tool")
	stdin, inw := io.Pipe()
	defer inw.Close()
	var out, errb bytes.Buffer
	inTool := make(chan struct{})
	stdout := &interruptOnLine{w: &out, marker: `"type":"tool_start"`, fire: func() { close(inTool) }}
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"session", "--agent", "claude", "--binary", argv[0], "--cwd", t.TempDir(), "--no-log",
			"--env", fakeagent.EnvVar + "=hang-in-tool", "--idle-timeout", "0", "--timeout", "2m", "--kill-grace", "2s"}, stdin, stdout, &errb)
	}()
	select {
	case <-inTool:
	case <-time.After(time.Minute):
		t.Fatal("the fake never opened its tool call")
	}
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	var code int
	select {
	case code = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Ctrl-C left the session running")
	}
	require.Equal(t, exitInterrupted, code, errb.String())
	require.Contains(t, errb.String(), "tool still running at interrupt: Bash (call="+fakeagent.ToolCallID)
}
