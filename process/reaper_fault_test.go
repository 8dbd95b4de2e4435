//go:build linux

package process

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/internal/fakeagent"
)

func init() {
	fakeagent.Register("exit-on-usr1", exitOnUSR1)
	fakeagent.Register("pty-reopen", ptyReopen)
	fakeagent.Register("deaf-stdout-holder", deafStdoutHolder)
	fakeagent.Register("deaf-holder", deafHolder)
}

// deaf-stdout-holder: an init line, then a child in its group that holds
// its stdout and is deaf to SIGINT and SIGTERM (deaf-holder); it hangs.
func deafStdoutHolder([]string) int {
	fakeagent.Line(`{"type":"system","subtype":"init","seq":1}`)
	argv, env := fakeagent.Command("deaf-holder")
	c := exec.Command(argv[0], argv[1:]...)
	c.Env, c.Stdout = env, os.Stdout
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "deaf-stdout-holder:", err)
		return 3
	}
	for {
		time.Sleep(time.Hour)
	}
}

// deaf-holder: deaf to SIGINT and SIGTERM, then says so (holder_ready)
// and sleeps.
func deafHolder([]string) int {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
	fakeagent.Line(`{"type":"system","subtype":"holder_ready","seq":2}`)
	for {
		time.Sleep(time.Hour)
	}
}

// exit-on-usr1: an init line, then exits 0 at SIGUSR1.
func exitOnUSR1([]string) int {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	fakeagent.Line(`{"type":"system","subtype":"init","seq":1}`)
	<-c
	return 0
}

// pty-reopen: an init line, then it closes its terminal (stdin and
// stdout), and a moment later opens /dev/tty again and prints its result
// there: `exec 0<&- 1>&-; sleep 0.3; exec 1>/dev/tty; echo …`.
func ptyReopen([]string) int {
	fakeagent.Line(`{"type":"system","subtype":"init","seq":1}`)
	_ = syscall.Close(0)
	_ = syscall.Close(1)
	time.Sleep(300 * time.Millisecond) // the terminal has no descriptor open meanwhile
	fd, err := syscall.Open("/dev/tty", syscall.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pty-reopen:", err)
		return 3
	}
	_, _ = syscall.Write(fd, []byte(`{"type":"result","subtype":"success","seq":2}`+"\n"))
	return 0
}

// waitWithin waits for the run at most d after its spawn, so that a run
// that hangs fails the test there (r.wait allows a minute more), then
// checks it as r.wait does.
func (r *run) waitWithin(t *testing.T, d time.Duration) Outcome {
	t.Helper()
	select {
	case <-r.p.done:
	case <-time.After(time.Until(r.p.start.Add(d))):
		t.Fatalf("run not over %s after its spawn: it hangs", d)
	}
	return r.wait(t, runBound)
}

// stopReaper stops the run's reaper (SIGSTOP, as `pkill -STOP -f` of the
// agent's command line does), and returns once it is stopped: a reaper
// still running after the kill (its threads stop one by one) may report
// what the test does next.
func stopReaper(t *testing.T, r *run) {
	t.Helper()
	require.NoError(t, unix.Kill(r.p.rp.pid, unix.SIGSTOP))
	require.Eventually(t, func() bool {
		st, ok := readStat(r.p.rp.pid)
		return ok && st.state == 'T'
	}, runBound, time.Millisecond, "the reaper never stopped")
}

// resumeIfRunning resumes pid, a process the test stopped, if its run is
// not over (a test that failed): its pid is not the run's any more then.
func resumeIfRunning(r *run, pid int) {
	select {
	case <-r.p.done:
	default:
		_ = unix.Kill(pid, unix.SIGCONT)
	}
}

// TestReaperStopped: a run whose reaper is stopped (SIGSTOP; `pkill -STOP
// -f` of the agent's command line reaches it) still ends. Stopped, the
// reaper reported nothing: not the agent's death at an interrupt, not its
// exit, and the run waited for it forever (Ctrl-C, SIGTERM and the
// watchdogs included). Its harness now resumes it at every step of the
// escalation, and when the agent's pipes close.
func TestReaperStopped(t *testing.T) {
	t.Parallel()
	t.Run("interrupt", func(t *testing.T) {
		t.Parallel()
		// The grace is a minute: only SIGINT is sent within the bound.
		r := startFake(t, t.Context(), "hang-after-output", nil, Options{KillGrace: time.Minute, noCgroup: true},
			onLine(`"still thinking"`, func(r *run) { stopReaper(t, r); r.p.Interrupt() }), "")
		require.NotNil(t, r.p.rp)
		t.Cleanup(func() { resumeIfRunning(r, r.p.rp.pid) })
		o := r.waitWithin(t, runBound)
		require.ErrorIs(t, o.Reason, ErrInterrupted)
		require.Equal(t, "SIGINT", o.KillSignal)
		require.Equal(t, "SIGINT", o.Signal, "the agent's end, as its resumed reaper reported it")
	})
	t.Run("interrupt-pipes-held", func(t *testing.T) {
		t.Parallel()
		// The agent dies of the SIGINT, its pipes stay open (a child deaf
		// to it holds them): only the reaper can tell its end.
		r := startFake(t, t.Context(), "deaf-stdout-holder", nil, Options{KillGrace: time.Minute, noCgroup: true},
			onLine(`"holder_ready"`, func(r *run) { stopReaper(t, r); r.p.Interrupt() }), "")
		require.NotNil(t, r.p.rp)
		t.Cleanup(func() { resumeIfRunning(r, r.p.rp.pid) })
		select {
		case <-r.p.exited:
		case <-time.After(runBound):
			t.Fatal("the agent's end was never known: its reaper stayed stopped")
		}
		r.p.Kill() // the second Ctrl-C, for the holder
		o := r.waitWithin(t, runBound)
		require.ErrorIs(t, o.Reason, ErrInterrupted)
		require.Equal(t, "SIGINT", o.Signal, "the agent's end, as its resumed reaper reported it")
	})
	t.Run("linger", func(t *testing.T) {
		t.Parallel()
		// A finished agent that lingers: the linger's SIGTERM.
		r := startFake(t, t.Context(), "result-then-linger", nil,
			Options{Idle: time.Minute, Linger: 50 * time.Millisecond, KillGrace: time.Minute, noCgroup: true},
			onLine(`"type":"result"`, func(r *run) { stopReaper(t, r); r.p.AgentDone() }), "")
		require.NotNil(t, r.p.rp)
		t.Cleanup(func() { resumeIfRunning(r, r.p.rp.pid) })
		o := r.waitWithin(t, runBound)
		require.ErrorIs(t, o.Reason, ErrLingered)
		require.Equal(t, "SIGTERM", o.Signal)
		require.Len(t, r.warningsOf(event.WarnLingeredAfterResult), 1)
	})
	t.Run("agent-exits", func(t *testing.T) {
		t.Parallel()
		r := startFake(t, t.Context(), "exit-on-usr1", nil, Options{KillGrace: time.Minute, noCgroup: true},
			onLine(`"init"`, func(r *run) { stopReaper(t, r); require.NoError(t, unix.Kill(r.p.pid, unix.SIGUSR1)) }), "")
		require.NotNil(t, r.p.rp)
		t.Cleanup(func() { resumeIfRunning(r, r.p.rp.pid) })
		o := r.waitWithin(t, runBound)
		require.NoError(t, o.Reason)
		require.True(t, o.Exited)
		require.Equal(t, 0, o.ExitCode)
		require.False(t, o.Killed)
	})
}

// TestReaperFrozen: a run whose reaper does not answer even once resumed
// (frozen here, by the cgroup freezer; traced, hung) still ends when its
// agent is killed, and so does everything the agent started, a daemon with
// an emptied environment in a session of its own included: its harness
// kills the reaper's tree, then the reaper. Before, the kill stage only
// asked the reaper (a byte on its control pipe, never read) and the run
// never ended.
func TestReaperFrozen(t *testing.T) {
	t.Parallel()
	if !cgroupsUsable() {
		t.Skip("no writable cgroup v2 here to freeze the reaper in")
	}
	freezer := filepath.Join(cgroupBase, "harness-test-freeze-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	require.NoError(t, os.Mkdir(freezer, 0o755))
	t.Cleanup(func() { _ = os.Remove(freezer) }) // last: once the reaper is gone
	r := startFake(t, t.Context(), "env-i-setsid-daemon", []string{"hang"},
		Options{Idle: time.Minute, KillGrace: 100 * time.Millisecond, noCgroup: true}, nil, `"result"`)
	require.NotNil(t, r.p.rp)
	require.Eventually(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return len(r.pids) == 1 },
		runBound, time.Millisecond, "the daemon was never announced")
	daemon := r.pids[0]
	if st, ok := readStat(daemon); ok { // whatever happens, the test leaves no daemon behind
		t.Cleanup(func() { signalProc(daemon, st.start, syscall.SIGKILL); reapIfOurs(daemon) })
	}
	reaper := r.p.rp.pid
	require.NoError(t, os.WriteFile(filepath.Join(freezer, "cgroup.procs"), []byte(strconv.Itoa(reaper)), 0))
	require.NoError(t, os.WriteFile(filepath.Join(freezer, "cgroup.freeze"), []byte("1"), 0))
	t.Cleanup(func() { _ = os.WriteFile(filepath.Join(freezer, "cgroup.freeze"), []byte("0"), 0) })
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(freezer, "cgroup.events"))
		return strings.Contains(string(b), "frozen 1")
	}, runBound, time.Millisecond, "the reaper was never frozen")
	r.p.Kill() // the second Ctrl-C
	o := r.waitWithin(t, runBound)
	require.ErrorIs(t, o.Reason, ErrInterrupted)
	require.Equal(t, "SIGKILL", o.Signal)
	require.GreaterOrEqual(t, o.Stragglers, 1, "the daemon was killed one by one")
	require.False(t, Alive(reaper), "the frozen reaper outlived the run")
}

// TestReaperKilledTagged: a run whose reaper is SIGKILLed (`pkill -9 -f`
// of the agent's command line reaches it, and the agent) leaves nothing
// behind either: the reaper's orphans come to us, and the one that
// emptied its environment in a session of its own, which nothing but
// the run's tag (RLIMIT_LOCKS) names then, lived on. A child of ours that
// is not the run's (the caller's own) is left alone.
func TestReaperKilledTagged(t *testing.T) {
	t.Parallel()
	r := startFake(t, t.Context(), "env-i-setsid-daemon", []string{"hang"},
		Options{Idle: time.Minute, KillGrace: 100 * time.Millisecond, noCgroup: true}, nil, `"result"`)
	require.NotNil(t, r.p.rp)
	require.Eventually(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return len(r.pids) == 1 },
		runBound, time.Millisecond, "the daemon was never announced")
	daemon := r.pids[0]
	if st, ok := readStat(daemon); ok {
		t.Cleanup(func() { signalProc(daemon, st.start, syscall.SIGKILL); reapIfOurs(daemon) })
	}
	own := exec.Command("sleep", "60")
	require.NoError(t, own.Start())
	t.Cleanup(func() { _ = own.Process.Kill(); _ = own.Wait() })
	require.NoError(t, unix.Kill(r.p.rp.pid, unix.SIGKILL))
	require.NoError(t, unix.Kill(r.p.pid, unix.SIGKILL))
	o := r.waitWithin(t, runBound) // requireNoneAlive: the daemon too
	require.Equal(t, "SIGKILL", o.Signal)
	require.GreaterOrEqual(t, o.Stragglers, 1, "the daemon was killed one by one")
	require.True(t, Alive(own.Process.Pid), "a child of ours that is not the run's was killed")
}

// TestPTYReopen: an agent on a terminal that closes it and opens /dev/tty
// again a moment later (a CLI that reopens its terminal for its own
// output) is read to its end. Reading the terminal failed with EIO while
// no descriptor of it was open, and that was taken for the end of the
// output: what the agent printed after was lost.
func TestPTYReopen(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"cgroup", "reaper", "walks"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			if mode == "cgroup" && !cgroupsUsable() {
				t.Skip("runs get no cgroup here")
			}
			r := startFake(t, t.Context(), "pty-reopen", nil,
				Options{PTY: true, KillGrace: time.Second, noCgroup: mode != "cgroup", noReaper: mode == "walks"}, nil, "")
			require.Equal(t, mode == "reaper", r.p.rp != nil)
			o := r.waitWithin(t, runBound)
			require.NoError(t, o.Reason)
			require.Equal(t, 0, o.ExitCode)
			r.requireSeqs(t, 2)
		})
	}
}

// TestSpawnErrorNames: a failed spawn names the agent's executable, and,
// when it is a script whose #! interpreter does not exist, that
// interpreter, or an ELF binary whose dynamic loader does not, that
// loader: "spawn failed: no such file or directory" named neither
// (through a reaper, exec's own message named the harness's binary).
func TestSpawnErrorNames(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"", "-reaper", "-walks"} {
		t.Run("missing-interpreter"+mode, func(t *testing.T) {
			t.Parallel()
			script := filepath.Join(t.TempDir(), "agent")
			require.NoError(t, execfile.Write(script, []byte("#! /nonexistent/interp -x\necho hi\n"), 0o755))
			_, err := Start(t.Context(), Options{Argv: []string{script}, noCgroup: mode != "", noReaper: mode == "-walks"})
			require.ErrorIs(t, err, ErrSpawn)
			require.ErrorIs(t, err, syscall.ENOENT)
			require.Equal(t, "process: spawn failed: "+script+": its #! interpreter /nonexistent/interp does not exist: no such file or directory", err.Error())
		})
		t.Run("missing-loader"+mode, func(t *testing.T) {
			t.Parallel()
			bin, loader := withMissingLoader(t, t.TempDir())
			_, err := Start(t.Context(), Options{Argv: []string{bin}, noCgroup: mode != "", noReaper: mode == "-walks"})
			require.ErrorIs(t, err, ErrSpawn)
			require.ErrorIs(t, err, syscall.ENOENT)
			require.Equal(t, "process: spawn failed: "+bin+": its dynamic loader (ELF interpreter) "+loader+" does not exist: no such file or directory", err.Error())
		})
		t.Run("exec-format-error"+mode, func(t *testing.T) {
			t.Parallel()
			bad := filepath.Join(t.TempDir(), "agent")
			require.NoError(t, execfile.Write(bad, []byte("\x00\x01\x02garbage"), 0o755))
			_, err := Start(t.Context(), Options{Argv: []string{bad}, noCgroup: mode != "", noReaper: mode == "-walks"})
			require.ErrorIs(t, err, syscall.ENOEXEC)
			require.Equal(t, "process: spawn failed: "+bad+": exec format error", err.Error())
		})
	}
}

// TestStoppedAgentInterrupted: an agent that is stopped (SIGSTOP; `pkill
// -STOP -f` of its command line, which stops its reaper too) is
// interrupted at the first Ctrl-C: the SIGINT is followed by a SIGCONT.
// Stopped, it acted on the SIGINT only once the SIGKILL came, a grace
// later.
func TestStoppedAgentInterrupted(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"cgroup", "reaper", "walks"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			if mode == "cgroup" && !cgroupsUsable() {
				t.Skip("runs get no cgroup here")
			}
			stop := func(t *testing.T, pid int) {
				require.NoError(t, unix.Kill(pid, unix.SIGSTOP))
				require.Eventually(t, func() bool {
					st, ok := readStat(pid)
					return ok && st.state == 'T'
				}, runBound, time.Millisecond, "process %d never stopped", pid)
			}
			r := startFake(t, t.Context(), "hang-after-output", nil,
				Options{KillGrace: time.Minute, noCgroup: mode != "cgroup", noReaper: mode == "walks"},
				onLine(`"still thinking"`, func(r *run) {
					stop(t, r.p.pid)
					if r.p.rp != nil {
						stop(t, r.p.rp.pid)
					}
					r.p.Interrupt()
				}), "")
			require.Equal(t, mode == "reaper", r.p.rp != nil)
			t.Cleanup(func() {
				resumeIfRunning(r, r.p.pid)
				if r.p.rp != nil {
					resumeIfRunning(r, r.p.rp.pid)
				}
			})
			o := r.waitWithin(t, runBound)
			require.ErrorIs(t, o.Reason, ErrInterrupted)
			require.Equal(t, "SIGINT", o.KillSignal)
			require.Equal(t, "SIGINT", o.Signal)
		})
	}
}
