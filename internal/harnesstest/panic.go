package harnesstest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/process"
)

// RequirePanicEndsRuns runs the fake program fake, which prints the pid
// of a run's escapee (a process in a session of its own) and then
// panics with panicked: it must die of the panic (exit 2) with the
// escapee gone first (why, if not). A panic ends a program; run apart,
// it ends only the fake.
func RequirePanicEndsRuns(t *testing.T, fake, panicked, why string) {
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
