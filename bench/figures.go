package bench

import (
	"time"

	"github.com/agentharness/harness/event"
)

// Reasons a run has that are not an event's error code.
const (
	// ReasonSetup: the run could not be started (tree, Setup hook, task).
	ReasonSetup = "setup"
	// ReasonUnsupported: the task asks for what this machine or engine
	// cannot give (GPUs, a network allowlist, …); the run was not made.
	ReasonUnsupported = "unsupported"
)

// StatusSkipped is the status of a run that never started because the
// bench was cancelled first.
const StatusSkipped = "skipped"

// figures folds one run's events into its per-run figures: the counts
// are the run's event.Tally; the times to first output and first tool are
// bench's own, measured on its clock. It is used by one run's callbacks,
// which the harness calls one at a time.
type figures struct {
	firstOutput, firstTool *int64
	tally                  event.Tally
}

func newFigures() *figures { return &figures{} }

// add records one event seen at elapsed since the run started. The first
// output is the first event from the agent after session_start — text,
// reasoning, a message, a tool call or usage — not the harness's own
// warnings, errors and result.
func (f *figures) add(ev event.Event, elapsed time.Duration) {
	f.tally.Add(ev)
	ms := elapsed.Milliseconds()
	switch ev.Body.(type) {
	case *event.SessionStart, *event.Warning, *event.Result, *event.Native, *event.Error:
		return
	case *event.ToolStart:
		if f.firstTool == nil {
			f.firstTool = &ms
		}
	}
	if f.firstOutput == nil {
		f.firstOutput = &ms
	}
}

// fill sets rr's figures from the events and the result (nil when the
// run ended without one).
func (f *figures) fill(rr *RunReport, res *event.Result) {
	t := &f.tally
	rr.FirstOutputMS, rr.FirstToolMS = f.firstOutput, f.firstTool
	rr.ToolCalls = t.ToolCalls
	rr.ToolsByKind = t.ToolsByKind
	rr.ReportedModel = t.Model
	if e := t.Fatal; e != nil {
		rr.Reason, rr.Detail = e.Code, e.Message
		rr.Killed = e.Killed != nil && *e.Killed
	}
	if res == nil {
		if rr.Status == "" || rr.Status == StatusSkipped {
			rr.Status = event.ResultError
		}
		return
	}
	if !t.Ended() {
		t.Add(event.Event{Body: res}) // a result the callbacks did not see
	}
	rr.Status = res.Status
	rr.Turns = t.Turns()
	rr.Tokens = t.Tokens()
	rr.CostUSD, rr.CostEstimated = t.Cost()
	rr.ExitCode, rr.Signal = res.ExitCode, res.Signal
	if res.Status != event.ResultSuccess && rr.Reason == "" {
		rr.Reason = event.ErrAgentError // the agent's own terminal event said so
	}
}
