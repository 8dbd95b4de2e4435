package process

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentharness/harness/event"
)

// Options describes one run. The zero value of every budget turns it off.
type Options struct {
	// Argv[0] is an absolute path, a path relative to Dir, or a name looked
	// up in the PATH of Env (of os.Environ when Env is nil).
	Argv []string
	// Env is the child's complete environment (nil: the harness's own).
	// One variable is added: HARNESS_RUN_<token>=1, unique to the run, so
	// that processes that escaped the tree can still be told apart from
	// those of other runs (see Proc).
	Env []string
	// Dir must exist and be a directory; "" is the harness's directory.
	Dir string
	// Stdin is written to the child and then closed; "" gives /dev/null
	// (unless KeepStdin).
	Stdin string
	// KeepStdin gives the child a stdin pipe that stays open for the
	// caller to write to (Proc.Stdin) until it closes it or the run ends:
	// the transport of an agent that speaks a session protocol over
	// stdio. Stdin must then be "".
	KeepStdin bool
	// PTY runs the child with a pseudo-terminal as stdout (and as stdin
	// when Stdin is "" and KeepStdin is off), in its own session, with a fixed 4096-column
	// window; ANSI escapes and '\r' are removed from each line before
	// OnStdout. stderr stays a separate pipe so diagnostics never land in
	// the JSON stream.
	PTY bool
	// MaxLine caps a stdout line (0: linescan.DefaultMax, 16 MiB); the rest
	// is dropped and reported through OnStdout's dropped.
	MaxLine int

	// Idle ends the run after this long without a byte on stdout or
	// stderr while no tool call is open; time a reader spends inside
	// OnStdout, OnStderr or BeforeStdoutRead is not silence (the agent may
	// be blocked writing to us meanwhile). IdleWarning is how long before
	// Idle fires an idle warning is sent (not sent when IdleWarning >= the
	// idle budget in force). Hard ends the run this long after spawn.
	// Linger ends the run this long after AgentDone; from AgentDone on,
	// when Linger > 0, it is the only rule (idle, tool and hard budgets no
	// longer apply: the answer is complete). KillGrace is the time
	// between SIGTERM and SIGKILL (0: SIGKILL at once), and how long after
	// the child's exit a process still holding its pipes is tolerated.
	Idle, IdleWarning, Hard, Linger, KillGrace time.Duration

	// ToolBudget gives the budget of an open tool call by kind (nil: the
	// spec's defaults, DefaultToolBudget). 0 means no budget: no
	// tool_stalled warning and no idle timeout while that call is open.
	ToolBudget func(kind event.Kind) time.Duration

	// OnStdout receives every stdout line in order, from one goroutine;
	// line is valid only during the call. dropped counts bytes cut beyond
	// MaxLine. The child is blocked while OnStdout runs once the pipe
	// fills (backpressure: memory stays bounded), but that time never
	// counts towards the idle budget.
	OnStdout func(line []byte, dropped int64)
	// OnStderr, if set, receives every stderr line (cut at 64 KiB) from
	// one goroutine. The tail is kept regardless.
	OnStderr func(line []byte)
	// OnWarning receives idle, tool_stalled, stderr_truncated and
	// lingered_after_result warnings, in the order they were found, from
	// a goroutine of their own; calls never overlap. Nothing waits for
	// it: a call that blocks (its consumer stalled) holds up later
	// warnings, never the watchdogs, the escalation, an interrupt or the
	// reading of stderr. Wait returns once every warning was delivered.
	// stderr_truncated is sent once, when stderr first outgrows the 64 KiB
	// tail (not at the end), so a reader learns early that the tail in a
	// final error is not the whole of stderr; Outcome.StderrBytes has the
	// total.
	OnWarning func(w *event.Warning)
	// BeforeStdoutRead, if set, is called on the stdout goroutine before
	// each read of stdout, once every line read so far has been handed to
	// OnStdout. wait tells whether the read may wait for the agent: the
	// moment to flush what those lines produced. It is false while more
	// output already waits in the pipe (the agent writes faster than
	// OnStdout takes it; on Linux, elsewhere it is always true), so that a
	// flood is not flushed one read at a time.
	BeforeStdoutRead func(wait bool)

	// noReaper runs without the per-run reaper even when the hook is
	// installed: tests keep checking the hookless path, and benchmarks
	// compare the two.
	noReaper bool
	// noCgroup likewise runs without the run's own cgroup.
	noCgroup bool
	// drainWait replaces drainTimeout (tests).
	drainWait time.Duration
}

// DefaultToolBudget is the spec's budget for a tool call of kind k: mcp
// 120 s, read/search/todo 60 s, anything else 300 s.
func DefaultToolBudget(k event.Kind) time.Duration {
	switch k {
	case event.KindMCP:
		return 120 * time.Second
	case event.KindRead, event.KindSearch, event.KindTodo:
		return 60 * time.Second
	default:
		return 300 * time.Second
	}
}

// Outcome is how a run ended. Killed and KillSignal are about signals the
// harness sent to the agent's process group before it exited; processes
// killed after the agent exited are only counted in Stragglers.
type Outcome struct {
	// Reason is nil when the child exited by itself, else ErrIdleTimeout,
	// ErrHardTimeout, ErrInterrupted (also wrapping the context's cause
	// when it came from the context) or ErrLingered.
	Reason      error
	Exited      bool   // the child was reaped
	ExitCode    int    // -1 if it died by a signal
	Signal      string // "SIGKILL", … when the child died by a signal
	Killed      bool   // the harness signalled the group
	KillSignal  string // strongest signal sent: "SIGINT", "SIGTERM" or "SIGKILL"
	Lingered    bool   // ended by the linger timer after AgentDone
	StderrTail  []byte // last 64 KiB of stderr
	StderrBytes int64  // total stderr bytes seen
	StdoutLines int64
	// LastActivity is the time of the last byte on stdout or stderr (the
	// spawn time if there was none).
	LastActivity time.Time
	// Silence is, when Reason is ErrIdleTimeout, the silence the idle
	// watchdog fired at: at least the idle budget in force, and without
	// the kill grace that followed (LastActivity, read at the end, has it).
	Silence time.Duration
	// Stragglers counts processes of the run other than the child that the
	// harness SIGKILLed one by one (re-parented, setsid'd, holding a pipe…).
	Stragglers int
	Duration   time.Duration
}

// Proc is one running agent process. Its methods are safe for concurrent
// use; Wait may be called any number of times from any goroutine.
//
// Finding the run's processes at the end (see the package doc): the
// run's own cgroup holds them all where cgroup v2 is writable; else the
// run's own reaper (when MaybeReap installed the hook) has them all in its
// tree. Without either, the child's descendants are walked in /proc
// while it runs (and remembered by pid and start time) and the harness is
// a child subreaper. In any case, as a last resort, a process belongs to
// the run when it is in the child's process group (or session, with PTY),
// was seen descending from the child, or is an orphan of ours carrying
// the run's environment marker or, with a reaper, the run's tag (an
// RLIMIT_LOCKS of its own, which the agent inherits from the reaper:
// the orphans of a reaper killed from outside come to us) — and so are
// all of their descendants.
// Processes of other runs never match, so concurrent runs in one harness
// do not kill each other's processes.
//
// The end of a run: once the child has exited (by itself or escalation),
// its pipes get until KillGrace after the exit to reach EOF (a grandchild's
// output still arrives meanwhile); then every process left of the run is
// SIGKILLed (no SIGTERM first: the agent is gone) and reaped, the pipes are
// read to EOF — at most 500 ms more, which only a holder we could not
// attribute makes us wait — and the Outcome is published.
type Proc struct {
	o       Options
	cmd     *exec.Cmd
	pid     int
	start   time.Time
	marker  []byte // "HARNESS_RUN_<token>=1\x00" as found in /proc/PID/environ
	sid     int    // the child's own session (PTY), or 0
	budgets func(event.Kind) time.Duration

	stdoutR, stderrR, stdinW *os.File
	stdin                    *stdinQueue // with KeepStdin
	// ptySlave, with PTY, is the harness's own descriptor of the
	// terminal, held from the spawn until the agent is reaped: while any
	// descriptor of it is open, reading the master waits for output
	// rather than failing with EIO, which an agent that closes its
	// terminal and opens /dev/tty again (exec 1>&-; …; exec 1>/dev/tty)
	// made the end of its output, and what it printed after was lost.
	// Closed at the agent's end, when EIO means again that no process
	// has the terminal open: the end of the output.
	ptySlave *os.File

	lastAct     atomic.Int64 // nanoseconds since start of the last output byte
	stdoutLines atomic.Int64
	stdoutRead  atomic.Int64 // bytes read from the stdout pipe
	stderrRead  atomic.Int64
	busy        atomic.Int32 // reader goroutines inside a callback of Options

	poke       chan struct{}
	trackPoke  chan struct{}      // a tool call opened: walk now (see track)
	walks      atomic.Int64       // /proc walks made by track (tests count work)
	looks      atomic.Int64       // looks made by track: walks or reads of the cgroup's list (tests)
	exited     chan struct{}      // closed once the child is reaped
	exitStatus syscall.WaitStatus // valid once exited is closed, if haveStatus
	haveStatus bool
	rp         *reaperConn // the run's own reaper, nil without the hook (MaybeReap) or with cg
	cg         *runCgroup  // the run's own cgroup v2, nil where there is none
	stdoutDone chan struct{}
	stderrDone chan struct{}
	done       chan struct{}
	out        Outcome

	mu          sync.Mutex // guards the fields below
	tools       *toolSet
	toolRef     time.Time // last ToolStarted/ToolEnded
	agentDoneAt time.Time
	awaiting    bool // a live session waits for its caller's next prompt (Awaiting)
	lastIntr    time.Time
	intrReq     bool
	killNow     bool
	tracked     map[int]uint64 // pid → start time of processes seen in the tree
	stragglers  map[int]uint64

	// The tool budgets' clock: wall time less the time spent awaiting
	// (held, and since awaitSince while awaiting), so that a wait for the
	// caller counts in no call's budget.
	held       time.Duration
	awaitSince time.Time

	warns warnQueue // to OnWarning, off the supervisor's goroutine

	tailMu     sync.Mutex
	tail       *ring
	tailWarned bool
}

var subreaperOnce sync.Once

// Start spawns the process described by o and supervises it until Wait
// returns. Cancelling ctx acts like Interrupt. Errors: *NotFoundError,
// ErrBadDir, ErrSpawn (wrapped with the cause; also wrapping ctx's error
// when it is already done).
//
// Where the process's cgroup v2 is writable, each run gets a child cgroup
// of it (harness-run-<token>-locked), removed at the run's end; orphans of
// the run are left to whoever they are re-parented to (init, as without
// harness), except those re-parented to this process (pid 1 of a
// container, or a subreaper), which are reaped at the run's end. On Linux
// the first Start of a run without a cgroup makes the calling process a
// child subreaper for the rest of its life: orphans of any descendant are
// re-parented to it. Those of a run are reaped at its end; others are
// left alone.
func Start(ctx context.Context, o Options) (*Proc, error) {
	if len(o.Argv) == 0 || o.Argv[0] == "" {
		return nil, fmt.Errorf("%w: empty argv", ErrSpawn)
	}
	if o.KeepStdin && o.Stdin != "" {
		return nil, fmt.Errorf("%w: Stdin and KeepStdin are exclusive", ErrSpawn)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSpawn, err)
	}
	if o.Dir != "" {
		st, err := os.Stat(o.Dir)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadDir, err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("%w: %s is not a directory", ErrBadDir, o.Dir)
		}
	}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	path, err := LookPath(o.Argv[:1], nil, o.Dir, env)
	if err != nil {
		return nil, err
	}

	var tok [12]byte
	_, _ = rand.Read(tok[:])
	token := hex.EncodeToString(tok[:])
	key := "HARNESS_RUN_" + strings.ToUpper(token)
	p := &Proc{
		o: o, budgets: o.ToolBudget,
		marker:     []byte(key + "=1\x00"),
		poke:       make(chan struct{}, 1),
		trackPoke:  make(chan struct{}, 1),
		exited:     make(chan struct{}),
		stdoutDone: make(chan struct{}),
		stderrDone: make(chan struct{}),
		done:       make(chan struct{}),
		tools:      newToolSet(),
		tracked:    map[int]uint64{},
		stragglers: map[int]uint64{},
		tail:       newRing(tailSize),
		stdin:      newStdinQueue(o.KeepStdin),
	}
	if p.budgets == nil {
		p.budgets = DefaultToolBudget
	}
	// Every process of the run is found at its end by the first of: the
	// run's own cgroup (exact, free), the run's own reaper (exact, one
	// re-exec of the harness binary), /proc walks and the marker.
	if !o.noCgroup {
		p.cg = newRunCgroup(token)
	}
	if p.cg == nil {
		// Without a cgroup the run's orphans must come to us (walks) or,
		// should the run's reaper die, still be found (its orphans carry
		// the marker). A run in a cgroup needs no re-parenting, and being
		// a subreaper would only make us the parent of orphans to reap.
		subreaperOnce.Do(becomeSubreaper)
	}
	newCmd := func() {
		cmd := &exec.Cmd{Path: path, Args: o.Argv, Dir: o.Dir}
		cmd.Env = append(append(make([]string, 0, len(env)+2), env...), key+"=1")
		p.cmd, p.rp = cmd, nil
		if exe := reaperExe; exe != "" && !o.noReaper && p.cg == nil {
			// The reaper adds the marker to the agent's environment
			// itself: it is not a process of the run, and must not look
			// like one.
			p.rp = &reaperConn{agentPath: path, marker: key + "=1", tag: newTag(), ctty: -1, done: make(chan struct{})}
			cmd.Path, cmd.Env = exe, cmd.Env[:len(cmd.Env)-1]
		}
	}
	newCmd()
	err = p.spawn()
	if err != nil && p.cg != nil {
		cg := p.cg
		p.cg = nil
		refused := cgroupRefused(err, cg)
		cg.remove()
		// If clone3 refused the cgroup (an old kernel, a seccomp filter, a
		// threaded or controller-enabled cgroup), try without it, and if
		// that works, do without cgroups from now on. Not if the agent's
		// exec failed: it would fail again, and leave us a subreaper.
		if refused {
			subreaperOnce.Do(becomeSubreaper)
			newCmd()
			if err = p.spawn(); err == nil {
				disableCgroups()
			}
		}
	}
	if err != nil {
		return nil, err
	}
	p.afterSpawn(ctx)
	return p, nil
}

// spawn creates the pipes and starts the child on a locked OS thread.
func (p *Proc) spawn() error {
	var childEnds []*os.File
	closeAll := func(fs ...*os.File) {
		for _, f := range fs {
			if f != nil {
				_ = f.Close()
			}
		}
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSpawn, err)
	}
	p.stderrR, p.cmd.Stderr = errR, errW
	childEnds = append(childEnds, errW)
	if p.o.Stdin != "" || p.o.KeepStdin {
		inR, inW, err := os.Pipe()
		if err != nil {
			closeAll(errR, errW)
			return fmt.Errorf("%w: %w", ErrSpawn, err)
		}
		p.stdinW, p.cmd.Stdin = inW, inR
		childEnds = append(childEnds, inR)
	}
	if p.o.PTY {
		master, tty, err := openPTY()
		if err != nil {
			closeAll(append(childEnds, errR, p.stdinW)...)
			return fmt.Errorf("%w: pty: %w", ErrSpawn, err)
		}
		p.stdoutR, p.cmd.Stdout = master, tty
		ctty := 1
		if p.o.Stdin == "" && !p.o.KeepStdin {
			p.cmd.Stdin, ctty = tty, 0
		}
		p.ptySlave = tty // kept open until the agent's end, not closed after the start
		p.cmd.SysProcAttr = sysAttrPTY(ctty)
		if p.rp != nil {
			p.rp.ctty = ctty // the reaper makes the agent's session, not its own
			p.cmd.SysProcAttr = sysAttr()
		}
	} else {
		outR, outW, err := os.Pipe()
		if err != nil {
			closeAll(append(childEnds, errR, p.stdinW)...)
			return fmt.Errorf("%w: %w", ErrSpawn, err)
		}
		p.stdoutR, p.cmd.Stdout = outR, outW
		WidenPipe(outR)
		childEnds = append(childEnds, outW)
		p.cmd.SysProcAttr = sysAttr()
	}

	if p.rp != nil {
		ends, err := p.rp.prepare(p.cmd)
		if err != nil {
			closeAll(append(childEnds, p.stdoutR, p.stderrR, p.stdinW, p.ptySlave)...)
			return fmt.Errorf("%w: %w", ErrSpawn, err)
		}
		childEnds = append(childEnds, ends...)
	}

	if p.cg != nil {
		p.cg.attr(p.cmd.SysProcAttr)
	}

	started := make(chan error, 1)
	go p.startAndWait(started, childEnds)
	err = <-started
	if err != nil {
		closeAll(p.stdoutR, p.stderrR, p.stdinW, p.ptySlave)
		if p.rp != nil {
			p.rp.abandon()
		}
		return fmt.Errorf("%w: %w", ErrSpawn, execError(p.o.Dir, p.agentPath(), err))
	}
	return nil
}

// startAndWait starts the child and waits for it on one goroutine locked
// to its OS thread for the child's whole life. Linux delivers Pdeathsig
// when the THREAD that forked the child exits, not the process, and the Go
// runtime ends a thread whose locked goroutine returns; so the thread must
// stay locked (and this goroutine alive) until the child is reaped, and
// only then be unlocked (which returns it to the runtime's pool, alive).
//
// With a reaper, the child is the reaper: the agent's pid and then its
// wait status come from the reaper's reports, and the thread stays locked
// until the reaper itself is reaped, at the end of the run.
func (p *Proc) startAndWait(started chan<- error, childEnds []*os.File) {
	runtime.LockOSThread()
	p.start = time.Now()
	err := p.cmd.Start()
	for _, f := range childEnds { // ours would keep the pipes from EOF
		_ = f.Close()
	}
	if err != nil {
		runtime.UnlockOSThread()
		started <- err
		return
	}
	p.pid = p.cmd.Process.Pid
	if p.rp != nil {
		p.rp.pid, p.rp.proc = p.pid, p.cmd.Process
		if p.pid, err = p.rp.agentPID(); err != nil {
			p.rp.close()
			_ = p.cmd.Wait()
			runtime.UnlockOSThread()
			started <- err
			return
		}
		p.start = time.Now() // the agent's spawn: the reaper's start-up is not the agent's time
	}
	if p.o.PTY {
		p.sid = p.pid
	}
	started <- nil
	if p.rp != nil {
		p.exitStatus, p.haveStatus = p.rp.agentExit()
		p.closeSlave()
		close(p.exited)
		p.rp.wait(p.cmd)
		runtime.UnlockOSThread()
		return
	}
	_ = p.cmd.Wait() // the exit status is read from ProcessState
	runtime.UnlockOSThread()
	if st := p.cmd.ProcessState; st != nil {
		p.exitStatus, p.haveStatus = st.Sys().(syscall.WaitStatus)
	}
	p.closeSlave()
	close(p.exited)
}

// closeSlave closes our descriptor of the terminal (see ptySlave) at the
// agent's end.
func (p *Proc) closeSlave() {
	if p.ptySlave != nil {
		_ = p.ptySlave.Close()
	}
}

// agentPath is the agent's executable, also when a reaper starts it.
func (p *Proc) agentPath() string {
	if p.rp != nil {
		return p.rp.agentPath
	}
	return p.cmd.Path
}

func (p *Proc) afterSpawn(ctx context.Context) {
	addLive(p)
	if st, ok := readStat(p.pid); ok {
		p.tracked[p.pid] = st.start
	}
	switch {
	case p.stdin != nil:
		p.stdin.w = p.stdinW
		go p.stdin.run()
	case p.stdinW != nil:
		go func(w *os.File, s string) {
			_, _ = io.WriteString(w, s)
			_ = w.Close()
		}(p.stdinW, p.o.Stdin)
	}
	go p.readStdout()
	go p.readStderr()
	go p.track()
	go p.supervise(ctx)
}

// Alive reports whether pid is a live process: not a zombie (dead, not
// yet reaped), and false where there is no /proc to ask.
func Alive(pid int) bool {
	st, ok := readStat(pid)
	return ok && !st.dead()
}

// PID is the child's process id (also its process group id).
func (p *Proc) PID() int { return p.pid }

// ToolStarted tells the watchdogs that a tool call is open: while it is,
// the idle budget is at least its tool budget, and past that budget one
// tool_stalled warning is sent for the call, naming the tool (name may be
// empty).
func (p *Proc) ToolStarted(callID, name string, kind event.Kind) {
	p.toolStarted(callID, name, kind, time.Now())
}

func (p *Proc) toolStarted(callID, name string, kind event.Kind, now time.Time) {
	p.mu.Lock()
	p.tools.add(&toolCall{id: callID, name: name, kind: kind, started: now, at: p.toolClock(now), budget: p.budgets(kind)})
	p.toolRef = now
	p.mu.Unlock()
	p.wake()
	select {
	case p.trackPoke <- struct{}{}:
	default:
	}
}

// ToolEnded closes a call opened by ToolStarted; unknown ids are ignored.
func (p *Proc) ToolEnded(callID string) {
	p.mu.Lock()
	p.tools.remove(callID)
	p.toolRef = time.Now()
	p.mu.Unlock()
	p.wake()
}

// AgentDone says the agent printed its terminal event: the linger timer
// starts (only the first call counts) and, with a linger budget, the idle,
// tool and hard watchdogs stop, so a run that ends now ends as lingered
// (keeping the agent's status), never as a timeout.
func (p *Proc) AgentDone() {
	p.mu.Lock()
	if p.agentDoneAt.IsZero() {
		p.agentDoneAt = time.Now()
	}
	p.mu.Unlock()
	p.wake()
}

// Awaiting says whether the agent of a live session is waiting for the
// caller (between turns: its silence is not its own) or owes an answer (a
// turn in progress). While it waits the idle watchdog holds, and so does
// the budget of every open tool call (no tool_stalled warning: the wait is
// the caller's, not the tool's); when it owes an answer again its silence
// counts from then, and each call's budget resumes where it stood. The
// hard budget, the session's, always runs.
func (p *Proc) Awaiting(on bool) { p.awaitingAt(on, time.Now()) }

func (p *Proc) awaitingAt(on bool, now time.Time) {
	p.mu.Lock()
	if p.awaiting && !on {
		p.toolRef = now // the silence starts with the turn
		p.held += max(0, now.Sub(p.awaitSince))
	}
	if !p.awaiting && on {
		p.awaitSince = now
	}
	p.awaiting = on
	p.mu.Unlock()
	p.wake()
}

// toolClock is the tool budgets' clock at wall time now: it stands still
// while the session awaits its caller (a permission request waiting for
// the answer is that wait, bounded by the ask deadline alone; the call
// asked for has not even started). p.mu is held.
func (p *Proc) toolClock(now time.Time) time.Time {
	if p.awaiting && p.awaitSince.Before(now) {
		now = p.awaitSince
	}
	return now.Add(-p.held)
}

// Interrupt ends the run like a user's Ctrl-C: SIGINT to the group, SIGTERM
// half a grace later, SIGKILL at the grace. A second call within 2 s of the
// first SIGKILLs the group and every straggler at once. After the run is
// over it does nothing.
func (p *Proc) Interrupt() { p.interrupt(time.Now()) }

// Kill ends the run at once: SIGKILL to the whole group, no grace (what a
// second Interrupt within 2 s does).
func (p *Proc) Kill() {
	p.mu.Lock()
	p.killNow = true
	p.lastIntr = time.Now()
	p.mu.Unlock()
	p.wake()
}

func (p *Proc) interrupt(now time.Time) {
	p.mu.Lock()
	if !p.lastIntr.IsZero() && now.Sub(p.lastIntr) < 2*time.Second {
		p.killNow = true
	} else {
		p.intrReq = true
	}
	p.lastIntr = now
	p.mu.Unlock()
	p.wake()
}

// Wait blocks until the run is over — the child exited, both pipes are
// done, every straggler is killed and, if it is our child, reaped, every
// warning is handed to OnWarning — and returns its Outcome.
func (p *Proc) Wait() Outcome {
	<-p.done
	return p.out
}

func (p *Proc) wake() {
	select {
	case p.poke <- struct{}{}:
	default:
	}
}

func (p *Proc) touch() { p.lastAct.Store(int64(time.Since(p.start))) }

func (p *Proc) lastActivity() time.Time { return p.start.Add(time.Duration(p.lastAct.Load())) }

// warn queues w for OnWarning: it never waits for the caller (warnQueue).
func (p *Proc) warn(w *event.Warning) {
	if p.o.OnWarning == nil {
		return
	}
	p.warns.push(p.o.OnWarning, w)
}

// LookPath finds the executable to run: the first of names that is
// found, each looked for in dirs and then in the PATH of env (absolute
// entries only: a relative one would depend on the working directory). A
// name holding a slash is a path, taken relative to cwd when relative. A
// miss is a *NotFoundError naming names[0] and every path looked at, in
// order. It is the one lookup of harness: Start resolves Argv[0] with it.
func LookPath(names, dirs []string, cwd string, env []string) (string, error) {
	pathVar := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v // the last one wins, as in exec's dedup
		}
	}
	nf := &NotFoundError{}
	for _, name := range names {
		if nf.Name == "" {
			nf.Name = name
		}
		if strings.ContainsRune(name, '/') {
			path := name
			if !filepath.IsAbs(path) && cwd != "" {
				path = filepath.Join(cwd, path)
			}
			if isExecutable(path) {
				return path, nil
			}
			nf.Tried, nf.Unusable = append(nf.Tried, path), unusable(path)
			continue
		}
		search := append(slices.Clip(dirs), filepath.SplitList(pathVar)...)
		for _, d := range search {
			if d == "" || !filepath.IsAbs(d) {
				continue
			}
			path := filepath.Join(d, name)
			if slices.Contains(nf.Tried, path) {
				continue // a directory named twice is looked at once
			}
			nf.Tried, nf.Unusable = append(nf.Tried, path), ""
			if isExecutable(path) {
				return path, nil
			}
		}
	}
	return "", nf
}

// unusable says why path, which is not an executable, cannot run when it
// exists; "" when it does not.
func unusable(path string) string {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return ""
	case st.IsDir():
		return "is a directory, not an executable"
	case !st.Mode().IsRegular():
		return "is not a regular file"
	}
	return "is not executable (chmod +x)"
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// exitInfo fills the exit fields of o from the agent's wait status.
func exitInfo(ws syscall.WaitStatus, ok bool, o *Outcome) {
	if !ok {
		return
	}
	o.Exited = true
	o.ExitCode = ws.ExitStatus()
	if ws.Signaled() {
		o.ExitCode = -1
		o.Signal = signalName(ws.Signal())
	}
}
