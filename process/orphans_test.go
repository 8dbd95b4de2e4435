//go:build linux

package process

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/procstat"
)

func init() {
	fakeagent.Register("setsid-exits", setsidExits)
	fakeagent.Register("abandoning-harness", abandoningHarness)
}

// setsid-exits [hang]: starts a process that leaves the agent's session
// and exits at once, orphaned by its parent first, as `( setsid cmd & )`
// does (git gc --auto daemonizes so): nothing but its cgroup names it as
// the run's, and no look sees it alive. It is announced once it is dead;
// then the agent prints its result and exits, or with "hang" stays.
func setsidExits(args []string) int {
	out, err := exec.Command("sh", "-c", `( setsid sh -c 'echo $$' </dev/null 2>/dev/null & )`).Output()
	pid, perr := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || perr != nil {
		fmt.Fprintln(os.Stderr, "setsid-exits:", err, perr)
		return 3
	}
	// Polling the kernel: the orphan's exit is nobody's event to wait on.
	for st, ok := readStat(pid); ok && st.state != 'Z'; st, ok = readStat(pid) {
		time.Sleep(time.Millisecond)
	}
	fakeagent.Line(`{"type":"system","subtype":"init","session_id":"s","seq":1}`)
	fakeagent.Line(`{"type":"system","subtype":"fake_child","pid":` + strconv.Itoa(pid) + `,"seq":2}`)
	if len(args) > 0 && args[0] == "hang" {
		for {
			time.Sleep(time.Hour)
		}
	}
	fakeagent.Line(`{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s","seq":3}`)
	return 0
}

// TestOrphanZombiesReaped: a process of a run in a cgroup that left the
// agent's session and exited before any look saw it, re-parented to us (a
// harness that is pid 1 of a container, or a subreaper anyway), is reaped
// at the run's end: three runs of a long-lived harness (mcp, a library
// program) left three zombies for its lifetime. Only the run's own: a
// concurrent run's stays until that run ends, and a child of the caller's
// own program keeps its exit status for the caller's Wait.
func TestOrphanZombiesReaped(t *testing.T) {
	t.Parallel()
	if !cgroupsUsable() {
		t.Skip("runs get no cgroup here")
	}
	subreaperOnce.Do(becomeSubreaper) // as pid 1 of a container, the run's orphans come to us
	self := os.Getpid()
	requireOurZombie := func(pid int) {
		t.Helper()
		require.Eventually(t, func() bool {
			st, ok := readStat(pid)
			return ok && st.state == 'Z' && st.ppid == self
		}, runBound, time.Millisecond, "process %d is not a zombie child of ours", pid)
	}
	own := exec.Command("sh", "-c", "exit 7")
	own.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // as the run's orphan: a session of its own
	require.NoError(t, own.Start())
	requireOurZombie(own.Process.Pid)

	other := startFake(t, t.Context(), "setsid-exits", []string{"hang"}, Options{KillGrace: time.Second}, nil, "")
	require.NotNil(t, other.p.cg)
	var otherOrphan int
	require.Eventually(t, func() bool {
		other.mu.Lock()
		defer other.mu.Unlock()
		if len(other.pids) == 1 {
			otherOrphan = other.pids[0]
		}
		return otherOrphan != 0
	}, runBound, time.Millisecond)
	requireOurZombie(otherOrphan)

	for range 3 {
		r := startFake(t, t.Context(), "setsid-exits", nil, Options{KillGrace: time.Second}, nil, "")
		o := r.wait(t, runBound) // requireNoneAlive: its orphan is not even our zombie
		require.NoError(t, o.Reason)
		require.Len(t, r.pids, 1)
	}
	requireOurZombie(otherOrphan) // not taken from its run
	st, ok := readStat(own.Process.Pid)
	require.True(t, ok && st.state == 'Z', "the caller's own child was reaped by a run")

	other.p.Interrupt()
	o := other.wait(t, runBound) // now it is gone
	require.ErrorIs(t, o.Reason, ErrInterrupted)
	var exit *exec.ExitError
	require.ErrorAs(t, own.Wait(), &exit)
	require.Equal(t, 7, exit.ExitCode(), "the caller's Wait gets its child's status")
}

// abandoning-harness: a harness in a fake, in a cgroup of its own (so
// that a test can look for stale run cgroups there and nowhere else): it
// supervises setsid-escapee, announces its agent, the run's cgroup and the
// escapee, and waits to be killed with SIGKILL.
func abandoningHarness([]string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "abandoning-harness:", err); return 1 }
	base, _ := findCgroupBase()
	own := filepath.Join(base, "harness-test-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(own, 0o755); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(own, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
		return fail(err)
	}
	escapee := make(chan int, 1)
	argv, env := fakeagent.Command("setsid-escapee")
	p, err := Start(context.Background(), Options{Argv: argv, Env: env, OnStdout: func(line []byte, _ int64) {
		if m := pidRe.FindSubmatch(line); m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			escapee <- n
		}
	}})
	if err != nil {
		return fail(err)
	}
	if p.cg == nil {
		return fail(fmt.Errorf("the run has no cgroup"))
	}
	b, _ := json.Marshal(map[string]any{"agent": p.PID(), "cgroup": p.cg.dir, "escapee": <-escapee, "base": own})
	fmt.Println(string(b))
	p.Wait()
	return 0
}

// TestAbandonedCgroupEnded: a harness killed with SIGKILL leaves its run's
// cgroup holding what Pdeathsig did not end (the agent dies; the tools it
// started live on, re-parented). A later harness ends them and removes the
// cgroup, once the harness that made it is provably gone (the lock it held
// went with it): never while it lives, and never a cgroup an earlier
// harness made without the lock (its owner cannot be told gone).
func TestAbandonedCgroupEnded(t *testing.T) {
	t.Parallel()
	if !cgroupsUsable() {
		t.Skip("runs get no cgroup here")
	}
	cmd, line := startReporting(t, "abandoning-harness")
	var got struct {
		Agent, Escapee int
		Cgroup, Base   string
	}
	require.NoError(t, json.Unmarshal(line, &got), "%s", line)
	require.True(t, strings.HasPrefix(got.Cgroup, got.Base+"/harness-run-"), "%s", line)
	t.Cleanup(func() { // whatever the outcome, nothing left
		for deadline := time.Now().Add(runBound); populated(got.Base) && time.Now().Before(deadline); {
			killSubtree(got.Base)
			time.Sleep(time.Millisecond) // waiting on the kernel to finish the kills
		}
		reapIfOurs(got.Escapee)
		require.NoError(t, rmdirTree(got.Base))
	})
	everything := time.Now().Add(time.Hour) // every cgroup is old enough

	removeStaleCgroups(got.Base, everything)
	require.True(t, Alive(got.Escapee), "a live harness's run was ended")
	require.DirExists(t, got.Cgroup)

	legacy := filepath.Join(got.Base, "harness-run-0123456789abcdef01234567")
	require.NoError(t, os.Mkdir(legacy, 0o755))
	fd, err := unix.Open(legacy, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	sleeper := exec.Command("sleep", "300")
	sleeper.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	err = sleeper.Start()
	_ = unix.Close(fd)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.Eventually(t, func() bool { reapIfOurs(got.Agent); return !Alive(got.Agent) },
		runBound, time.Millisecond, "the agent outlived its harness")
	require.True(t, Alive(got.Escapee), "the escapee died with its harness: nothing to test")

	removeStaleCgroups(got.Base, everything)
	require.Eventually(t, func() bool { reapIfOurs(got.Escapee); return !Alive(got.Escapee) },
		runBound, time.Millisecond, "the tool of a killed harness lives on")
	require.NoDirExists(t, got.Cgroup)
	require.True(t, Alive(sleeper.Process.Pid), "an unlocked cgroup was ended")
	require.DirExists(t, legacy)
}

// reapIfOurs reaps pid if it is a zombie child of ours (a subreaper).
func reapIfOurs(pid int) {
	if st, ok := readStat(pid); ok && st.state == 'Z' && st.ppid == os.Getpid() {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
	}
}

// TestReaperOutlivesSignals: a run's reaper is ended by its harness only
// (its control pipe, or Pdeathsig). A SIGTERM, SIGINT, SIGHUP or SIGQUIT
// sent to it (pkill -f of the agent's command line matches it: it runs
// with the agent's argv) killed it, and the agent with it (Pdeathsig),
// and the daemon the agent had started with an emptied environment in a
// session of its own, which nothing else ties to the run, lived on.
func TestReaperOutlivesSignals(t *testing.T) {
	t.Parallel()
	r := startFake(t, t.Context(), "env-i-setsid-daemon", []string{"hang"},
		Options{Idle: time.Minute, KillGrace: 100 * time.Millisecond, noCgroup: true}, nil, `"result"`)
	require.NotNil(t, r.p.rp)
	require.Eventually(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return len(r.pids) == 1 },
		runBound, time.Millisecond, "the daemon was never announced")
	reaper := r.p.cmd.Process.Pid
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT} {
		require.NoError(t, syscall.Kill(reaper, sig))
	}
	r.p.Interrupt()
	o := r.wait(t, runBound) // requireNoneAlive: the daemon too
	require.ErrorIs(t, o.Reason, ErrInterrupted, "the agent died with its reaper")
	require.False(t, Alive(r.pids[0]), "the run's daemon outlived it")
}

// TestWalksFindUnlistedOrphan: run by walks alone, a run's daemon
// (double-forked, re-parented to us) is an orphan of ours known by the
// run's marker, and the children files that list our children skip one
// when a child listed before it is reaped during the read, as another
// run's may be (seen once in CI: the daemon outlived its run). With every
// listing missing it, the end of the run still finds and kills it. Not
// parallel: it replaces listChildren.
func TestWalksFindUnlistedOrphan(t *testing.T) {
	listChildren = func(pid int) ([]int, bool) {
		kids, ok := childrenOf(pid)
		var listed []int
		for _, k := range kids {
			if env, _ := os.ReadFile("/proc/" + strconv.Itoa(k) + "/environ"); !strings.Contains(string(env), "HARNESS_RUN_") {
				listed = append(listed, k)
			}
		}
		return listed, ok
	}
	t.Cleanup(func() { listChildren = childrenOf })
	opts := Options{Idle: time.Minute, KillGrace: 100 * time.Millisecond, noCgroup: true, noReaper: true}
	r := startFake(t, t.Context(), "double-fork-daemon", nil, opts, nil, `"result"`)
	o := r.wait(t, runBound) // and nothing of the run is left
	require.True(t, o.Exited)
	endedLeavingOne(t, r, o)
}

// TestWalksFindOrphanMidExec: in the middle of an exec a process reads,
// for that moment, an empty environment in /proc (its new image's is not
// set up yet), so a run's daemon exec'ing as it was looked at was taken
// for one of the caller's children and not looked at again, and the
// run's end left it alive. With its first looks reading so, the run's end
// still finds and kills it. Not parallel: it replaces readEnviron.
func TestWalksFindOrphanMidExec(t *testing.T) {
	var mu sync.Mutex
	looks := map[string]int{} // by environ file of a process of the run
	readEnviron = func(path string) ([]byte, error) {
		b, err := procstat.ReadFile(path)
		if !bytes.Contains(b, []byte("HARNESS_RUN_")) {
			return b, err
		}
		mu.Lock()
		defer mu.Unlock()
		looks[path]++
		if looks[path] <= 3 {
			return nil, nil
		}
		return b, err
	}
	t.Cleanup(func() { readEnviron = procstat.ReadFile })
	opts := Options{Idle: time.Minute, KillGrace: 100 * time.Millisecond, noCgroup: true, noReaper: true}
	r := startFake(t, t.Context(), "double-fork-daemon", nil, opts, nil, `"result"`)
	o := r.wait(t, runBound) // and nothing of the run is left
	require.True(t, o.Exited)
	endedLeavingOne(t, r, o)
}

// TestListedTwice: a child that one of the two listings skips is listed.
// Not parallel: it replaces listChildren.
func TestListedTwice(t *testing.T) {
	listings := [][]int{{1, 2, 3}, {1, 3, 4}}
	listChildren = func(int) ([]int, bool) {
		l := listings[0]
		listings = listings[1:]
		return l, true
	}
	t.Cleanup(func() { listChildren = childrenOf })
	require.ElementsMatch(t, []int{1, 2, 3, 4}, listedTwice(os.Getpid()))
}

// TestOrphanZombieReapedThoughUnlisted: the run's orphan that exited
// before any look saw it (setsid-exits) is reaped at the run's end though
// every other listing of our children skips it, as the kernel's does when
// a child listed before it is reaped during the read. Not parallel: it
// replaces listChildren.
func TestOrphanZombieReapedThoughUnlisted(t *testing.T) {
	if !cgroupsUsable() {
		t.Skip("runs get no cgroup here")
	}
	subreaperOnce.Do(becomeSubreaper)
	var mu sync.Mutex
	listings := map[int]int{} // by zombie: how many listings could have named it
	listChildren = func(pid int) ([]int, bool) {
		mu.Lock()
		defer mu.Unlock()
		kids, ok := childrenOf(pid)
		var listed []int
		for _, k := range kids {
			if st, found := readStat(k); found && st.state == 'Z' {
				listings[k]++
				if listings[k]%2 == 1 {
					continue
				}
			}
			listed = append(listed, k)
		}
		return listed, ok
	}
	t.Cleanup(func() { listChildren = childrenOf })
	r := startFake(t, t.Context(), "setsid-exits", nil, Options{KillGrace: time.Second}, nil, "")
	o := r.wait(t, runBound) // requireNoneAlive: its orphan is not even our zombie
	require.NoError(t, o.Reason)
	require.Len(t, r.pids, 1)
}
