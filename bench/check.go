package bench

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/process"
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

// runCheck runs command with sh -c in dir, supervised as an agent is
// (process): a timeout or a cancellation ends it (SIGTERM, then SIGKILL
// after 2 s; a cancellation sends SIGINT first), and once it exited,
// everything it started is killed, even what left its process group
// (setsid, a double fork): its run's cgroup or reaper holds them all.
// Its exit status is the verdict. Its environment is harness's own but
// harness's secrets (config.AgentEnviron), as an agent's: a check never
// holds the MCP token.
func runCheck(ctx context.Context, command, dir string, timeout time.Duration) *CheckResult {
	return runCheckEnv(ctx, command, dir, timeout, nil)
}

// runCheckEnv is runCheck with env added to the command's environment.
func runCheckEnv(ctx context.Context, command, dir string, timeout time.Duration, env []string) *CheckResult {
	return runCheckIn(ctx, command, dir, timeout, slices.Concat(config.AgentEnviron(os.Environ()), env))
}

// runCheckIn is runCheck with env, whole, as the command's environment.
func runCheckIn(ctx context.Context, command, dir string, timeout time.Duration, env []string) *CheckResult {
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	r := &CheckResult{Command: command, ExitCode: -1}
	// sh is the host's, from harness's own PATH: env may set a PATH for
	// another root (a task's verifier env, which podman exec passes on).
	sh := "sh"
	if p, err := exec.LookPath(sh); err == nil {
		sh = p
	}
	start := time.Now()
	// Its stdout goes to its stderr, whose tail process keeps byte for
	// byte (stdout it reads as lines): the output as it was interleaved.
	p, err := process.Start(ctx, process.Options{Argv: []string{sh, "-c", "exec 1>&2; " + command},
		Env: env, Dir: dir, Hard: timeout, KillGrace: 2 * time.Second})
	if err != nil {
		r.Error = err.Error()
		if ctx.Err() != nil {
			r.Error = checkCancelled
		}
		return r
	}
	o := p.Wait()
	r.DurationMS = time.Since(start).Milliseconds()
	r.Output, r.OutputTruncated = string(o.StderrTail), o.StderrBytes > int64(len(o.StderrTail))
	if n := len(r.Output); n > checkOutputMax {
		r.Output, r.OutputTruncated = r.Output[n-checkOutputMax:], true
	}
	switch {
	case errors.Is(o.Reason, process.ErrHardTimeout):
		r.TimedOut, r.Error = true, "the check exceeded its "+timeout.String()+" limit"
	case ctx.Err() != nil:
		r.Error = checkCancelled
	case o.Reason != nil:
		r.Error = o.Reason.Error()
	case !o.Exited:
		r.Error = "the check's exit status was lost"
	default:
		// It exited by itself; what it left holding its output open was
		// given 2 s, then killed: the exit is the verdict.
		r.ExitCode, r.Passed = o.ExitCode, o.ExitCode == 0
	}
	return r
}
