//go:build linux

package process

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// reaperEnv, in the environment of a re-executed harness binary, makes
// MaybeReap run the per-run reaper instead of returning. Its value is
// "CTTY:TAG:MARKER:PATH": the fd (0 or 1) that becomes the agent's
// controlling terminal in a new session (-1: a new process group), the
// run's tag (see runTag; 0: none), the run's marker to add to the agent's
// environment, and the agent's executable.
const reaperEnv = "HARNESS_PROCESS_REAPER"

// The run's tag is the soft RLIMIT_LOCKS of every process of a run with a
// reaper: the reaper sets it in the agent (it forks it with it), and every
// descendant inherits it, across fork and exec, whatever it does to its
// session, group, parent or environment (env -i). Linux has not enforced
// RLIMIT_LOCKS since 2.4.25, so the value changes nothing for the agent;
// only a process that sets that limit itself sheds it. It is how the
// harness tells the run's processes among its own children once the
// reaper is dead (killed from outside, or by its harness when it stopped
// answering): they are then re-parented to the harness, a child
// subreaper, where nothing else names the ones that emptied their
// environment, and a caller's own children must be left alone. A tag is
// random (tagBase plus 60 random bits): no two runs share one.
const tagBase = uint64(1) << 62

// The reaper's two pipes, inherited as these fds: it reports on the first
// and reads requests from the second.
const (
	reaperStatusFD  = 3
	reaperControlFD = 4
)

var (
	reaperOnce sync.Once
	reaperExe  string // the binary to re-execute as the reaper; "" when the hook is not installed
)

// MaybeReap installs the per-run reaper hook. A binary that runs agents
// calls it first thing in main (test binaries in TestMain, before anything
// else that re-executes the binary): in a process started as a run's
// reaper it runs the reaper and exits; otherwise it returns at once, and
// from then on every Start of this process puts a reaper of its own
// between the harness and the agent (see the package doc). Without the
// hook, runs are supervised as before: by /proc walks and the environment
// marker, which a process that empties its environment can escape.
func MaybeReap() {
	if spec, ok := os.LookupEnv(reaperEnv); ok {
		os.Exit(runReaper(spec))
	}
	reaperOnce.Do(func() {
		if exe, err := os.Executable(); err == nil {
			if _, err := os.Stat("/proc/self/exe"); err == nil {
				exe = "/proc/self/exe" // still there if the binary is replaced mid-run
			}
			reaperExe = exe
		}
	})
}

// runReaper is the reaper's main. It is a child subreaper: every orphan
// of the agent's tree is re-parented to it, so every process of this run
// that is still alive descends from it, and no process of another run
// does. It starts the agent, reports "pid N", then "exit STATUS" (the raw
// wait status) when the agent is reaped, reaps every orphan meanwhile,
// and on request kills its whole tree: a byte on the control pipe kills
// it now; EOF kills it and exits once it has no child left, after
// reporting "done N" (the processes other than the agent it killed).
func runReaper(spec string) int {
	// Pdeathsig of the agent is tied to the thread that forks it: that
	// thread must live as long as we do.
	runtime.LockOSThread()
	// Only our harness ends us (the control pipe, or Pdeathsig when it
	// dies): a signal meant for the agent (pkill -f of its command line,
	// which is ours too) would take the agent with us, and let what it
	// started without the run's marker live on. Caught, not ignored: the
	// agent, forked and exec'd, gets the default actions back.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	status := os.NewFile(reaperStatusFD, "reaper-status")
	control := os.NewFile(reaperControlFD, "reaper-control")
	if status == nil || control == nil {
		return 125
	}
	syscall.CloseOnExec(reaperStatusFD)
	syscall.CloseOnExec(reaperControlFD)
	report := func(format string, args ...any) { _, _ = fmt.Fprintf(status, format+"\n", args...) }
	ctty, rest, ok1 := strings.Cut(spec, ":")
	tagS, rest, ok2 := strings.Cut(rest, ":")
	marker, path, ok3 := strings.Cut(rest, ":")
	n, err := strconv.Atoi(ctty)
	tag, terr := strconv.ParseUint(tagS, 10, 64)
	if !ok1 || !ok2 || !ok3 || err != nil || terr != nil || !strings.Contains(marker, "=") {
		report("err bad reaper spec %q", spec)
		return 125
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		report("err subreaper: %v", err)
		return 125
	}
	sys := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if n >= 0 {
		sys = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: n, Pdeathsig: syscall.SIGKILL}
	}
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, reaperEnv+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, marker)
	// The agent is forked with the run's tag as its soft RLIMIT_LOCKS, and
	// we take ours back: we are no process of the run. Nothing else forks
	// here meanwhile. A hard limit below the tag (never seen) leaves the
	// run untagged.
	var lim unix.Rlimit
	tagged := tag != 0 && unix.Prlimit(0, unix.RLIMIT_LOCKS, nil, &lim) == nil && tag <= lim.Max &&
		unix.Prlimit(0, unix.RLIMIT_LOCKS, &unix.Rlimit{Cur: tag, Max: lim.Max}, nil) == nil
	agent, err := syscall.ForkExec(path, os.Args, &syscall.ProcAttr{Env: env, Files: []uintptr{0, 1, 2}, Sys: sys})
	if tagged {
		_ = unix.Prlimit(0, unix.RLIMIT_LOCKS, &lim, nil)
	}
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			report("errno %d", uintptr(errno))
		} else {
			report("err %v", err)
		}
		return 126
	}
	// Our copies of the agent's stdio would keep its pipes open past the
	// agent's tree, and a terminal from hanging up.
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		for fd := range 3 {
			_ = unix.Dup2(int(null.Fd()), fd)
		}
		_ = null.Close()
	}
	report("pid %d", agent)

	var exiting atomic.Bool
	exitReq, killDone := make(chan struct{}), make(chan struct{})
	var killed sync.Map // pid → start time of the processes we killed
	go func() {
		defer close(killDone)
		r := bufio.NewReader(control)
		for {
			if _, err := r.ReadByte(); err != nil {
				break
			}
			killTree(&killed, time.Now().Add(sweepTimeout))
		}
		exiting.Store(true)
		close(exitReq)
		killTree(&killed, time.Now().Add(sweepTimeout))
	}()
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil { // ECHILD: nothing of the run is left
			if exiting.Load() {
				break
			}
			<-exitReq
			continue // the kill may have raced with a last fork: look again
		}
		if pid == agent {
			report("exit %d", uint32(ws))
		}
	}
	<-killDone // its last kills may be reaped before it recorded them
	count := 0
	killed.Range(func(k, _ any) bool {
		if k.(int) != agent {
			count++
		}
		return true
	})
	report("done %d", count)
	return 0
}

// killTree SIGKILLs every descendant of this process until none is left
// alive or deadline passes. Zombies are left to the reaper's wait loop.
func killTree(killed *sync.Map, deadline time.Time) {
	self := os.Getpid()
	pause := time.Millisecond
	for {
		live := 0
		for _, st := range descendants(self) {
			if st.dead() {
				continue
			}
			live++
			if signalProc(st.pid, st.start, syscall.SIGKILL) {
				killed.Store(st.pid, st.start)
			}
		}
		if live == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(pause) // waiting on the kernel to finish the kills
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// reaperConn is the harness's side of a run's reaper: the child it
// spawned instead of the agent.
type reaperConn struct {
	agentPath string
	marker    string // KEY=VALUE the reaper adds to the agent's environment
	tag       uint64 // the run's tag (tagBase): the soft RLIMIT_LOCKS of its processes
	ctty      int    // the agent's controlling terminal fd, or -1
	pid       int    // the reaper's own pid
	proc      *os.Process
	status    *bufio.Reader
	statusR   *os.File
	control   *os.File
	closeOnce sync.Once
	endOnce   sync.Once
	// reapMu is held while the reaper is reaped, and by end while it
	// walks the reaper's tree: a reaper reaped meanwhile would free its
	// pid, and the walk would be of whoever took it. reaped says it was.
	reapMu sync.Mutex
	reaped bool
	killed int           // processes other than the agent it killed; read after done
	lost   bool          // it died without its last report (killed); read after done
	done   chan struct{} // closed once the reaper is reaped
}

// newTag is a run's tag: tagBase and 60 random bits.
func newTag() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return tagBase | binary.LittleEndian.Uint64(b[:])>>4
}

// runTag reads pid's tag: its soft RLIMIT_LOCKS (0 when it cannot be read:
// gone, or another user's).
func runTag(pid int) uint64 {
	var lim unix.Rlimit
	if unix.Prlimit(pid, unix.RLIMIT_LOCKS, nil, &lim) != nil {
		return 0
	}
	return lim.Cur
}

// prepare makes cmd start the reaper: its environment names the agent, and
// it gets the two pipes. It returns the child's ends, to be closed once
// the reaper is started.
func (r *reaperConn) prepare(cmd *exec.Cmd) ([]*os.File, error) {
	sr, sw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cr, cw, err := os.Pipe()
	if err != nil {
		_ = sr.Close()
		_ = sw.Close()
		return nil, err
	}
	r.statusR, r.status, r.control = sr, bufio.NewReader(sr), cw
	cmd.ExtraFiles = []*os.File{sw, cr} // fds 3 and 4
	cmd.Env = append(cmd.Env, reaperEnv+"="+strconv.Itoa(r.ctty)+":"+strconv.FormatUint(r.tag, 10)+":"+r.marker+":"+r.agentPath)
	return []*os.File{sw, cr}, nil
}

// line reads the reaper's next report, "" once it is gone.
func (r *reaperConn) line() string {
	l, err := r.status.ReadString('\n')
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(l, "\n")
}

// agentPID waits for the reaper to have started the agent.
func (r *reaperConn) agentPID() (int, error) {
	l := r.line()
	if v, ok := strings.CutPrefix(l, "pid "); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n, nil
		}
	}
	if v, ok := strings.CutPrefix(l, "errno "); ok {
		if n, err := strconv.ParseUint(v, 10, 16); err == nil {
			return 0, syscall.Errno(n) // as a direct spawn reports it
		}
	}
	if msg, ok := strings.CutPrefix(l, "err "); ok {
		return 0, errors.New(msg)
	}
	return 0, fmt.Errorf("the run's reaper failed before starting the agent (%q)", l)
}

// agentExit waits for the agent's wait status. A reaper that died before
// reporting it (killed from outside) took the agent with it: its
// Pdeathsig is SIGKILL, and that is what is reported.
func (r *reaperConn) agentExit() (ws syscall.WaitStatus, ok bool) {
	for {
		l := r.line()
		if l == "" {
			return syscall.WaitStatus(syscall.SIGKILL), true // "killed by signal 9"
		}
		if v, found := strings.CutPrefix(l, "exit "); found {
			n, err := strconv.ParseUint(v, 10, 32)
			return syscall.WaitStatus(n), err == nil
		}
	}
}

// wait reads the reaper's last report and reaps it. The run is over
// (done is closed) at the report: nothing of the run is left then, and
// the reaper, no process of the run, is only exiting.
func (r *reaperConn) wait(cmd *exec.Cmd) {
	reported := false
	for l := r.line(); l != ""; l = r.line() {
		if v, ok := strings.CutPrefix(l, "done "); ok && !reported {
			r.killed, _ = strconv.Atoi(v)
			reported = true
			close(r.done)
		}
	}
	r.reapMu.Lock()
	_ = cmd.Wait()
	r.reaped = true
	r.reapMu.Unlock()
	_ = r.statusR.Close()
	if !reported {
		r.lost = true
		close(r.done)
	}
}

// killNow asks the reaper to SIGKILL the whole run at once.
func (r *reaperConn) killNow() { _, _ = r.control.Write([]byte{'k'}) }

// close asks the reaper to kill the whole run and exit.
func (r *reaperConn) close() { r.closeOnce.Do(func() { _ = r.control.Close() }) }

// abandon closes both pipes of a reaper that failed to start the agent.
func (r *reaperConn) abandon() {
	r.close()
	_ = r.statusR.Close()
}

// cont resumes a reaper that was stopped (SIGSTOP: `pkill -STOP -f` of the
// agent's command line reaches it, as it runs with that): stopped, it
// would neither report the agent's end nor kill the run. Its harness
// sends it at every step of the escalation, and when the agent's pipes
// close before its end is reported. A reaper already reaped is not
// signalled (the pidfd of os.Process).
func (r *reaperConn) cont() {
	if r.proc != nil {
		_ = r.proc.Signal(syscall.SIGCONT)
	}
}

// finish closes the reaper and waits for it to be reaped; one that does
// not exit in time is ended by us (end): what is left of the run is then
// ours, re-parented and tagged, for the sweep that follows.
func (r *reaperConn) finish(record func(procStat)) {
	r.close()
	r.cont()
	select {
	case <-r.done:
		return
	case <-time.After(sweepTimeout + time.Second):
	}
	r.end(record)
	<-r.done
}

// end does the job of a reaper that does not answer (stopped again,
// frozen, traced, hung): it SIGKILLs the reaper's tree, until none of it
// is left alive or sweepTimeout passed, handing each process killed to
// record (the sweep reaps their zombies, ours once the reaper is dead),
// and then the reaper itself. While the reaper lives every process of
// the run descends from it (it is their subreaper), so its tree is the
// whole run, whatever they did to their session or environment; once it
// is dead they would be ours, told apart only by their tag. The reaper's
// death ends its reports: the agent's end is then read as SIGKILL (see
// agentExit). Only the first call does anything.
func (r *reaperConn) end(record func(procStat)) {
	r.endOnce.Do(func() {
		r.reapMu.Lock()
		defer r.reapMu.Unlock()
		if r.reaped {
			return
		}
		deadline := time.Now().Add(sweepTimeout)
		pause := time.Millisecond
		for {
			live := 0
			for _, st := range descendants(r.pid) {
				if st.dead() {
					continue
				}
				live++
				if signalProc(st.pid, st.start, syscall.SIGKILL) {
					record(st)
				}
			}
			if live == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(pause) // waiting on the kernel to finish the kills
			pause = min(2*pause, 20*time.Millisecond)
		}
		if r.proc != nil {
			_ = r.proc.Kill()
		}
	})
}
