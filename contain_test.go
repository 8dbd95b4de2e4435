package harness_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/process"
)

func init() { fakeagent.Register("panicking-library", panickingLibrary) }

// panicking-library: a program using the library, whose OnEvent panics
// at the native line of the child that setsid-escapee started in a
// session of its own, after printing that child's pid.
func panickingLibrary([]string) int {
	argv, env := fakeagent.Command("setsid-escapee")
	dir, err := os.MkdirTemp("", "panicking-library")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	run, err := harness.Start(context.Background(), harness.Task{
		Agent: "claude", Binary: argv[0], BaseEnv: env, Raw: true, Prompt: "do it", Cwd: dir,
	}, harness.Options{OnEvent: func(ev event.Event) {
		if n, ok := ev.Body.(*event.Native); ok && gjson.GetBytes(n.Line, "subtype").String() == "fake_child" {
			fmt.Println(gjson.GetBytes(n.Line, "pid").Int())
			panic("a bug in OnEvent")
		}
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, _ = run.Wait()
	return 0
}

// TestPanickingOnEventEndsTheRun: a program whose OnEvent panics dies of
// it, and the process its agent started in a session of its own goes
// first (the process package's TestPanicInCallbackEndsTheRuns has each
// containment and several runs).
func TestPanickingOnEventEndsTheRun(t *testing.T) {
	t.Parallel()
	requirePanicEndsRuns(t, "panicking-library", "panic: a bug in OnEvent", "the agent's child outlived the program's panic")
}

// requirePanicEndsRuns runs the fake program fake, which prints the pid
// of a run's escapee and panics with panicked: it must die of the panic
// (exit 2) with the escapee gone first (why, if not).
func requirePanicEndsRuns(t *testing.T, fake, panicked, why string) {
	t.Helper()
	argv, env := fakeagent.Command(fake)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	escapee, perr := strconv.Atoi(string(bytes.TrimSpace(out)))
	require.NoError(t, perr, "%s\n%s", out, stderr.Bytes())
	start := procStart(escapee)
	t.Cleanup(func() {
		if start != "" && procStart(escapee) == start {
			_ = syscall.Kill(escapee, syscall.SIGKILL)
		}
	})
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit) && exit.ExitCode() == 2, "%v\n%s", err, stderr.Bytes())
	require.Contains(t, stderr.String(), panicked)
	require.Eventually(t, func() bool { return !process.Alive(escapee) }, 5*time.Second, time.Millisecond, why)
}

// procStart is the start time of pid (field 22 of its stat), "" if none:
// it tells the process from another that reused its pid.
func procStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	if i := bytes.LastIndexByte(b, ')'); i >= 0 {
		if f := bytes.Fields(b[i+1:]); len(f) > 19 {
			return string(f[19])
		}
	}
	return ""
}
