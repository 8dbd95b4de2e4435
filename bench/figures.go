package bench

import (
	"time"

	"github.com/agentharness/harness/event"
)

// Reasons a run has that are not an event's error code.
const (
	// ReasonSetup: the run could not be started (tree, Setup hook, task).
	ReasonSetup = "setup"
)

// StatusSkipped is the status of a run that never started because the
// bench was cancelled first.
const StatusSkipped = "skipped"

// figures folds one run's events into its per-run figures. It is used by
// one run's callbacks, which the harness calls one at a time.
type figures struct {
	firstOutput, firstTool *int64
	tools                  int
	byKind                 map[string]int
	assistant              map[string]bool // assistant message ids (or texts) seen
	assistantN             int
	reportedModel          string
	fatal                  *event.Error
}

func newFigures() *figures {
	return &figures{byKind: map[string]int{}, assistant: map[string]bool{}}
}

// add records one event seen at elapsed since the run started. The first
// output is the first event from the agent after session_start — text,
// reasoning, a message, a tool call or usage — not the harness's own
// warnings, errors and result.
func (f *figures) add(ev event.Event, elapsed time.Duration) {
	ms := elapsed.Milliseconds()
	switch b := ev.Body.(type) {
	case *event.SessionStart:
		if b.Model != "" {
			f.reportedModel = b.Model
		}
		return
	case *event.Warning, *event.Result, *event.Native:
		return
	case *event.Error:
		if b.Fatal && f.fatal == nil {
			f.fatal = b
		}
		return
	case *event.ToolStart:
		f.tools++
		f.byKind[string(b.Kind)]++
		if f.firstTool == nil {
			f.firstTool = &ms
		}
	case *event.Message:
		if b.Role == event.RoleAssistant {
			key := b.MessageID
			if key == "" {
				f.assistantN++
			} else if !f.assistant[key] {
				f.assistant[key] = true
			}
		}
	}
	if f.firstOutput == nil {
		f.firstOutput = &ms
	}
}

// fill sets rr's figures from the events and the result (nil when the
// run ended without one).
func (f *figures) fill(rr *RunReport, res *event.Result) {
	rr.FirstOutputMS, rr.FirstToolMS = f.firstOutput, f.firstTool
	rr.ToolCalls = f.tools
	if len(f.byKind) > 0 {
		rr.ToolsByKind = f.byKind
	}
	rr.ReportedModel = f.reportedModel
	if f.fatal != nil {
		rr.Reason, rr.Detail = f.fatal.Code, f.fatal.Message
		rr.Killed = f.fatal.Killed != nil && *f.fatal.Killed
	}
	if res == nil {
		if rr.Status == "" || rr.Status == StatusSkipped {
			rr.Status = event.ResultError
		}
		return
	}
	rr.Status = res.Status
	rr.Turns = res.NumTurns
	if rr.Turns == 0 {
		rr.Turns = len(f.assistant) + f.assistantN
	}
	u := res.Usage
	rr.Tokens = Tokens{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadTokens,
		CacheWrite: u.CacheWriteTokens, Reasoning: u.ReasoningTokens}
	if res.CostUSD != nil {
		c := *res.CostUSD
		rr.CostUSD, rr.CostEstimated = &c, res.CostEstimated
	}
	rr.ExitCode, rr.Signal = res.ExitCode, res.Signal
	if res.Status != event.ResultSuccess && rr.Reason == "" {
		rr.Reason = event.ErrAgentError // the agent's own terminal event said so
	}
}
