package process

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentharness/harness/internal/ansi"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/linescan"
)

const (
	// trackEvery is how often the child's descendants are walked in /proc
	// while it runs and things happen (without a cgroup or reaper of the
	// run's own), so that processes that later leave the tree are known;
	// while nothing happens the walks back off (walkBackOff).
	trackEvery = 50 * time.Millisecond
	// drainTimeout bounds the wait for the pipes after every process of the
	// run is dead; only a holder we could not attribute can make it matter.
	drainTimeout = 500 * time.Millisecond
	// drainPoll is how often drain looks at a busy reader's progress.
	drainPoll = 10 * time.Millisecond
	// sweepTimeout bounds the kill-and-reap loop at the end of the run (a
	// process in uninterruptible sleep cannot be reaped sooner).
	sweepTimeout = 5 * time.Second
	// execWindow is how long the sweep looks again at an orphan whose
	// environment read as empty, as a process's does in the middle of an
	// exec (a daemon exec'ing as the run ends), before it rules it out.
	execWindow = 50 * time.Millisecond
	// stderrLineMax caps one line handed to OnStderr.
	stderrLineMax = 64 << 10
	// reaperAnswer is how long a run's reaper has to report the agent's
	// end once the agent is SIGKILLed (it is sent SIGCONT too, should it
	// be stopped). One that has not by then (frozen, traced, hung) is
	// ended by its harness: its tree first, then itself (reaperConn.end).
	reaperAnswer = 2 * time.Second
)

// backOff is how track's looks space out while nothing happens: each
// pause is the last one times factor, up to ceiling.
type backOff struct {
	factor  int
	ceiling time.Duration
}

var (
	// walkBackOff paces the walks of /proc of a run without a cgroup:
	// they are its only containment, so they stay at least once a second.
	walkBackOff = backOff{factor: 2, ceiling: time.Second}
	// heldBackOff paces the reads of the list of a run's own cgroup, which
	// only remember what may leave it (a process allowed to write another
	// cgroup's list): the cgroup holds the rest to the end. Each read
	// wakes the Go runtime's threads, which on a VM costs far more than
	// the read: on a 2-vCPU Intel one, 1.6 to 15 ms of harness CPU a
	// wake-up after a second or more of silence (schedstat, by the
	// second). A read a second cost a silent run 1.8-4.3 ms of CPU a
	// second; make bench's idle row, run alone, gave 3.16 ms a second at
	// a ceiling of 1 s, 0.72-0.98 at 30 s and 0.97 with no read after the
	// first minute, whose wake-ups are the cost left. Growing fourfold
	// rather than twofold, the pauses make 3 wake-ups after a second of
	// silence in the first minute rather than 6: the harness's own CPU
	// over a minute of silence went from 53-66 ms to 40-51 ms.
	heldBackOff = backOff{factor: 4, ceiling: 30 * time.Second}
)

// next is the pause before the next look: trackEvery after a change,
// else the last one times the factor, at most the ceiling.
func (b backOff) next(last time.Duration, changed bool) time.Duration {
	if changed {
		return trackEvery
	}
	return min(time.Duration(b.factor)*last, b.ceiling)
}

// activityReader stamps the time of every byte read, and turns any read
// error (EIO from a PTY master once no process has the terminal open,
// which we hold open ourselves until the agent's end: Proc.ptySlave;
// ErrClosed once we gave up on the pipe) into EOF, so the last partial
// line is delivered.
type activityReader struct {
	r       *os.File
	p       *Proc
	before  func(wait bool) // called before each read (stdout: Options.BeforeStdoutRead)
	endRead func()          // called first before each read: the lines of the last one are done
	read    *atomic.Int64   // counts the bytes read
}

func (a activityReader) Read(b []byte) (int, error) {
	// Output already waiting in the pipe is read without waiting: an
	// agent flooding stdout then costs the writers flushed before a wait
	// one write per buffer they fill, not one per read of the pipe.
	if a.endRead != nil {
		a.endRead()
	}
	if a.before != nil {
		wait := pendingBytes(a.r) == 0
		a.p.inCallback(func() { a.before(wait) })
	}
	n, err := a.r.Read(b)
	if n > 0 {
		a.read.Add(int64(n))
		a.p.touch()
	}
	if err != nil {
		err = io.EOF
	}
	return n, err
}

func (p *Proc) readStdout() {
	defer close(p.stdoutDone)
	defer ContainPanic() // OnStdout is the caller's
	// The lines of one read are one stretch of our callbacks (see
	// inCallback): counted, marked busy and stamped once, not at each
	// line: four atomic operations and a clock read a line less. Each
	// atomic operation waits for the stores before it, and a session log
	// makes many: a run flooding stdout with 1 GiB took 1.570 -> 1.545 s
	// of CPU with --no-log, 2.005 -> 1.940 s with the log (medians of 8
	// interleaved runs, the harness's sink lock dropped in the same
	// build).
	var lines int64
	busy := false
	endRead := func() {
		p.stdoutLines.Add(lines)
		lines = 0
		if busy {
			p.touch() // before busy drops, as in inCallback
			p.busy.Add(-1)
			busy = false
		}
	}
	fn := func(line []byte, dropped int64) error {
		lines++
		if p.o.PTY {
			line = cleanPTYLine(line)
		}
		if p.o.OnStdout != nil {
			if !busy {
				p.busy.Add(1)
				busy = true
			}
			p.o.OnStdout(line, dropped)
		}
		return nil
	}
	r := activityReader{r: p.stdoutR, p: p, before: p.o.BeforeStdoutRead, read: &p.stdoutRead, endRead: endRead}
	_ = linescan.ScanGrowing(r, p.o.MaxLine, fn)
	endRead()
}

// cleanPTYLine removes ANSI escape sequences and every '\r' a terminal
// adds (ONLCR turns "\n" into "\r\n"; progress output uses bare '\r').
func cleanPTYLine(line []byte) []byte {
	if bytes.IndexByte(line, 0x1b) < 0 && !bytes.Contains(line, []byte("\u009b")) {
		return bytes.ReplaceAll(line, []byte("\r"), nil)
	}
	s := ansi.Strip(string(line))
	return []byte(strings.ReplaceAll(s, "\r", ""))
}

// tailWriter keeps the stderr tail and sends one stderr_truncated warning
// the first time it overflows, so a consumer learns early that the tail in
// the final error will not be the whole of stderr.
type tailWriter struct{ p *Proc }

func (t tailWriter) Write(b []byte) (int, error) {
	p := t.p
	p.tailMu.Lock()
	_, _ = p.tail.Write(b)
	first := p.tail.Overflowed() && !p.tailWarned
	if first {
		p.tailWarned = true
	}
	p.tailMu.Unlock()
	if first {
		p.warn(&event.Warning{
			Code:    event.WarnStderrTruncated,
			Message: fmt.Sprintf("agent stderr is longer than %d KiB: only its last %d KiB are kept", tailSize>>10, tailSize>>10),
			Bytes:   tailSize,
		})
	}
	return len(b), nil
}

func (p *Proc) readStderr() {
	defer close(p.stderrDone)
	defer ContainPanic() // OnStderr is the caller's
	src := io.TeeReader(activityReader{r: p.stderrR, p: p, read: &p.stderrRead}, tailWriter{p})
	if p.o.OnStderr == nil {
		buf := make([]byte, 32<<10)
		for {
			if _, err := src.Read(buf); err != nil {
				return
			}
		}
	}
	_ = linescan.Scan(src, stderrLineMax, func(line []byte, _ int64) error {
		p.inCallback(func() { p.o.OnStderr(line) })
		return nil
	})
}

// inCallback runs fn, a callback of the caller's on a reader goroutine, as
// time that is not the agent's silence: while that reader is inside our
// own code (blocked writing our output to a slow consumer, say) it does
// not read the agent, which may well be printing into a full pipe. So the
// idle watchdog holds while any callback runs, and the silence starts
// afresh when it returns. The agent still feels the backpressure.
func (p *Proc) inCallback(fn func()) {
	p.busy.Add(1)
	defer func() {
		p.touch() // before busy drops, so the watchdog never sees stale activity
		p.busy.Add(-1)
	}()
	fn()
}

// track remembers every process of the run while the child runs, so that
// they are still recognised (by pid and start time) after they leave the
// tree, even as zombies re-parented to us, whose environment and cgroup
// are gone. With a reaper of the run's own it has nothing to do: the
// reaper's tree holds the run and the reaper reaps it. With the run's
// cgroup it reads the cgroup's process list. Otherwise it walks the
// child's descendants and orphans of ours carrying the run's marker, with
// their descendants, in /proc (a few hundred microseconds of CPU a walk).
//
// An agent waiting on its model for minutes starts nothing, so the looks
// back off while nothing happens (walkBackOff, or heldBackOff for the
// cgroup's list) and come back to trackEvery when one finds a new
// process, the agent prints, or a tool call opens (which also looks at
// once, its command starting now, unless a look was less than
// trackEvery ago).
func (p *Proc) track() {
	if p.rp != nil {
		return
	}
	look, pace := p.lookCgroup, heldBackOff
	if p.cg == nil {
		w := &walker{negative: map[int]uint64{}}
		look, pace = func() bool { p.walks.Add(1); return p.walk(w) }, walkBackOff
	}
	timer := time.NewTimer(trackEvery)
	defer timer.Stop()
	every := trackEvery
	lastAct := p.lastAct.Load()
	lastLook := time.Now()
	// The first look is after trackEvery, not at the spawn: the child has
	// barely started then, and a run that ends sooner never pays for a
	// walk of /proc (whatever escaped by then is caught at the end, where
	// our orphans are checked for the run's marker).
	for {
		select {
		case <-p.exited:
			return
		case <-timer.C:
		case <-p.trackPoke:
			every = trackEvery
			// An agent opening tool calls back to back pokes at every
			// one: a look per call cost a run of 20000 quick calls 12 %
			// of its CPU. One look per trackEvery at most, as while
			// anything else happens.
			if since := time.Since(lastLook); since < trackEvery {
				timer.Reset(trackEvery - since)
				continue
			}
		}
		lastLook = time.Now()
		p.looks.Add(1)
		found := look()
		act := p.lastAct.Load()
		every = pace.next(every, found || act != lastAct)
		lastAct = act
		timer.Reset(every) // since Go 1.23, a stale tick is dropped
	}
}

// lookCgroup remembers the processes in the run's cgroup; it reports
// whether one was new.
func (p *Proc) lookCgroup() bool {
	found := false
	for _, pid := range p.cg.procs() {
		if !p.known(pid) {
			if st, ok := readStat(pid); ok {
				found = p.remember(st) || found
			}
		}
	}
	return found
}

func (p *Proc) known(pid int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.tracked[pid]
	return ok
}

// walker is what walks remember between them.
type walker struct {
	negative map[int]uint64 // our children already checked: not this run's
	orphans  []int          // roots besides the child
}

// walk looks at the run's tree in /proc once (see track) and reports
// whether it found a process it did not know.
func (p *Proc) walk(w *walker) bool {
	negative := w.negative
	roots := append([]int{p.pid}, w.orphans...)
	p.mu.Lock()
	known := make(map[int]uint64, len(p.tracked)+len(negative))
	for k, v := range p.tracked {
		known[k] = v
	}
	p.mu.Unlock()
	for k, v := range negative {
		known[k] = v
	}
	found := false
	ours, others, _ := orphansOf(p.marker, known) // one unread is looked at again at the next walk
	for _, o := range ours {
		found = p.remember(o) || found
		roots = append(roots, o.pid)
		w.orphans = append(w.orphans, o.pid)
	}
	for _, o := range others {
		negative[o.pid] = o.start
	}
	for _, r := range roots {
		for _, d := range descendants(r) {
			found = p.remember(d) || found
		}
	}
	return found
}

// remember records st as a process of the run; it reports whether st
// was new.
func (p *Proc) remember(st procStat) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.tracked[st.pid]; ok {
		return false
	}
	p.tracked[st.pid] = st.start
	return true
}

// Escalation stages, in order of strength.
const (
	stageNone = iota
	stageINT
	stageTERM
	stageKILL
)

// supervisor is the state only the supervise goroutine touches.
type supervisor struct {
	reason    error
	stage     int
	stageAt   time.Time     // when the current escalation began
	termAt    time.Time     // SIGTERM due (from stageINT)
	killAt    time.Time     // SIGKILL due
	warnedRef time.Time     // the silence an idle warning was sent for
	silence   time.Duration // the silence the idle timeout fired at
	lingered  bool
	visits    int64 // tool calls looked at by the watchdogs (tests count work)
	// reaperDue is when a reaper that has not reported the agent's end
	// since the SIGKILL is ended by us (reaperAnswer); zero: not armed.
	reaperDue time.Time
}

// supervise runs the watchdogs and the escalation until the child exits,
// then waits for the pipes (at most KillGrace), kills the stragglers and
// builds the Outcome.
func (p *Proc) supervise(ctx context.Context) {
	var s supervisor
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	ctxDone := ctx.Done()
	pipes := make(chan struct{})
	go func() { <-p.stdoutDone; <-p.stderrDone; close(pipes) }()
	exited, pipesDone := p.exited, (<-chan struct{})(pipes)
	var graceEnd time.Time
	for {
		now := time.Now()
		var next time.Time
		if exited != nil {
			next = p.watch(&s, now)
		} else {
			p.mu.Lock()
			if p.killNow || p.intrReq {
				graceEnd = now // a user interrupt after exit: stop waiting
			}
			p.killNow, p.intrReq = false, false
			p.mu.Unlock()
			if pipesDone == nil || !now.Before(graceEnd) {
				break
			}
			next = graceEnd
		}
		if next.IsZero() {
			next = now.Add(time.Hour)
		}
		timer.Reset(next.Sub(now))
		select {
		case <-timer.C:
		case <-p.poke:
		case <-ctxDone:
			ctxDone = nil
			if exited != nil && s.reason == nil { // not once it exited by itself
				s.reason = &interruptError{cause: context.Cause(ctx)}
			}
			p.interrupt(time.Now())
		case <-exited:
			exited = nil
			graceEnd = time.Now().Add(p.o.KillGrace)
			if s.stage == stageKILL {
				graceEnd = time.Now()
			}
		case <-pipesDone:
			pipesDone = nil
			if exited != nil && p.rp != nil {
				// The agent's pipes are closed, its end not reported: it
				// may well be dead under a stopped reaper.
				p.rp.cont()
			}
		}
	}
	p.finish(&s)
}

// watch runs every watchdog once and returns when it must run again.
func (p *Proc) watch(s *supervisor, now time.Time) time.Time {
	w := &wake{now: now}
	p.mu.Lock()
	intr, kill := p.intrReq, p.killNow
	p.intrReq, p.killNow = false, false
	// After the agent's final event only the linger rule applies: the
	// answer is complete, so neither silence nor the clock may turn it into
	// a timeout (with the linger off, the other budgets still bound a hung
	// agent).
	final := p.o.Linger > 0 && !p.agentDoneAt.IsZero()
	if s.reason == nil && !final {
		p.watchIdle(s, w)
		p.watchHard(s, w)
	}
	if final && s.reason == nil {
		p.watchLinger(s, w)
	}
	p.mu.Unlock()
	for _, warning := range w.warnings {
		p.warn(warning)
	}
	p.watchEscalation(s, w, intr, kill)
	return w.next
}

// wake is what one run of the watchdogs found: when they must run again
// (zero: no deadline) and the warnings to send once p.mu is released.
type wake struct {
	now      time.Time
	next     time.Time
	warnings []*event.Warning
}

// soonest brings w.next forward to t; a zero t is no deadline.
func (w *wake) soonest(t time.Time) {
	if !t.IsZero() && (w.next.IsZero() || t.Before(w.next)) {
		w.next = t
	}
}

// watchIdle runs the tool and idle watchdogs: a tool_stalled warning per
// call past its budget, the idle warning, and the idle timeout. p.mu is
// held.
func (p *Proc) watchIdle(s *supervisor, w *wake) {
	now := w.now
	ref := p.lastActivity()
	if p.toolRef.After(ref) {
		ref = p.toolRef
	}
	if p.busy.Load() > 0 {
		ref = now // a reader is in our callbacks: not the agent's silence
	}
	budget, unlimited := p.tools.maxBudget()
	budget = max(budget, p.o.Idle)
	// While the session awaits its caller the tool clock stands: no call
	// stalls, and none is due until the wait ends (Awaiting wakes us).
	var stalled []*toolCall
	if !p.awaiting {
		clock := p.toolClock(now)
		var due time.Time
		stalled, due = p.tools.stalled(clock, &s.visits)
		if !due.IsZero() {
			w.soonest(now.Add(due.Sub(clock)))
		}
	}
	for _, c := range stalled {
		w.warnings = append(w.warnings, &event.Warning{
			Code: event.WarnToolStalled, CallID: c.id, Name: c.name,
			Message:   fmt.Sprintf("%s tool call %s still running after its %s budget", c.kind, c.id, c.budget),
			ElapsedMS: now.Sub(c.started).Milliseconds(), BudgetMS: c.budget.Milliseconds(),
		})
	}
	if p.o.Idle <= 0 || unlimited || p.awaiting {
		return // awaiting: a live session between turns is not stuck
	}
	// Output waiting unread in a pipe is no silence: the reader is behind,
	// not the agent (a harness stopped with Ctrl-Z and resumed ran its
	// watchdog before its reader as often as not, and a working agent got
	// an idle timeout). Asked only when a warning or the timeout is due.
	quiet := budget
	if warn := p.o.IdleWarning; warn > 0 && warn < budget {
		quiet = budget - warn
	}
	if !now.Before(ref.Add(quiet)) && pendingBytes(p.stdoutR)+pendingBytes(p.stderrR) > 0 {
		ref = now
	}
	due := ref.Add(budget)
	fire := !now.Before(due)
	if !fire {
		w.soonest(due)
	}
	// The warning always comes before the timeout of the same silence,
	// even when this goroutine woke too late to send it in time (a loaded
	// machine): readers count on that order.
	if warn := p.o.IdleWarning; warn > 0 && warn < budget {
		// Output does not wake this goroutine: once a silence is warned,
		// it looks again when a silence begun by output from now on could
		// be due its own warning. Sleeping until this one's timeout would
		// warn the next one late, or miss it, whenever the warning comes
		// earlier than half the budget (warned at 300 ms of a 2 s budget,
		// a 650 ms pause was missed).
		if warnAt := due.Add(-warn); s.warnedRef.Equal(ref) {
			w.soonest(now.Add(budget - warn))
		} else if now.Before(warnAt) {
			w.soonest(warnAt)
		} else {
			w.soonest(now.Add(budget - warn))
			s.warnedRef = ref
			abortIn := max(0, due.Sub(now))
			w.warnings = append(w.warnings, &event.Warning{
				Code:   event.WarnIdle,
				IdleMS: now.Sub(ref).Milliseconds(), AbortInMS: abortIn.Milliseconds(),
				Message: fmt.Sprintf("no output for %s; the run ends in %s unless some comes",
					now.Sub(ref).Round(time.Millisecond), abortIn.Round(time.Millisecond)),
			})
		}
	}
	if fire {
		s.reason, s.silence = ErrIdleTimeout, now.Sub(ref)
	}
}

// watchHard runs the hard timeout, measured from the start. p.mu is held.
func (p *Proc) watchHard(s *supervisor, w *wake) {
	if p.o.Hard <= 0 || s.reason != nil {
		return
	}
	due := p.start.Add(p.o.Hard)
	if !w.now.Before(due) {
		s.reason = ErrHardTimeout
	} else {
		w.soonest(due)
	}
}

// watchLinger ends an agent that has not exited Linger after its final
// event. p.mu is held.
func (p *Proc) watchLinger(s *supervisor, w *wake) {
	due := p.agentDoneAt.Add(p.o.Linger)
	if w.now.Before(due) {
		w.soonest(due)
		return
	}
	s.reason, s.lingered = ErrLingered, true
	w.warnings = append(w.warnings, &event.Warning{
		Code:      event.WarnLingeredAfterResult,
		ElapsedMS: w.now.Sub(p.agentDoneAt).Milliseconds(),
		Message:   fmt.Sprintf("the agent did not exit %s after its final event: ending it", p.o.Linger),
	})
}

// watchEscalation starts the signals for a reason found or an interrupt
// asked for (intr: SIGINT first; kill: SIGKILL now), and moves on to the
// next signal when the grace of the current one is over.
func (p *Proc) watchEscalation(s *supervisor, w *wake, intr, kill bool) {
	now := w.now
	switch {
	case kill:
		if s.reason == nil {
			s.reason = ErrInterrupted
		}
		p.escalate(s, stageKILL, now)
	case intr:
		if s.reason == nil {
			s.reason = ErrInterrupted
		}
		if s.stage == stageNone {
			p.escalate(s, stageINT, now)
		}
	case s.reason != nil && s.stage == stageNone:
		p.escalate(s, stageTERM, now)
	}
	if s.stage == stageINT && !now.Before(s.termAt) {
		p.escalate(s, stageTERM, now)
	}
	if (s.stage == stageINT || s.stage == stageTERM) && !now.Before(s.killAt) {
		p.escalate(s, stageKILL, now)
	}
	switch s.stage {
	case stageINT:
		w.soonest(s.termAt)
	case stageTERM:
		w.soonest(s.killAt)
	}
	// The agent is SIGKILLed and its end is still not reported: a reaper
	// that does not answer by reaperAnswer is ended (so is its tree), and
	// its death ends the wait (watch runs only until the end is known).
	if !s.reaperDue.IsZero() {
		if now.Before(s.reaperDue) {
			w.soonest(s.reaperDue)
		} else {
			s.reaperDue = time.Time{}
			go p.rp.end(p.straggler)
		}
	}
}

// escalate moves to stage (never back) and sends its signal. With a zero
// KillGrace the first stage is SIGKILL.
func (p *Proc) escalate(s *supervisor, stage int, now time.Time) {
	if stage <= s.stage {
		return
	}
	if p.o.KillGrace <= 0 {
		stage = stageKILL
	}
	if s.stage == stageNone {
		s.stageAt = now
		s.termAt = now.Add(p.o.KillGrace / 2)
		s.killAt = now.Add(p.o.KillGrace)
	}
	if stage == stageTERM {
		s.killAt = now.Add(p.o.KillGrace)
		if s.stage == stageINT { // SIGINT already had part of the grace
			s.killAt = s.stageAt.Add(p.o.KillGrace)
		}
	}
	s.stage = stage
	switch stage {
	case stageINT:
		p.signalGroup(syscall.SIGINT)
		p.signalGroup(syscall.SIGCONT) // a stopped agent acts on it only once resumed
	case stageTERM:
		p.signalGroup(syscall.SIGTERM)
		p.signalGroup(syscall.SIGCONT)
	case stageKILL:
		p.signalGroup(syscall.SIGKILL)
		p.killRun(false)
		if p.rp != nil {
			s.reaperDue = now.Add(reaperAnswer)
		}
	}
	if p.rp != nil {
		// A stopped reaper reports nothing: the agent's end would never
		// be known, the run never end (see reaperConn.cont).
		p.rp.cont()
	}
}

// straggler records st, a process of the run killed on its own, so that
// the sweep reaps its zombie once it is ours, and counts it.
func (p *Proc) straggler(st procStat) {
	p.mu.Lock()
	p.stragglers[st.pid] = st.start
	p.mu.Unlock()
}

// drain waits for a pipe's reader to reach the end of its input, after
// every process of the run is dead. The wait is bounded (drainTimeout) for
// a holder we could not attribute that keeps the pipe open; but what is in
// the pipe when it runs out was written before, by the run: the reader is
// given until it has read that much however long it takes (it may be busy
// with a long line, or a slow consumer), so no line the agent printed
// before it exited is lost.
func (p *Proc) drain(done <-chan struct{}, r *os.File, read *atomic.Int64) {
	wait := drainTimeout
	if p.o.drainWait > 0 {
		wait = p.o.drainWait
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	target := read.Load() + int64(pendingBytes(r))
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
	for read.Load() < target {
		select {
		case <-done:
			return
		case <-tick.C:
		}
	}
}

// finish kills what is left of the run, drains the pipes, and publishes
// the Outcome.
func (p *Proc) finish(s *supervisor) {
	p.killRun(true)
	dropLive(p)
	p.drain(p.stdoutDone, p.stdoutR, &p.stdoutRead)
	p.drain(p.stderrDone, p.stderrR, &p.stderrRead)
	_ = p.stdoutR.Close() // unblocks a reader still waiting on a foreign holder
	_ = p.stderrR.Close()
	if p.stdin != nil {
		_ = p.stdin.Close() // a session's writer learns the run is over
	}
	if p.stdinW != nil {
		_ = p.stdinW.Close()
	}
	<-p.stdoutDone
	<-p.stderrDone

	o := Outcome{Reason: s.reason, Lingered: s.lingered, Silence: s.silence, Duration: time.Since(p.start)}
	exitInfo(p.exitStatus, p.haveStatus, &o)
	if s.stage != stageNone {
		o.Killed = true
		o.KillSignal = [...]string{"", "SIGINT", "SIGTERM", "SIGKILL"}[s.stage]
	}
	p.tailMu.Lock()
	o.StderrTail, o.StderrBytes = p.tail.Bytes(), p.tail.total
	p.tailMu.Unlock()
	o.StdoutLines = p.stdoutLines.Load()
	o.LastActivity = p.lastActivity()
	p.mu.Lock()
	for pid := range p.stragglers {
		if pid != p.pid {
			o.Stragglers++
		}
	}
	p.mu.Unlock()
	if p.rp != nil {
		o.Stragglers += p.rp.killed
	}
	// The warnings go before the Outcome: a caller turns the Outcome into
	// its last events, which must follow them (an idle warning precedes
	// its timeout). The run is over: waiting here holds up nothing.
	p.warns.wait()
	if dying.Load() {
		select {} // the program is dying of a callback's panic (ContainPanic)
	}
	p.out = o
	close(p.done)
}

// signalGroup signals the child's process group while the child is alive
// (after it is reaped its pgid could in principle name someone else's
// group, so the end-of-run sweep signals processes one by one instead).
func (p *Proc) signalGroup(sig syscall.Signal) {
	// kill(-0) is the caller's own group and kill(-(-1)) every process it
	// may signal: a Proc that never had a pid has no group to signal.
	if p.pid <= 0 {
		return
	}
	select {
	case <-p.exited:
		return
	default:
	}
	_ = syscall.Kill(-p.pid, sig) // ESRCH: nothing left in the group
}
