package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/process"
)

// stderrTailBytes is how much of the agent's stderr a fatal error carries.
const stderrTailBytes = 8 << 10

// ErrCallbackPanic is Wait's error once a callback of the caller's
// panicked as the run ended, in a Wait whose caller recovered the panic:
// the run is over all the same (its processes gone, its observers closed
// with the result), and the result is the run's, but the events from
// the panic on reached no callback. It wraps the run's own error, if any.
var ErrCallbackPanic = errors.New("harness: a callback panicked as the run ended")

// Wait blocks until the run is over — the agent has exited, its output is
// read and every process it started is gone — and returns the result event.
// The error is nil on success; otherwise it wraps ErrIdleTimeout,
// ErrHardTimeout (ErrTurnTimeout for a live session's turn), ErrInterrupted,
// ErrAgentFailed, ErrCallbackPanic, or a *NotInstalledError or spawn
// error. Wait may be called more than once.
//
// Wait must be called: it emits the run's last events (its fatal error,
// its result) and closes its observers (a session log stays "running"
// until then). The agent's private temporary directory
// (adapters.Agent.PrivateTmp) and its lock go as soon as the run is
// over, Wait or not.
func (r *Run) Wait() (*event.Result, error) {
	r.waitOnce.Do(r.wait)
	return r.result, r.err
}

// wait ends the run once. sync.Once counts a call that panicked as done:
// a callback that panics in end (recovered by the caller) leaves the end
// to endAfterPanic, as the panic goes up.
func (r *Run) wait() {
	ended := false
	defer func() {
		if ended {
			return
		}
		// What goes up is the first panic; nil when end left by
		// runtime.Goexit (a test's FailNow in a callback), which then
		// goes on unless an observer's Close panicked.
		p := recover()
		if first := r.endAfterPanic(); p == nil {
			p = first
		}
		if p != nil {
			panic(p)
		}
	}()
	r.end()
	ended = true
}

// endAfterPanic ends a run whose end a callback of the caller's panicked
// in: with the callbacks silenced (one of them is broken), the result is
// the one the stream sent (or makes now), the observers not closed yet
// are closed with it, and a later Wait returns it with ErrCallbackPanic.
// It returns the first panic of those Closes, recovered: each observer is
// closed, whatever the others' Close does.
func (r *Run) endAfterPanic() (panicked any) {
	r.silenced.Store(true)
	var o event.Outcome
	if r.outcome != nil {
		o = *r.outcome
	}
	r.result = r.stream.Finish(o) // the result sent already, if the panic was at it
	err := r.err
	if r.spawnErr != nil {
		err = r.spawnErr
	}
	if err == nil && r.result.Status != event.ResultSuccess {
		err = ErrAgentFailed
	}
	// Set before the Closes, which may panic too: a later Wait says so.
	r.err = ErrCallbackPanic
	if err != nil {
		r.err = fmt.Errorf("%w: %w", ErrCallbackPanic, err)
	}
	for r.closed < len(r.opts.Observers) {
		func() {
			defer func() {
				if p := recover(); p != nil && panicked == nil {
					panicked = p
				}
			}()
			r.closeNext(r.result)
		}()
	}
	return panicked
}

func (r *Run) end() {
	if r.spawnErr != nil {
		r.removeTmp()
		r.failSpawn()
		return
	}
	out := r.proc.Wait()
	r.stopNoting()
	r.removeTmp() // nothing of the run is left to use it
	o := event.Outcome{Lingered: errors.Is(out.Reason, process.ErrLingered), Signal: out.Signal, Resumed: r.task.Resume}
	if out.Exited && out.ExitCode >= 0 {
		o.ExitCode = event.Int(out.ExitCode)
	}
	r.outcome = &o // as it stands, for endAfterPanic
	r.flush()
	fatal := &event.Error{Fatal: true, Partial: r.partial(out)}
	if out.Killed {
		fatal.Killed, fatal.Signal = event.Bool(true), out.KillSignal
	}
	switch {
	case r.live != nil && errors.Is(out.Reason, ErrTurnTimeout):
		// A live session's turn outlived its budget and the agent did not
		// end it when asked: stopped through the context, but a timeout as
		// the hard budget's, not an interrupt (checked first: the reason
		// also matches ErrInterrupted and ErrHardTimeout).
		fatal.Code, fatal.Hint = event.ErrHardTimeout, "the agent ignored the request to end a turn over its limit; raise the turn timeout for longer turns"
		fatal.Message = fmt.Sprintf("the turn exceeded its %s limit and did not end when asked; the agent was stopped", r.live.o.TurnTimeout)
		o.Status, o.ToolStatus, r.err = event.ResultTimeout, event.StatusTimeout, ErrTurnTimeout
	case errors.Is(out.Reason, process.ErrIdleTimeout):
		fatal.Code, fatal.Hint = event.ErrIdleTimeout, "the agent printed nothing for the idle budget; raise the idle timeout if it works silently for long"
		// The silence the watchdog fired at: by now the kill grace has
		// been added to it.
		fatal.Message = fmt.Sprintf("no output for %s; the agent was stopped", out.Silence.Round(time.Millisecond))
		o.Status, o.ToolStatus, r.err = event.ResultTimeout, event.StatusTimeout, ErrIdleTimeout
	case errors.Is(out.Reason, process.ErrHardTimeout):
		fatal.Code, fatal.Hint = event.ErrHardTimeout, "the run hit its wall-clock limit; raise the timeout for longer tasks"
		fatal.Message = fmt.Sprintf("the run exceeded its %s limit; the agent was stopped", r.task.Budgets.Hard)
		o.Status, o.ToolStatus, r.err = event.ResultTimeout, event.StatusTimeout, ErrHardTimeout
	case errors.Is(out.Reason, process.ErrInterrupted):
		fatal.Code, fatal.Message = event.ErrInterrupted, "interrupted; the agent was stopped"
		fatal.Hint = "resume the agent's session to continue where it stopped"
		o.Status, o.ToolStatus, r.err = event.ResultCancelled, event.StatusCancelled, ErrInterrupted
	case !o.Lingered && (out.Signal != "" || (o.ExitCode != nil && *o.ExitCode != 0)):
		fatal.Code = event.ErrProcessExit
		fatal.ExitCode = o.ExitCode
		if out.Signal != "" {
			fatal.Message = "the agent died by " + out.Signal
			fatal.Signal = out.Signal
			fatal.Class = event.ClassCrash
		} else {
			fatal.Message = fmt.Sprintf("the agent exited with status %d", *o.ExitCode)
			fatal.Class = adapters.ClassifyError(string(out.StderrTail))
		}
		fatal.Hint = "see partial.stderr_tail and the session log"
	case r.cancelled.Load() && !r.stream.Fatal():
		// Interrupted by a cancel over the session (adapters.Canceler):
		// the agent ended its turn (or lingered) without a signal.
		fatal.Code, fatal.Message = event.ErrInterrupted, "interrupted: the agent was asked to end its turn and stopped"
		fatal.Hint = "resume the agent's session to continue where it stopped"
		o.Status, o.ToolStatus, r.err = event.ResultCancelled, event.StatusCancelled, ErrInterrupted
	case r.live == nil && r.stream.AgentStatus() == event.ResultCancelled && !r.stream.Fatal():
		// Nobody stopped or asked it (every case above is harness's own
		// stop): the agent gave its turn up by itself, as codex-acp does
		// after a permission read-only refused. The run failed, and this
		// says why.
		e := gaveUp()
		fatal.Code, fatal.Message, fatal.Hint = e.Code, e.Message, e.Hint
	default:
		fatal = nil
	}
	switch {
	case fatal == nil || !r.stream.Fatal():
	case fatal.Code == event.ErrProcessExit:
		// The agent already reported why it failed (its own fatal
		// agent_error): the exit status that follows is a detail of that
		// failure, not a second one, and has its class: not one guessed
		// from the stderr around it (Gemini prints retries of other
		// failures there, and its class changed run to run).
		fatal.Fatal, fatal.Partial = false, nil
		if class, status := r.stream.FatalClass(); class != "" {
			fatal.Class, fatal.Status = class, status
		}
	case fatal.Code == event.ErrInterrupted && r.failedFirst.Load():
		// Interrupted after it had said it failed (most often as it
		// lingered): the run's one fatal error is the agent's, and the
		// run keeps the status the agent reported. An agent that fails
		// because it was interrupted is the interrupt's.
		fatal.Fatal, fatal.Partial = false, nil
		o.Status, r.err = "", nil
	}
	if fatal != nil {
		r.stream.Emit(fatal)
	}
	r.result = r.stream.Finish(o)
	r.flushOut()
	r.closeObservers(r.result)
	if r.err == nil && r.result.Status != event.ResultSuccess {
		r.err = ErrAgentFailed
	}
}

// gaveUp is the error of a turn the agent ended cancelled by itself,
// though harness did not ask it to: a run's fatal error (wait), a live
// session's turn's, not fatal (Session.turnEnding).
func gaveUp() *event.Error {
	return &event.Error{Code: event.ErrAgentError, Message: "the agent ended its turn cancelled, though harness did not ask it to",
		Hint: "see the calls before it: an agent may give up after a refused permission"}
}

// partial is what a fatal error saves of the run; the stream adds the last
// events.
func (r *Run) partial(out process.Outcome) *event.Partial {
	tail := out.StderrTail
	if len(tail) > stderrTailBytes {
		cut := len(tail) - stderrTailBytes
		whole := tail[cut-1] == '\n'
		tail = tail[cut:]
		if !whole {
			// The tail starts where the last line began, or the next
			// word: a secret the cut went through would be left for the
			// log's redactor as a piece it no longer knows.
			if i := bytes.IndexAny(tail, "\n \t"); i >= 0 {
				tail = tail[i+1:]
			} else {
				tail = nil
			}
		}
	}
	return &event.Partial{StderrTail: string(tail), LastActivityMSAgo: r.silence(out).Milliseconds()}
}

// silence is how long the agent had printed nothing when the run ended (a
// tool in flight may have stretched the idle budget past its setting).
func (r *Run) silence(out process.Outcome) time.Duration {
	if out.LastActivity.IsZero() {
		return 0
	}
	var now time.Time
	r.stream.Between(func() { now = r.now() }) // the clock is called as the callbacks are: one at a time
	return max(0, now.Sub(out.LastActivity))
}

func (r *Run) failSpawn() {
	e := &event.Error{Fatal: true, Partial: &event.Partial{}, Message: r.spawnErr.Error()}
	var nf *NotInstalledError
	status := event.ResultError
	switch {
	case errors.Is(r.spawnErr, context.Canceled) || errors.Is(r.spawnErr, context.DeadlineExceeded):
		// Cancelled before the agent could start: an interrupt, not a failure.
		e.Code, e.Message = event.ErrInterrupted, "interrupted before the agent started"
		status = event.ResultCancelled
		r.spawnErr = fmt.Errorf("%w: %w", ErrInterrupted, r.spawnErr)
	case errors.As(r.spawnErr, &nf):
		e.Code, e.Tried = event.ErrNotInstalled, nf.Tried
		e.Hint = "install it (make agents installs the pinned CLIs) or point --binary at it"
	default:
		e.Code = event.ErrSpawnFailed
	}
	r.outcome = &event.Outcome{Status: status}
	r.stream.Emit(e)
	r.result = r.stream.Finish(*r.outcome)
	r.flushOut()
	r.closeObservers(r.result)
	r.err = r.spawnErr
}
