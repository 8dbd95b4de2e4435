package process

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Outcome.Reason is one of the first four (or nil); Start
// returns the last two (wrapped) or a *NotFoundError.
var (
	// ErrIdleTimeout: no output and no tool call in flight for Options.Idle.
	ErrIdleTimeout = errors.New("process: idle timeout")
	// ErrHardTimeout: Options.Hard passed since spawn.
	ErrHardTimeout = errors.New("process: hard timeout")
	// ErrInterrupted: Proc.Interrupt was called or the context was
	// cancelled; in the latter case the reason also wraps the context's
	// cause (context.Canceled, context.DeadlineExceeded, …).
	ErrInterrupted = errors.New("process: interrupted")
	// ErrLingered: the agent printed its terminal event (Proc.AgentDone) and
	// had not exited Options.Linger later.
	ErrLingered = errors.New("process: lingered after result")

	// ErrBadDir: Options.Dir does not exist or is not a directory.
	ErrBadDir = errors.New("process: bad working directory")
	// ErrSpawn: the process could not be started; it wraps the cause.
	ErrSpawn = errors.New("process: spawn failed")
)

// NotFoundError reports an agent binary that is not installed: Name is
// the (first) name looked for, Tried every path that was looked at, in
// order. It is harness.NotInstalledError.
type NotFoundError struct {
	Name  string
	Tried []string
}

func (e *NotFoundError) Error() string {
	if len(e.Tried) == 0 {
		return fmt.Sprintf("%s is not installed: no directory to look in (PATH is empty)", e.Name)
	}
	return fmt.Sprintf("%s is not installed: tried %s", e.Name, strings.Join(e.Tried, ", "))
}

// interruptError is Outcome.Reason for an interrupt that came from the
// context: errors.Is matches both ErrInterrupted and the context's cause.
type interruptError struct{ cause error }

func (e *interruptError) Error() string { return ErrInterrupted.Error() + ": " + e.cause.Error() }

func (e *interruptError) Unwrap() []error { return []error{ErrInterrupted, e.cause} }
