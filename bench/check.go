package bench

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// checkOutputMax is how much of a check's output the report keeps: the
// last bytes, where test runners print their verdict.
const checkOutputMax = 16 << 10

// CheckResult is the verdict of a run's verifier.
type CheckResult struct {
	Command         string `json:"command"`
	Passed          bool   `json:"passed"`
	ExitCode        int    `json:"exit_code"` // -1 when it did not exit (killed, not started)
	TimedOut        bool   `json:"timed_out,omitempty"`
	DurationMS      int64  `json:"duration_ms"`
	Output          string `json:"output"` // stdout and stderr interleaved, the tail when cut
	OutputTruncated bool   `json:"output_truncated,omitempty"`
	Error           string `json:"error,omitempty"` // could not run, timed out, cancelled (checkCancelled)
	// A Harbor task's verifier (harbor_run.go) gives a reward: Reward is
	// the score (0..1; passed when 1), Rewards every number of
	// reward.json, Outcome how the verifier ended (Outcome* values) and
	// Detail why there is no reward.
	Reward  *float64           `json:"reward,omitempty"`
	Rewards map[string]float64 `json:"rewards,omitempty"`
	Outcome string             `json:"outcome,omitempty"`
	Detail  string             `json:"detail,omitempty"`
}

// checkCancelled is the Error of a check the bench's cancel interrupted
// or kept from running: no verdict, and its run is not recorded (final).
const checkCancelled = "cancelled"

// cancelled reports whether c is no verdict because the bench was
// cancelled.
func (c *CheckResult) cancelled() bool { return c != nil && c.Error == checkCancelled }

// runCheck runs command with sh -c in dir, in its own process group so a
// timeout or a cancellation ends everything it started (SIGTERM, then
// SIGKILL after 2 s). Its exit status is the verdict.
func runCheck(ctx context.Context, command, dir string, timeout time.Duration) *CheckResult {
	return runCheckEnv(ctx, command, dir, timeout, nil)
}

// runCheckEnv is runCheck with env added to the command's environment.
func runCheckEnv(ctx context.Context, command, dir string, timeout time.Duration, env []string) *CheckResult {
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, "sh", "-c", command)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return signalGroup(cmd, syscall.SIGTERM) }
	cmd.WaitDelay = 2 * time.Second
	out := &tailBuffer{max: checkOutputMax}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	err := cmd.Run()
	// The shell may be gone while what it started holds on: end the group.
	_ = signalGroup(cmd, syscall.SIGKILL)
	r := &CheckResult{Command: command, DurationMS: time.Since(start).Milliseconds(), ExitCode: -1}
	r.Output, r.OutputTruncated = out.String()
	var ee *exec.ExitError
	switch {
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		r.TimedOut, r.Error = true, "the check exceeded its "+timeout.String()+" limit"
	case ctx.Err() != nil:
		r.Error = checkCancelled
	case err == nil:
		r.ExitCode, r.Passed = 0, true
	case errors.As(err, &ee):
		r.ExitCode = ee.ExitCode()
	case errors.Is(err, exec.ErrWaitDelay):
		// It exited 0, and what it left in the background held its
		// output open past WaitDelay: the exit is the verdict, and what
		// was left is killed with the group above.
		r.ExitCode = cmd.ProcessState.ExitCode()
		r.Passed = r.ExitCode == 0
	default:
		r.Error = err.Error()
	}
	return r
}

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, sig)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     bytes.Buffer
	dropped bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
		t.dropped = true
		if t.buf.Cap() > 4*t.max { // keep memory flat under a flood
			b := bytes.Clone(t.buf.Bytes())
			t.buf.Reset()
			t.buf.Write(b)
		}
	}
	return len(p), nil
}

func (t *tailBuffer) String() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String(), t.dropped
}
