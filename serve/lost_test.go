package serve_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/logger"
)

func init() { fakeagent.Register("serve-harness", harnessWriter) }

// harnessWriter plays a harness process writing a run's session log: it
// opens the log of $SERVE_TEST_RUN in $SERVE_TEST_DIR, writes the first
// event, says "ready" and waits to be killed.
func harnessWriter([]string) int {
	run := os.Getenv("SERVE_TEST_RUN")
	sess, err := logger.Open(os.Getenv("SERVE_TEST_DIR"), run, logger.Meta{Agent: "codex"}, logger.WithRedactor(logger.NewRedactor(nil)))
	if err != nil {
		return 1
	}
	if sess.WriteEvent([]byte(`{"v":1,"type":"session_start","run":"`+run+`","seq":1,"ts":1,"agent":"codex","cwd":"/w","pty":false,"argv":[]}`)) != nil {
		return 1
	}
	if os.Getenv("SERVE_TEST_RESULT") != "" { // the run is over; its Close never comes
		if sess.WriteEvent([]byte(`{"v":1,"type":"result","run":"`+run+`","seq":2,"ts":5000,"status":"error","text":"","duration_ms":4999,"usage":{},"exit_code":3,"stats":{"native_lines":0,"unparsed_lines":0,"events":2,"tool_calls":0}}`)) != nil ||
			sess.Flush() != nil {
			return 1
		}
	}
	os.Stdout.WriteString("ready\n")
	select {}
}

// TestHarnessKilled: a run whose harness process was SIGKILLed (its meta
// never closed) reads lost once the process is gone, and its live stream
// ends with `end` instead of waiting forever.
func TestHarnessKilled(t *testing.T) {
	f := newFixture(t, "serve-gated")
	const run = "run_01KILLEDHARNESS0000000000"
	argv, env := fakeagent.Command("serve-harness")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(env, "SERVE_TEST_DIR="+f.dir, "SERVE_TEST_RUN="+run)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)

	require.Equal(t, "running", f.api.JSON(t, "/api/runs/"+run, 200)["status"])
	// The deadline only turns a stream that never ends into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := f.api.Events(t, ctx, run, nil)
	defer res.Body.Close()
	var events []string
	readSSE(t, res.Body, func(m sse) bool {
		events = append(events, m.event)
		if len(events) == 1 { // the stream is live: now the harness dies
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		}
		return m.event != "end"
	})
	require.Equal(t, []string{"", "end"}, events)
	require.Equal(t, "lost", f.api.JSON(t, "/api/runs/"+run, 200)["status"])
	list := f.api.JSON(t, "/api/runs?status=lost", 200)["runs"].([]any)
	require.Len(t, list, 1)
}

// TestHarnessKilledAfterResult: a run whose harness wrote its result and
// died (SIGKILL) before it rewrote the meta reads as its result says,
// here and in 'harness sessions list' (logger.List) alike, before and
// after the harness is gone: the log's stream is the record. The list
// said running, then lost, while this API said the result's status.
func TestHarnessKilledAfterResult(t *testing.T) {
	f := newFixture(t, "serve-gated")
	const run = "run_01KILLEDAFTERRESULT000000"
	argv, env := fakeagent.Command("serve-harness")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(env, "SERVE_TEST_DIR="+f.dir, "SERVE_TEST_RUN="+run, "SERVE_TEST_RESULT=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	agree := func() {
		t.Helper()
		metas, err := logger.List(f.dir)
		require.NoError(t, err)
		require.Len(t, metas, 1)
		require.Equal(t, "error", metas[0].Status, "sessions list")
		require.Equal(t, "error", f.api.JSON(t, "/api/runs/"+run, 200)["status"])
		runs := f.api.JSON(t, "/api/runs?status=error", 200)["runs"].([]any)
		require.Len(t, runs, 1)
	}
	agree() // its harness alive, its meta not yet rewritten
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	agree()
}
