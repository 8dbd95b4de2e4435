//go:build linux

package process

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/fakeagent"
)

func init() { fakeagent.Register("panicking-harness", panickingHarness) }

// panicking-harness MODE: a harness in a fake that supervises two runs of
// setsid-escapee, each in a cgroup of the run's own (MODE "cgroup": the
// fake first moves into a cgroup of its own, which the test removes),
// through the run's reaper ("reaper") or by walks alone ("walks"). Once
// the first has started its escapee, the second's OnStdout announces the
// second's agent, escapee and cgroup, and the first's escapee, then
// panics.
func panickingHarness(args []string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "panicking-harness:", err); return 1 }
	mode := args[0]
	o := Options{noCgroup: mode != "cgroup", noReaper: mode == "walks"}
	own := ""
	if mode == "cgroup" {
		base, _ := findCgroupBase()
		own = filepath.Join(base, "harness-test-"+strconv.Itoa(os.Getpid()))
		if err := os.Mkdir(own, 0o755); err != nil {
			return fail(err)
		}
		if err := os.WriteFile(filepath.Join(own, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
			return fail(err)
		}
	}
	o.Argv, o.Env = fakeagent.Command("setsid-escapee")
	quiet, other := o, make(chan int, 1)
	quiet.OnStdout = func(line []byte, _ int64) {
		if m := pidRe.FindSubmatch(line); m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			other <- n
		}
	}
	if _, err := Start(context.Background(), quiet); err != nil {
		return fail(err)
	}
	otherEscapee := <-other
	started := make(chan *Proc, 1)
	o.OnStdout = func(line []byte, _ int64) {
		m := pidRe.FindSubmatch(line)
		if m == nil {
			return
		}
		p := <-started
		cg := ""
		if p.cg != nil {
			cg = p.cg.dir
		}
		if (mode == "cgroup") != (p.cg != nil) || (mode == "reaper") != (p.rp != nil) {
			fmt.Fprintln(os.Stderr, "panicking-harness: the run is not contained as", mode)
			os.Exit(1)
		}
		escapee, _ := strconv.Atoi(string(m[1]))
		b, _ := json.Marshal(map[string]any{"agent": p.PID(), "escapee": escapee, "other": otherEscapee, "cgroup": cg, "base": own})
		fmt.Println(string(b))
		panic("a bug in the caller's callback")
	}
	p, err := Start(context.Background(), o)
	if err != nil {
		return fail(err)
	}
	started <- p
	p.Wait()
	return 0
}

// TestPanicInCallbackEndsTheRuns: a callback of the caller's that panics
// on a goroutine of ours takes the program down, as any panic does, but
// the processes of its runs go first, this run's and the others'. Without
// that the agents die with the program (Pdeathsig) and the tools they
// started in sessions of their own live on.
func TestPanicInCallbackEndsTheRuns(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"cgroup", "reaper", "walks"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			if mode == "cgroup" && !cgroupsUsable() {
				t.Skip("runs get no cgroup here")
			}
			argv, env := fakeagent.Command("panicking-harness", mode)
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = env
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			var got struct {
				Agent, Escapee, Other int
				Cgroup, Base          string
			}
			require.NoError(t, json.Unmarshal(out, &got), "%s\n%s", out, stderr.Bytes())
			t.Cleanup(func() { // whatever the outcome, nothing left
				for _, pid := range []int{got.Escapee, got.Other} {
					if st, ok := readStat(pid); ok && !st.dead() {
						signalProc(pid, st.start, syscall.SIGKILL)
					}
				}
				if got.Base == "" {
					return
				}
				for deadline := time.Now().Add(runBound); populated(got.Base) && time.Now().Before(deadline); {
					killSubtree(got.Base)
					time.Sleep(time.Millisecond) // waiting on the kernel to finish the kills
				}
				if err := rmdirTree(got.Base); err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Error(err)
				}
			})
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "%s", stderr.Bytes())
			require.Equal(t, 2, exit.ExitCode(), "%s", stderr.Bytes())
			require.Contains(t, stderr.String(), "panic: a bug in the caller's callback")
			require.Contains(t, stderr.String(), "process.panickingHarness.func", "the trace is the callback's")

			// Killed before the program died: dead within moments, not when
			// a later harness or init gets to them (never, for the escapee).
			for _, pid := range []int{got.Escapee, got.Agent, got.Other} {
				require.Eventually(t, func() bool { reapIfOurs(pid); return !Alive(pid) },
					5*time.Second, time.Millisecond, "process %d of the run outlived its harness's panic", pid)
			}
			if got.Cgroup != "" {
				require.NoDirExists(t, got.Cgroup)
			}
		})
	}
}
