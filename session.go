package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/jsonrpc"
	"github.com/agentharness/harness/process"
)

// Ask is the permission mode of a live session whose caller answers each
// permission request of the agent (Session.Answer); unanswered, a request
// is denied after SessionOptions.AskDeadline.
const Ask = "ask"

// DefaultAskDeadline is how long a permission request waits for Answer
// when SessionOptions.AskDeadline is zero.
const DefaultAskDeadline = 5 * time.Minute

// ErrSessionOver is Send's error once the session has ended or End was
// asked.
var ErrSessionOver = errors.New("harness: the session is over")

// ErrBlankPrompt is Send's error for a prompt that is empty or only white
// space (BlankPrompt), which is not sent: the session goes on. harness
// session refuses such a prompt with the same words.
var ErrBlankPrompt = errors.New("a prompt needs its text")

// BlankPrompt reports whether prompt has no text: empty or only white
// space. No front door sends one (an agent given one answers nothing
// useful, or refuses the request).
func BlankPrompt(prompt string) bool { return strings.TrimSpace(prompt) == "" }

// ErrQueueFull is Send's error while 64 prompts (adapters.MaxQueued)
// wait for the turn in progress: the session goes on, and a prompt sent
// again once a turn has ended (its turn_end) is taken. It bounds what a
// caller sending faster than the agent answers keeps waiting.
var ErrQueueFull = adapters.ErrQueueFull

// ErrTurnTimeout is Session.Wait's error when the agent did not end a turn
// over SessionOptions.TurnTimeout once asked and was stopped, which ended
// the session. It wraps ErrHardTimeout: a wall-clock limit, the turn's.
var ErrTurnTimeout = fmt.Errorf("harness: a turn outlived its timeout: %w", ErrHardTimeout)

// SessionOptions are a live session's: the callbacks of its run, and its
// per-turn budgets. Budgets.Idle runs only while a turn is in progress
// and no permission request of it waits for Answer (the AskDeadline
// bounds that wait; neither Idle nor Budgets.Tool cuts it short);
// Budgets.Hard bounds the whole session.
type SessionOptions struct {
	Options
	// TurnTimeout bounds each turn (0: none). A turn over it is asked to
	// end, as Interrupt asks, and ends with status timeout; an agent that
	// does not end it is stopped, and the session ends timeout
	// (ErrTurnTimeout).
	TurnTimeout time.Duration
	// AskDeadline is how long a permission request waits for Answer
	// (Task.Permissions Ask); 0: DefaultAskDeadline.
	AskDeadline time.Duration
}

// validate refuses what every front door refuses: a negative TurnTimeout
// or AskDeadline (neither means none, nor the default).
func (o SessionOptions) validate() error {
	if o.TurnTimeout < 0 {
		return &TaskError{&BudgetError{Budget: "turn", Value: o.TurnTimeout}}
	}
	if o.AskDeadline < 0 {
		return &TaskError{fmt.Errorf("ask deadline %s: a deadline cannot be negative (0 = the default, %s)", o.AskDeadline, DefaultAskDeadline)}
	}
	return nil
}

// Session is a live session: one supervised agent process, many turns.
// Each Send is one turn (turn_start … turn_end in the stream), sent when
// the turn before it ended; Interrupt ends the turn in progress and the
// session goes on; Close ends the session once the turns sent are
// answered. The stream is one run's: one session_start, one result.
//
// Its methods are safe for concurrent use, but the callbacks of its
// Options must not call them (they run with the session's lock held).
type Session struct {
	run  *Run
	conv adapters.Conversation
	o    SessionOptions
	// halt stops the agent with a cause (the run's context's): a timeout
	// is not an interrupt.
	halt context.CancelCauseFunc

	ask      bool       // permissions Ask
	mu       sync.Mutex // serializes the Conversation with the parser's lines
	turn     int        // turns started
	inTurn   bool
	timedOut int // the turn that outlived TurnTimeout, 0 when none
	// cancelled is the last turn the agent was asked to end over its
	// protocol (Interrupt, TurnTimeout), 0 when none.
	cancelled int
	// turnTimer is TurnTimeout's timer of the turn in progress, stopped
	// at its end: left running, it would hold the session until it fired.
	turnTimer *time.Timer
	// stopped is why harness stopped the agent, which ends the session
	// (stopAgent, Stop): stopCancel or stopTimeout; 0 while it has not.
	// Atomic: a callback that holds mu does not hold up a stop.
	stopped atomic.Int32
	// openTurn is the turn started whose end the parser has not yet
	// produced, 0 when none: written under mu, read without it when a
	// callback holds mu (lockWithin).
	openTurn atomic.Int64
	ending   bool
	closed   bool
	over     bool // the run has ended (the agent died, a budget): no prompt can go
	// done: the supervisor was told the agent is done (its linger runs).
	// After closed, a turn the agent may still begin by itself (ownTurns)
	// holds that back: ownWait bounds the wait for it, by the linger
	// budget, and ownOverdue says it ran out.
	done       bool
	ownWait    *time.Timer
	ownWaits   int // waits begun: tells a stale timer's callback from the wait in force
	ownOverdue bool
	// interruptNext: Interrupt came while the prompt written waited for
	// the agent to begin its turn (pendingStarter); it ends that turn as
	// it begins.
	interruptNext bool
	// asks are the deadlines of the permission requests waiting for
	// Answer, by the agent's call id (the Conversation's key).
	asks   map[string]*askDeadline
	askSeq int
}

// askDeadline is the timer that denies one permission request left
// unanswered; seq tells it from the deadline of an earlier request of the
// same call id.
type askDeadline struct {
	timer *time.Timer
	seq   int
}

// CannotAskError is StartSession's refusal of Permissions Ask for an
// agent that would not ask (its adapters.ACP.CannotAsk says why): run, it
// would make every change unasked.
type CannotAskError struct{ Agent, Why string }

func (e *CannotAskError) Error() string {
	return fmt.Sprintf("%s cannot ask for permission in a live session: %s", e.Agent, e.Why)
}

// StartSession completes t from the settings and starts a live session
// of its agent, as Start does a run; t.Prompt, when set, is the first
// turn's prompt. The agent must speak a protocol that holds several turns
// (a row of Protocols() that is live); a task that names none gets
// SessionProtocol's. Task.Permissions may also be Ask.
func (s *Settings) StartSession(ctx context.Context, t Task, o SessionOptions) (*Session, error) {
	if t.Protocol == "" {
		// Not the run's default, the CLI's headless mode: it holds one
		// prompt, and the session would end before its first turn.
		t.Protocol = s.SessionProtocol(t.Agent)
	}
	sess := &Session{o: o}
	if o.AskDeadline <= 0 {
		sess.o.AskDeadline = DefaultAskDeadline
	}
	if t.Permissions == Ask {
		sess.ask = true
		t.Permissions = FullAccess // the agent's own sandbox off: the caller decides each call
		if a, err := Lookup(t.Agent); err == nil && a.ACP != nil && a.ACP.CannotAsk != "" {
			closeObservers(o.Observers, nil) // as Start does for a task that cannot run
			return nil, &CannotAskError{Agent: t.Agent, Why: a.ACP.CannotAsk}
		}
	}
	prompt := t.Prompt
	if prompt != "" && BlankPrompt(prompt) {
		// Refused before an agent is started for it, as Send refuses it.
		closeObservers(o.Observers, nil)
		return nil, ErrBlankPrompt
	}
	if err := o.validate(); err != nil {
		closeObservers(o.Observers, nil)
		return nil, err
	}
	t.Prompt = ""
	ctx, sess.halt = context.WithCancelCause(ctx)
	if _, err := s.start(ctx, t, o.Options, sess); err != nil {
		sess.halt(nil)
		return nil, err
	}
	// A session whose agent died during a turn still has that turn in
	// flight for its Conversation: once the run is over, Send refuses.
	// This goroutine most often ends the run, so the callbacks of its
	// last events run here: one that panics ends every run first.
	go func() {
		defer process.ContainPanic()
		_, _ = sess.Wait()
	}()
	if prompt != "" && sess.conv != nil {
		// Queued: sent once the session is open.
		if err := sess.Send(prompt); err != nil {
			return sess, err
		}
	}
	return sess, nil
}

// attach takes the run's session protocol, before its Begin: false when
// it holds one prompt a session only.
func (s *Session) attach(p adapters.Session) bool {
	s.conv, _ = p.(adapters.Conversation)
	if s.conv == nil {
		return false
	}
	s.conv.Converse(s.ask)
	s.watch()
	return true
}

// RunID returns the run id stamped on every event of the session.
func (s *Session) RunID() string { return s.run.RunID() }

// Send sends prompt as the next turn: at once when no turn is in
// progress, else when the turn in progress ends. ErrBlankPrompt for a
// prompt with no text; ErrSessionOver once the session has ended or Close
// was called; ErrQueueFull while too many prompts wait.
func (s *Session) Send(prompt string) error {
	if BlankPrompt(prompt) {
		return ErrBlankPrompt
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conv == nil || s.ending || s.over || s.run.proc == nil {
		return ErrSessionOver
	}
	bodies, err := s.conv.Prompt(prompt)
	switch {
	case errors.Is(err, ErrQueueFull):
		return ErrQueueFull // not over: the caller sends it again later
	case err != nil:
		if len(bodies) > 0 {
			// The agent does not read the prompt: the session ends here,
			// on the caller's goroutine, whose panic is the caller's.
			s.run.endWith(bodies)
		}
		return fmt.Errorf("%w: %w", ErrSessionOver, err)
	}
	if len(bodies) > 0 {
		s.run.stream.Emit(bodies...)
		for _, b := range bodies {
			s.after(b)
		}
		s.run.flushOut()
	}
	s.watch()
	return nil
}

// Interrupt ends the turn in progress, which ends cancelled however the
// agent ends it: the agent is asked over its
// protocol (ACP session/cancel, Claude's interrupt) and, when it has not
// ended the turn 2 s later (8 s when it acknowledged the request:
// adapters.CancelAcknowledger), stopped as Run.Interrupt stops it, which
// ends the session. With no turn in progress it does nothing, but for a
// prompt sent whose turn the agent has not begun (Claude Code's, until
// it takes the prompt up): that turn is asked to end as it begins.
func (s *Session) Interrupt() { s.stopTurn(0, false) }

// Stop ends the session at once, whatever turn is in progress, as
// Run.Interrupt ends a run: SIGINT to the agent's group, then SIGTERM,
// then SIGKILL after the grace; a second call within 2 s of the first
// (or of the cancellation of the session's context) kills the group at
// once. The session ends cancelled (ErrInterrupted).
func (s *Session) Stop() {
	if s.run.proc != nil {
		s.stopped.CompareAndSwap(0, stopCancel)
		s.run.proc.Interrupt()
	}
}

// InFlight returns the tool calls started and not yet ended, oldest first,
// as Run.InFlight does.
func (s *Session) InFlight() []event.OpenCall { return s.run.InFlight() }

// stopTurn asks the agent to end turn n (0: the turn in progress) and
// stops it if it has not cancelGrace later; timeout: n outlived
// TurnTimeout. While a callback holds the session (lockWithin), the agent
// cannot be asked over its protocol: it is stopped as one that ignored
// the request.
func (s *Session) stopTurn(n int, timeout bool) {
	if !s.lockOrStop(n, timeout) {
		return
	}
	if n == 0 && !s.inTurn && s.run.canceler != nil && s.pendingStart() {
		// The prompt written has no turn yet: the agent has it, and
		// ends the turn it begins for it as it begins (after).
		s.interruptNext = true
		s.mu.Unlock()
		return
	}
	if n == 0 {
		n = s.turn
	}
	s.askEnd(n)
	s.mu.Unlock()
}

// pendingStarter is a Conversation whose prompt's turn begins when the
// agent takes the prompt up, not as it is written (Claude Code over
// stream-json: at its command_lifecycle started, the first at its
// system/init): PendingStart reports a prompt written whose turn has not
// begun.
type pendingStarter interface{ PendingStart() bool }

// pendingStart reports whether a prompt written waits for the agent to
// begin its turn. mu is held.
func (s *Session) pendingStart() bool {
	p, ok := s.conv.(pendingStarter)
	return ok && p.PendingStart()
}

// askEnd asks the agent to end turn n, and stops it if it has not
// cancelGrace later (stopTurn). mu is held; the grace's checks take it
// later. Neither the request nor a stop blocks: the request is queued on
// stdin, a stop signals.
func (s *Session) askEnd(n int) {
	// An agent being stopped already (a turn over its timeout) is not
	// asked again, nor signalled twice, which would kill it at once.
	live := s.inTurn && s.turn == n && s.run.proc != nil && s.stopped.Load() == 0
	// Asked under mu, which feed holds: the Canceler cancels whatever
	// turn it has in flight, and turn n could otherwise end, and the next
	// prompt go, between the check and the request. (mu before the
	// Conversation's lock is Send's and feed's order; the request is
	// queued on stdin, never blocking.)
	asked := live && s.run.canceler != nil && s.run.canceler.Cancel()
	if asked {
		// Asked, the turn is cancelled (or out of time) however the
		// agent ends it, and its permission requests wait for nobody.
		s.cancelled = n
		s.watch()
	}
	timedOut := s.timedOut == n
	if !live {
		return
	}
	if !asked {
		s.stopAgent(timedOut)
		return
	}
	var check func(graces int)
	check = func(graces int) {
		if !s.lockOrStop(n, timedOut) {
			return
		}
		ignored := s.inTurn && s.turn == n
		if ignored && graces < ackedGraces && s.acked() {
			s.mu.Unlock()
			afterFunc(cancelGrace, func() { check(graces + 1) })
			return
		}
		timedOut := s.timedOut == n
		s.mu.Unlock()
		if ignored {
			// The turn stays open while the agent is stopped: what it
			// still says of the turn (its usage, its end, cancelled, as
			// it answers the signal) is the turn's, which ends timeout
			// (before) or, when the agent says nothing more, is closed
			// so by the session's end.
			s.stopAgent(timedOut)
		}
	}
	afterFunc(cancelGrace, func() { check(0) })
}

// lockWithin takes mu, unless it is still held d later: a callback of the
// session's (an event to a consumer that reads none) holds it with the
// line being fed. Then it returns false, without mu, and the caller acts
// without it: a consumer holds up the events, never a budget or an
// interrupt. The lock taken too late is let go at once.
func (s *Session) lockWithin(d time.Duration) bool {
	if s.mu.TryLock() {
		return true
	}
	got := make(chan struct{})
	go func() {
		s.mu.Lock()
		close(got)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-got:
		return true
	case <-t.C:
		go func() {
			<-got
			s.mu.Unlock()
		}()
		return false
	}
}

// lockOrStop takes mu within cancelGrace (lockWithin), or else, without
// it, stops the agent as one that ignored the request to end turn n (0:
// the turn in progress) when that turn is still open, and returns false.
func (s *Session) lockOrStop(n int, timeout bool) bool {
	if s.lockWithin(cancelGrace) {
		return true
	}
	if open := s.openTurn.Load(); open != 0 && (n == 0 || open == int64(n)) {
		s.stopAgent(timeout)
	}
	return false
}

// stopAgent stops the agent, which ends the session. A turn that outlived
// TurnTimeout stops it as a watchdog stops a run: nobody interrupted the
// session, so it ends timeout (ErrTurnTimeout), not cancelled. Otherwise
// as Run.Interrupt does. An agent stopped already is left to that stop:
// a second signal would kill it at once.
func (s *Session) stopAgent(timedOut bool) {
	switch {
	case timedOut && s.stopped.CompareAndSwap(0, stopTimeout):
		s.halt(ErrTurnTimeout)
	case !timedOut && s.stopped.CompareAndSwap(0, stopCancel):
		s.run.proc.Interrupt()
	}
}

// Why harness stopped a session's agent (Session.stopped).
const (
	stopCancel  = 1 // an interrupt: the session ends cancelled
	stopTimeout = 2 // a turn over TurnTimeout: the session ends timeout
)

// ackedGraces is how many more cancelGraces an agent that acknowledged
// the cancel of its turn has to end it.
const ackedGraces = 3

// acked reports whether the agent acknowledged the cancel of the turn in
// progress (adapters.CancelAcknowledger). mu is held.
func (s *Session) acked() bool {
	a, ok := s.conv.(adapters.CancelAcknowledger)
	return ok && a.CancelAcknowledged()
}

// Answer answers the permission request of callID (a permission_request
// event); false when none of that id is pending.
func (s *Session) Answer(callID string, allow bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conv == nil {
		return false
	}
	answered, ended := s.conv.Answer(callID, allow)
	if !answered {
		return false
	}
	// Answered: its deadline is void. callID is the stream's (a reused
	// id renamed "ID#n"), the deadline's key the agent's, as the
	// Conversation's.
	if id, d, ok := jsonrpc.Asked(s.asks, callID); ok {
		d.timer.Stop()
		delete(s.asks, id)
	}
	s.watch() // the agent owes the answer again
	if len(ended) > 0 {
		s.run.endWith(ended) // the agent does not read the answer (as Send)
	}
	return true
}

// deadline starts the deadline of the permission request of callID (the
// agent's id). An agent reuses its call ids (ACP agents from turn to
// turn): the deadline of an earlier request of the id is stopped, and
// seq keeps one that fires all the same from denying this request. mu is
// held.
func (s *Session) deadline(callID string) {
	if old := s.asks[callID]; old != nil {
		old.timer.Stop()
	}
	if s.asks == nil {
		s.asks = make(map[string]*askDeadline)
	}
	s.askSeq++
	seq := s.askSeq
	s.asks[callID] = &askDeadline{seq: seq, timer: afterFunc(s.o.AskDeadline, func() { s.expire(callID, seq) })}
}

// expire denies the request seq of callID if it is still the one its
// deadline is for. A request withdrawn or cleared meanwhile is not
// pending: the Conversation answers nothing.
func (s *Session) expire(callID string, seq int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.asks[callID]; d == nil || d.seq != seq {
		return
	}
	delete(s.asks, callID)
	_, ended := s.conv.Answer(callID, false)
	s.watch()
	if len(ended) > 0 {
		s.run.endWith(ended) // on the deadline's timer, which contains a panic
	}
}

// askWithdrawer is a Conversation whose agent may withdraw a permission
// request it made (Claude Code's control_cancel_request): Asking reports
// whether the request of callID (the agent's id) still waits for Answer.
type askWithdrawer interface{ Asking(callID string) bool }

// dropWithdrawn stops the deadlines of the permission requests the agent
// withdrew: they wait for nobody, and would keep the idle watchdog off
// (asking) until their deadline. mu is held.
func (s *Session) dropWithdrawn() {
	w, ok := s.conv.(askWithdrawer)
	if !ok {
		return
	}
	for id, d := range s.asks {
		if !w.Asking(id) {
			d.timer.Stop()
			delete(s.asks, id)
		}
	}
}

// dropAsks stops the deadlines of the permission requests still waiting:
// their turn ended, and the Conversation forgot them with it (every
// protocol's agent asks nothing across turns). mu is held.
func (s *Session) dropAsks() {
	for _, d := range s.asks {
		d.timer.Stop()
	}
	clear(s.asks)
}

// Close ends the session once every prompt sent has been answered: the
// agent's stdin is closed, it exits (or the linger budget ends it), and
// Close returns the session's result as Wait does.
func (s *Session) Close() (*event.Result, error) {
	s.end()
	return s.Wait()
}

// end asks the session's end, under mu: deferred, as a callback may
// panic at the session's report (finishIfDone).
func (s *Session) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ending = true
	if s.conv != nil {
		s.conv.End()
	}
	s.finishIfDone()
}

// Wait blocks until the session is over (Close, the agent's death, a
// budget, ctx) and returns its result, as Run.Wait does.
func (s *Session) Wait() (*event.Result, error) {
	// Deferred: a callback that panics at the run's end (recovered by
	// the caller) leaves no timer nor context behind.
	defer func() {
		s.halt(nil) // the agent is gone: the context's resources go with it
		s.mu.Lock()
		defer s.mu.Unlock()
		s.over = true
		for _, d := range s.asks {
			d.timer.Stop() // nothing to deny any more
		}
		s.asks = nil
		s.stopTurnTimer()
		s.stopOwnWait()
	}()
	return s.run.Wait()
}

// feed is Run.feed of a live session's line, under the session's lock.
func (s *Session) feed(p adapters.Parser, buf []event.Body, line []byte) []event.Body {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.run.feed(p, buf, line)
	s.dropWithdrawn()
	if s.interruptNext && !s.inTurn && !s.pendingStart() {
		// The prompt interrupted before its turn began has none (the
		// agent answered it in a turn of its own): nothing is left to end.
		s.interruptNext = false
	}
	s.finishIfDone()
	s.agentDone()
	s.watch()
	return out
}

// ownTurns is a Conversation whose agent begins turns by itself (Claude
// Code answering the end of a background command): OwnTurnDue reports
// one may still come, after the caller's last turn too.
type ownTurns interface{ OwnTurnDue() bool }

// agentDone tells the supervisor, once the session is closed, that the
// agent is done, which starts its linger budget: not while a turn is in
// progress, nor while a turn of the agent's own is due, for up to the
// linger budget from the end of the last turn (ownWait). Such a turn,
// begun after the caller's last, is a turn like any other (the idle
// watchdog and TurnTimeout bound it), not an agent that lingers. mu is
// held.
func (s *Session) agentDone() {
	if !s.closed || s.done || s.run.proc == nil || s.inTurn {
		return
	}
	linger := s.run.task.Budgets.Linger
	if o, ok := s.conv.(ownTurns); ok && linger > 0 && !s.ownOverdue && o.OwnTurnDue() {
		if s.ownWait == nil {
			s.ownWaits++
			n := s.ownWaits
			s.ownWait = afterFunc(linger, func() { s.ownTurnOverdue(n) })
		}
		return
	}
	s.done = true
	s.stopOwnWait()
	s.run.proc.AgentDone()
}

// ownTurnOverdue ends wait n for a turn of the agent's own: a background
// command that runs on (a server) would hold the session. A wait stopped
// too late (the turn began as its timer fired) is no longer the wait in
// force, and changes nothing.
func (s *Session) ownTurnOverdue(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ownWait == nil || n != s.ownWaits {
		return
	}
	s.ownWait = nil
	s.ownOverdue = true
	s.agentDone()
}

// stopOwnWait stops the wait for a turn of the agent's own. mu is held.
func (s *Session) stopOwnWait() {
	if s.ownWait != nil {
		s.ownWait.Stop()
		s.ownWait = nil
	}
}

// before sees the bodies of a line before the stream has them: a turn's
// end gets the status of what the session did to the turn (turnEnding),
// after the error that says why when there is one; a permission request
// gets its deadline. It returns bodies, changed. mu is held.
func (s *Session) before(bodies []event.Body) []event.Body {
	n, open := s.turn, s.inTurn
	for i := 0; i < len(bodies); i++ {
		switch v := bodies[i].(type) {
		case *event.TurnStart:
			n, open = n+1, true // the next prompt, sent as the turn before it ended
		case *event.TurnEnd:
			if !open {
				break // of no turn: the stream drops it
			}
			open = false
			if e := s.turnEnding(v, n); e != nil {
				bodies = slices.Insert(bodies, i, event.Body(e))
				i++
			}
		case *event.PermissionRequest:
			v.DeadlineMS = s.o.AskDeadline.Milliseconds()
			s.deadline(v.CallID)
		}
	}
	return bodies
}

// turnEnding gives the agent's end of turn n the status of what was
// done to the turn (endTurnAs): timeout for a turn over TurnTimeout, or
// that ended as harness stopped the agent for it; cancelled for a turn
// the caller interrupted (Interrupt, Stop, the context's end). It returns
// the error to go before it, if any. mu is held.
func (s *Session) turnEnding(v *event.TurnEnd, n int) *event.Error {
	s.openTurn.Store(0)
	s.dropAsks()
	stopped := ""
	switch why := s.stopped.Load(); {
	case n == s.timedOut || why == stopTimeout:
		stopped = event.ResultTimeout
	case n == s.cancelled || why == stopCancel || s.run.interrupted.Load():
		stopped = event.ResultCancelled
	}
	return endTurnAs(v, stopped)
}

// endTurnAs gives an agent's end of a turn of a live session the status
// of what harness did to the turn, whatever the agent answered: stopped
// is event.ResultTimeout for a turn out of time, event.ResultCancelled
// for one interrupted (an agent may finish the turn, end_turn, as the
// request reaches it: a run so interrupted ends cancelled too), "" for a
// turn harness left alone. A turn the agent ended cancelled by itself,
// though harness did not ask it to (codex-acp after a refused
// permission), failed: its status is error, and endTurnAs returns the
// error to go before it, the one a run so ended fails with, but not
// fatal (the session goes on); nil otherwise. A replay of a session's
// log, whose record says how each turn was stopped, needs the same rule
// to give the recorded stream again.
func endTurnAs(v *event.TurnEnd, stopped string) *event.Error {
	switch {
	case stopped != "":
		v.Status = stopped
	case v.Status == event.ResultCancelled:
		v.Status = event.ResultError
		return gaveUp()
	}
	return nil
}

// after sees a turn start or end the stream has sent. mu is held.
func (s *Session) after(b event.Body) {
	if s == nil {
		return
	}
	switch v := b.(type) {
	case *event.TurnStart:
		s.turn++
		s.inTurn = true
		s.openTurn.Store(int64(s.turn))
		if s.interruptNext && v.Origin != event.OriginAgent {
			// Interrupted before it began (stopTurn): asked now, with
			// the line that began it, as an interrupt during it is.
			s.interruptNext = false
			s.askEnd(s.turn)
		}
		// A turn begun after the session closed (the agent's own) has
		// its own bounds; after it the wait for the next begins again.
		s.stopOwnWait()
		s.ownOverdue = false
		if d := s.o.TurnTimeout; d > 0 {
			n := s.turn
			s.stopTurnTimer()
			s.turnTimer = afterFunc(d, func() { s.turnTimedOut(n) })
		}
	case *event.TurnEnd:
		s.inTurn = false
		s.stopTurnTimer()
	}
}

// stopTurnTimer stops the timer of the turn that ended. mu is held.
func (s *Session) stopTurnTimer() {
	if s.turnTimer != nil {
		s.turnTimer.Stop()
		s.turnTimer = nil
	}
}

// turnTimedOut ends turn n, over its budget, if it is still in progress.
func (s *Session) turnTimedOut(n int) {
	if !s.lockOrStop(n, true) {
		return
	}
	live := s.inTurn && s.turn == n
	if live {
		s.timedOut = n
	}
	s.mu.Unlock()
	if live {
		s.stopTurn(n, true)
	}
}

// watch runs the idle watchdog only while the agent owes an answer: a
// turn is in progress, and no permission request of it waits for the
// caller (that wait is the caller's, bounded by the ask deadline, and
// the agent's silence counts again from the answer). mu is held.
func (s *Session) watch() {
	if s.conv != nil && s.run.proc != nil {
		s.run.proc.Awaiting(!s.conv.Busy() || s.asking())
	}
}

// asking reports whether a permission request of the turn in progress
// waits for the caller's answer: one the turn's interrupt withdrew does
// not. mu is held.
func (s *Session) asking() bool {
	return len(s.asks) > 0 && s.cancelled != s.turn
}

// finishIfDone ends a session that is over by the caller's wish: the
// session's own terminal report (success: ended as asked), then the
// agent's stdin closed and the linger budget. mu is held.
func (s *Session) finishIfDone() {
	if s.closed || s.conv == nil || s.run.proc == nil || !s.conv.Done() {
		return
	}
	s.closed = true
	// Deferred: the agent is told even when a callback panics at the
	// report, or it would be left waiting for its stdin's end.
	defer func() {
		s.run.proc.Stdin().Close()
		s.agentDone()
	}()
	if s.ending && !s.run.stream.AgentDone() {
		s.run.stream.Emit(&event.Result{Status: event.ResultSuccess})
		s.run.flushOut()
	}
}
