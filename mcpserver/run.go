package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/logger"
)

// Limits of the event buffer each run keeps for run_events.
const (
	defaultMaxEvents     = 10000
	defaultMaxEventBytes = 32 << 20
	tailBytes            = 8 << 10
)

// Run states reported by run_status. A finished run has its result status.
const (
	StateRunning = "running"
)

// run is one agent run started by an MCP session. Its fields after the
// mutex are written by the harness callbacks (one at a time, in stream
// order) and read by the tool handlers and the notifier.
type run struct {
	id      string
	agent   string
	logPath string
	budgets Budgets
	start   time.Time
	now     func() time.Time
	h       *harness.Run
	done    chan struct{} // closed when Wait has returned and the result is set
	poke    chan struct{} // a notification is pending (cap 1)
	// notified is closed by the notifier once the run is over and its last
	// log notifications are sent.
	notified chan struct{}

	maxEvents, maxBytes int

	// cursor is where the last page read from the session log ended: the
	// seq of its last event and the offset after it, so that paging on
	// does not read the log from its start each time.
	cursorMu             sync.Mutex
	cursorSeq, cursorOff int64

	mu         sync.Mutex
	fromLog    bool     // run_events reads the session log; events stays empty
	events     [][]byte // encoded events, oldest first (runs without a session log)
	firstSeq   int64    // seq of events[0]
	bytes      int
	lastSeq    int64
	lastAt     time.Time  // when the last event was seen
	lastType   event.Type // type of the last non-warning event
	tally      event.Tally
	idleWarn   *event.Warning // the last idle warning, until an event follows it
	idleWarnAt time.Time
	pending    []logNote // log notifications not sent yet
	stdoutTail tail
	stderrTail tail
	result     *event.Result
	err        error
	cancelled  bool // cancel_run or the session's end, not the agent
	// evicted: the run is over and its events were dropped for the
	// session's bound on memory (retire); run_events has none of them.
	evicted bool
	// red redacts what events keeps, as the session log would have it
	// (harness.Run.Redactor): nil until Start has returned the run, and
	// the events kept until then are redacted when it is set
	// (keepRedacted).
	red *logger.Redactor

	// The run_agent call waiting for the run, if any.
	watchCtx   context.Context
	watchToken any
}

// logNote is one log notification to send.
type logNote struct {
	level string // "warning" or "error"
	data  map[string]any
}

// onEvent records one event of the run; called by the harness in stream
// order.
func (r *run) onEvent(ev event.Event) {
	line, err := event.AppendJSON(nil, ev)
	if err != nil {
		return
	}
	now := r.now()
	r.mu.Lock()
	r.store(ev.Seq, line)
	r.lastAt = now
	r.tally.Add(ev)
	switch b := ev.Body.(type) {
	case *event.Warning:
		switch b.Code {
		case event.WarnIdle:
			w := *b
			r.idleWarn, r.idleWarnAt = &w, now
			r.note("warning", idleMessage(b), map[string]any{"code": "idle", "idle_ms": b.IdleMS, "abort_in_ms": b.AbortInMS})
		case event.WarnToolStalled:
			r.note("warning", fmt.Sprintf("%s has been running for %s, past its %s budget; it is still allowed to run.",
				b.Name, roundDur(time.Duration(b.ElapsedMS)*time.Millisecond), roundDur(time.Duration(b.BudgetMS)*time.Millisecond)),
				map[string]any{"code": b.Code, "call_id": b.CallID, "elapsed_ms": b.ElapsedMS, "budget_ms": b.BudgetMS})
		}
	case *event.Error:
		if b.Fatal {
			code := errCode(b.Code)
			r.note("error", fmt.Sprintf("%s (%s)", b.Message, code), map[string]any{"code": code, "event_code": b.Code})
		}
		r.lastType, r.idleWarn = ev.Type, nil
	case *event.Native:
	default:
		r.lastType, r.idleWarn = ev.Type, nil
	}
	r.mu.Unlock()
}

// store appends an encoded event, dropping the oldest past the bounds;
// a run with a session log keeps none: its log has them all.
func (r *run) store(seq int64, line []byte) {
	r.lastSeq = seq
	if r.fromLog || r.evicted {
		return
	}
	if len(r.events) == 0 {
		r.firstSeq = seq
	}
	if r.red != nil {
		line = r.red.Redact(line)
	}
	r.events = append(r.events, line)
	r.bytes += len(line)
	for len(r.events) > 1 && (len(r.events) > r.maxEvents || r.bytes > r.maxBytes) {
		r.bytes -= len(r.events[0])
		r.events[0] = nil
		r.events = r.events[1:]
		r.firstSeq++
	}
}

// note queues a log notification and pokes the notifier; the caller holds
// r.mu.
func (r *run) note(level, msg string, data map[string]any) {
	data["message"] = msg
	data["run_id"] = r.id
	data["agent"] = r.agent
	r.pending = append(r.pending, logNote{level: level, data: data})
	select {
	case r.poke <- struct{}{}:
	default:
	}
}

func (r *run) takeNotes() []logNote {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.pending
	r.pending = nil
	return n
}

// onNative keeps the tails of the agent's stdout and stderr.
func (r *run) onNative(stream string, line []byte) {
	r.mu.Lock()
	if stream == event.StreamStderr {
		r.stderrTail.add(line)
	} else {
		r.stdoutTail.add(line)
	}
	r.mu.Unlock()
}

// finish records the run's end; called once by the waiter, which closes
// done after.
func (r *run) finish(res *event.Result, err error) {
	r.mu.Lock()
	r.result, r.err = res, err
	r.stdoutTail.trim()
	r.stderrTail.trim()
	r.mu.Unlock()
}

// finished reports whether the run is over.
func (r *run) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// useLog makes the run's session log at path the source of run_events:
// the events buffered until the log was known are dropped, and no more
// are kept.
func (r *run) useLog(path string) {
	r.mu.Lock()
	r.logPath, r.fromLog = path, true
	r.events, r.bytes = nil, 0
	r.mu.Unlock()
}

// keepRedacted makes red the redactor of the events r keeps for
// run_events when it has no session log, and redacts those kept before:
// the client is often another agent, and what run_events answers goes
// into its model's context, redacted as the session log is. The run's
// first events may come before Start returns it, so before red is known.
func (r *run) keepRedacted(red *logger.Redactor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.red = red
	r.bytes = 0
	for i, line := range r.events {
		r.events[i] = red.Redact(line)
		r.bytes += len(r.events[i])
	}
}

// eventPage is a page of run_events.
type eventPage struct {
	events  [][]byte // encoded events
	next    int64    // the seq of the last one, or after when none
	last    int64    // the seq of the newest event so far
	more    bool     // more events follow the page
	dropped int64    // events after after_seq no longer kept
	evicted bool     // the run's events were all dropped (run.evicted)
}

// page returns up to limit encoded events with seq > after.
func (r *run) page(after int64, limit int) (eventPage, error) {
	r.mu.Lock()
	if r.fromLog {
		p := eventPage{last: r.lastSeq}
		r.mu.Unlock()
		return r.pageLog(p, after, limit)
	}
	defer r.mu.Unlock()
	p := eventPage{next: after, last: r.lastSeq}
	if r.evicted {
		// None will come: the next page starts after the last.
		p.evicted, p.next, p.dropped = true, max(after, r.lastSeq), max(r.lastSeq-after, 0)
		return p, nil
	}
	if len(r.events) == 0 {
		return p, nil
	}
	if r.firstSeq > after+1 {
		p.dropped = r.firstSeq - after - 1
	}
	i := max(after-r.firstSeq+1, 0)
	for ; i < int64(len(r.events)) && len(p.events) < limit; i++ {
		p.events = append(p.events, r.events[i])
		p.next = r.firstSeq + i
	}
	p.more = i < int64(len(r.events))
	return p, nil
}

// pageLog reads a page from the session log, from the cursor when the
// page starts at or after it.
func (r *run) pageLog(p eventPage, after int64, limit int) (eventPage, error) {
	// What run_status reported is on the disk before the page is read.
	r.h.FlushSessionLog()
	r.cursorMu.Lock()
	defer r.cursorMu.Unlock()
	var off int64
	if r.cursorOff > 0 && after >= r.cursorSeq {
		off = r.cursorOff
	}
	dir, id := filepath.Dir(r.logPath), strings.TrimSuffix(filepath.Base(r.logPath), logger.ExtEvents)
	t, err := logger.OpenTailAt(dir, id, off)
	if err != nil {
		return p, fmt.Errorf("the run's session log cannot be read: %w", err)
	}
	defer t.Close()
	p.next = after
	var newest int64 // in the log: after_seq past the end is no event's
	for {
		line, err := t.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return p, fmt.Errorf("the run's session log cannot be read: %w", err)
		}
		seq, _ := logger.LineSeq(line)
		newest = max(newest, seq)
		if seq <= after {
			continue
		}
		if len(p.events) == limit {
			p.more = true
			break
		}
		p.events = append(p.events, bytes.Clone(line))
		p.next = seq
		r.cursorSeq, r.cursorOff = seq, t.Offset()
	}
	p.last = max(p.last, newest) // the log may be a line ahead of the callbacks
	return p, nil
}

// activity describes what the run is doing now, for progress messages.
func (r *run) activity(now time.Time) string {
	calls := r.h.InFlight()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.idleWarn != nil {
		abort := time.Duration(r.idleWarn.AbortInMS)*time.Millisecond - now.Sub(r.idleWarnAt)
		if abort > 0 {
			idle := time.Duration(r.idleWarn.IdleMS)*time.Millisecond + now.Sub(r.idleWarnAt)
			return fmt.Sprintf("No output for %s; aborting in %s unless output resumes.", roundDur(idle), roundDur(abort))
		}
	}
	if len(calls) > 0 {
		c := calls[0]
		return fmt.Sprintf("%s running for %s", c.Start.Name, secs(now.Sub(c.Since)))
	}
	since := r.start
	if !r.lastAt.IsZero() {
		since = r.lastAt
	}
	quiet := now.Sub(since)
	if quiet < 5*time.Second {
		switch r.lastType {
		case event.TypeReasoning, event.TypeReasoningDelta:
			return "thinking"
		case event.TypeTextDelta, event.TypeMessage:
			return "writing"
		}
	}
	return "waiting for output for " + secs(quiet)
}

// Status is the structured answer of run_status.
type Status struct {
	RunID          string         `json:"run_id" jsonschema:"the run's id"`
	Agent          string         `json:"agent"`
	State          string         `json:"state" jsonschema:"running, or the final status: success, error, timeout, cancelled"`
	ElapsedMS      int64          `json:"elapsed_ms"`
	LastActivityMS int64          `json:"last_activity_ms_ago" jsonschema:"milliseconds since the last event (or since the start)"`
	Activity       string         `json:"activity" jsonschema:"what the agent is doing now"`
	Events         int64          `json:"events" jsonschema:"seq of the last event"`
	ToolsInFlight  []InFlightTool `json:"tools_in_flight"`
	ToolsByKind    map[string]int `json:"tools_by_kind"`
	Budgets        Budgets        `json:"budgets"`
	EventsDropped  bool           `json:"events_dropped,omitempty" jsonschema:"the run is over and run_events no longer has its events: a server without session logs keeps a bounded amount of each session's finished runs' events, the oldest run's dropped first"`
}

// InFlightTool is a tool call still open.
type InFlightTool struct {
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	ElapsedMS int64  `json:"elapsed_ms"`
	Command   string `json:"command,omitempty"`
	Path      string `json:"path,omitempty"`
}

func (r *run) status() Status {
	now := r.now()
	st := Status{RunID: r.id, Agent: r.agent, State: StateRunning, ElapsedMS: now.Sub(r.start).Milliseconds(),
		Budgets: r.budgets, ToolsInFlight: []InFlightTool{}, ToolsByKind: map[string]int{}}
	if r.finished() {
		st.State = r.result.Status
		st.ElapsedMS = r.result.DurationMS
		st.Activity = "finished: " + r.result.Status
	} else {
		st.Activity = r.activity(now)
		for _, c := range r.h.InFlight() {
			cmd, _ := event.Cut(c.Start.Command, 300)
			st.ToolsInFlight = append(st.ToolsInFlight, InFlightTool{CallID: c.Start.CallID, Name: c.Start.Name,
				Kind: string(c.Start.Kind), ElapsedMS: now.Sub(c.Since).Milliseconds(), Command: cmd, Path: c.Start.Path})
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	last := r.lastAt
	if last.IsZero() {
		last = r.start
	}
	st.LastActivityMS = now.Sub(last).Milliseconds()
	st.Events = r.lastSeq
	st.EventsDropped = r.evicted
	maps.Copy(st.ToolsByKind, r.tally.ToolsByKind)
	return st
}

// Outcome is the structured content of run_agent's final result (and of
// cancel_run's): a summary on success, an error besides it otherwise.
type Outcome struct {
	RunID         string    `json:"run_id"`
	Agent         string    `json:"agent"`
	State         string    `json:"state" jsonschema:"running (wait=none), or the final status: success, error, timeout, cancelled"`
	Text          string    `json:"text,omitempty" jsonschema:"the agent's final answer"`
	TextTruncated bool      `json:"text_truncated,omitempty" jsonschema:"text is only the first 256 KiB of the agent's answer (the event stream's cap on a text)"`
	Summary       *Summary  `json:"summary,omitempty"`
	Error         *RunError `json:"error,omitempty" jsonschema:"why the run did not succeed"`
	Budgets       Budgets   `json:"budgets"`
	Hint          string    `json:"hint,omitempty"`
}

// Summary sums up a finished run.
type Summary struct {
	Status        string         `json:"status"`
	DurationMS    int64          `json:"duration_ms"`
	Turns         int            `json:"turns,omitempty"`
	ToolsByKind   map[string]int `json:"tools_by_kind"`
	ToolCalls     int64          `json:"tool_calls"`
	Events        int64          `json:"events"`
	Tokens        event.Tokens   `json:"tokens"`
	CostUSD       *float64       `json:"cost_usd,omitempty"`
	CostEstimated bool           `json:"cost_estimated,omitempty"`
	SessionID     string         `json:"session_id,omitempty" jsonschema:"the agent's own session id: run_agent's resume continues it"`
	SessionLog    string         `json:"session_log,omitempty" jsonschema:"path of harness's session log of the run"`
	ExitCode      *int           `json:"exit_code,omitempty"`
}

// RunError is the structured error of a run that did not succeed.
type RunError struct {
	Code        string   `json:"code" jsonschema:"ETIMEDOUT (hard deadline), EIDLE (no output), ECANCELED (cancelled), or the event stream's code: not_installed, spawn_failed, process_exit, agent_error, …"`
	EventCode   string   `json:"event_code,omitempty" jsonschema:"the error code in the run's event stream"`
	Message     string   `json:"message"`
	Class       string   `json:"class,omitempty" jsonschema:"auth, rate_limit, overloaded, context_overflow, bad_request, network, crash"`
	IdleMS      int64    `json:"idle_ms" jsonschema:"time without any event at the end of the run"`
	WallMS      int64    `json:"wall_ms" jsonschema:"wall-clock duration of the run"`
	Killed      bool     `json:"killed" jsonschema:"whether harness killed the agent's processes"`
	Signal      string   `json:"signal,omitempty" jsonschema:"the last signal harness sent (SIGTERM, SIGKILL) or the one the agent died of"`
	ExitCode    *int     `json:"exit_code,omitempty"`
	Partial     Partial  `json:"partial"`
	Suggestions []string `json:"suggestions"`
}

// Partial is what is saved of a run that did not finish.
type Partial struct {
	LastEvents     []string `json:"last_events" jsonschema:"the last events, as type: summary"`
	StdoutTail     string   `json:"stdout_tail"`
	StderrTail     string   `json:"stderr_tail"`
	Events         int64    `json:"events"`
	ToolCalls      int64    `json:"tool_calls"`
	LastActivityAt string   `json:"last_activity_at,omitempty" jsonschema:"RFC 3339 time of the last event"`
	LastActivityMS int64    `json:"last_activity_ms_ago"`
}

// outcome builds the final structured result of a finished run.
func (r *run) outcome() Outcome {
	res := r.result
	o := Outcome{RunID: r.id, Agent: r.agent, State: res.Status, Text: res.Text, TextTruncated: res.TextTruncated, Budgets: r.budgets}
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.tally.Clone()
	if !t.Ended() {
		t.Add(event.Event{Body: res}) // a result the callbacks did not see
	}
	kinds := map[string]int{}
	maps.Copy(kinds, t.ToolsByKind)
	o.Summary = &Summary{Status: res.Status, DurationMS: res.DurationMS, Turns: t.Turns(), ToolsByKind: kinds,
		ToolCalls: res.Stats.ToolCalls, Events: res.Stats.Events, Tokens: t.Tokens(),
		SessionID: res.SessionID, SessionLog: r.logPath, ExitCode: res.ExitCode}
	o.Summary.CostUSD, o.Summary.CostEstimated = t.Cost()
	if r.err == nil {
		return o
	}
	e := t.Fatal
	if e == nil {
		e = t.LastError
	}
	if e == nil {
		e = &event.Error{Code: event.ErrAgentError, Message: r.err.Error()}
	}
	re := &RunError{Code: errCode(e.Code), EventCode: e.Code, Message: e.Message, Class: e.Class,
		WallMS: res.DurationMS, Signal: e.Signal, ExitCode: e.ExitCode}
	if r.cancelled && errors.Is(r.err, harness.ErrInterrupted) {
		re.Message = "the run was cancelled; the agent was stopped"
	}
	if e.Killed != nil {
		re.Killed = *e.Killed
	}
	if re.Signal == "" {
		re.Signal = res.Signal
	}
	last := r.lastAt
	if last.IsZero() {
		last = r.start
	}
	end := r.start.Add(time.Duration(res.DurationMS) * time.Millisecond)
	re.IdleMS = max(end.Sub(last).Milliseconds(), 0)
	if e.Partial != nil {
		re.IdleMS = max(re.IdleMS, e.Partial.LastActivityMSAgo)
		for _, s := range e.Partial.LastEvents {
			re.Partial.LastEvents = append(re.Partial.LastEvents, fmt.Sprintf("#%d %s: %s", s.Seq, s.Type, s.Summary))
		}
		re.Partial.LastActivityMS = e.Partial.LastActivityMSAgo
	}
	if re.Partial.LastEvents == nil {
		re.Partial.LastEvents = []string{}
	}
	re.Partial.StdoutTail = r.stdoutTail.String()
	re.Partial.StderrTail = r.stderrTail.String()
	if re.Partial.StderrTail == "" && e.Partial != nil {
		re.Partial.StderrTail = e.Partial.StderrTail
	}
	re.Partial.Events, re.Partial.ToolCalls = res.Stats.Events, res.Stats.ToolCalls
	if !r.lastAt.IsZero() {
		re.Partial.LastActivityAt = r.lastAt.UTC().Format(time.RFC3339Nano)
	}
	re.Suggestions = suggestions(re.Code, e, r)
	r.redactError(re)
	o.Error = re
	o.Hint = e.Hint
	return o
}

// redactError redacts what re repeats of the agent's output (its
// message, the tails, the last events' summaries) as the run's session
// log is (harness.Run.Redactor): the client is often another agent, and
// what it is answered goes into its model's context. The agent's answer
// (Outcome.Text) is its work, and is kept as the stream has it.
func (r *run) redactError(re *RunError) {
	red := r.h.Redactor()
	re.Message = red.RedactString(re.Message)
	re.Partial.StdoutTail = red.RedactString(re.Partial.StdoutTail)
	re.Partial.StderrTail = red.RedactString(re.Partial.StderrTail)
	for i, s := range re.Partial.LastEvents {
		re.Partial.LastEvents[i] = red.RedactString(s)
	}
}

// errCode maps an event error code to the code of the MCP error result.
func errCode(code string) string {
	switch code {
	case event.ErrHardTimeout:
		return "ETIMEDOUT"
	case event.ErrIdleTimeout:
		return "EIDLE"
	case event.ErrInterrupted:
		return "ECANCELED"
	}
	return code
}

func suggestions(code string, e *event.Error, r *run) []string {
	var s []string
	switch code {
	case "EIDLE":
		s = append(s, fmt.Sprintf("The agent printed nothing for %s. Retry with a larger idle_timeout_ms (the server allows up to %d) if the task involves long silent work.",
			roundDur(r.budgets.idle()), r.budgets.IdleMaxMS))
		s = append(s, "Split the task into smaller steps, or check partial.stderr_tail for a prompt the agent was waiting on.")
	case "ETIMEDOUT":
		s = append(s, fmt.Sprintf("The run hit its %s wall-clock limit. Retry with a larger hard_timeout_ms (up to %d) or a smaller task.",
			roundDur(r.budgets.hard()), r.budgets.HardMaxMS))
	case "ECANCELED":
		s = append(s, "The run was cancelled before it finished; start it again with run_agent if its work is still needed.")
	case event.ErrNotInstalled:
		s = append(s, "The agent's CLI is not installed on the server: call list_agents and pick an installed one.")
	case event.ErrSpawnFailed:
		s = append(s, "The agent's CLI could not be started; check partial.stderr_tail and pick another agent.")
	default:
		switch e.Class {
		case event.ClassAuth:
			s = append(s, "The agent is not logged in or its API key is invalid; this needs a human to fix.")
		case event.ClassRateLimit, event.ClassOverloaded, event.ClassNetwork:
			s = append(s, "The failure looks transient: wait a little and retry, or use another agent.")
		case event.ClassContextOverflow:
			s = append(s, "The task overflowed the model's context: give a smaller, more focused prompt.")
		}
		s = append(s, "Read error.partial (last events, stderr tail) to see how far the agent got; the session log has the full stream.")
	}
	if e.Hint != "" {
		s = append(s, "harness: "+e.Hint)
	}
	return s
}

func idleMessage(w *event.Warning) string {
	return fmt.Sprintf("No output for %s; aborting in %s unless output resumes.",
		roundDur(time.Duration(w.IdleMS)*time.Millisecond), roundDur(time.Duration(w.AbortInMS)*time.Millisecond))
}

// roundDur prints d to the second, or to the millisecond under a second.
func roundDur(d time.Duration) string {
	if d >= time.Second {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Millisecond).String()
}

func secs(d time.Duration) string { return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second)) }

// tail keeps the last tailBytes of the lines added to it.
type tail struct{ b []byte }

func (t *tail) add(line []byte) {
	t.b = append(t.b, line...)
	t.b = append(t.b, '\n')
	if len(t.b) > 2*tailBytes {
		t.b = append(t.b[:0], t.b[len(t.b)-tailBytes:]...)
	}
}

// trim drops what String no longer shows, once no line will be added:
// a finished run is kept for the rest of its session.
func (t *tail) trim() {
	if len(t.b) > tailBytes {
		t.b = []byte(t.String())
	}
}

func (t *tail) String() string {
	b := t.b
	if len(b) > tailBytes {
		b = b[len(b)-tailBytes:]
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	return string(b)
}

// sortedKinds is for stable text output.
func sortedKinds(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%s×%d", k, m[k])
	}
	return out
}

// cancel interrupts the run (SIGINT, SIGTERM, then SIGKILL after the
// grace); its result says cancelled. Only the first call interrupts: the
// library takes a second interrupt within 2 s for a second Ctrl-C and
// kills at once, and a session's end, a cancelled call and cancel_run
// (idempotent) may each cancel the same run.
func (r *run) cancel() {
	if r.finished() {
		return
	}
	r.mu.Lock()
	again := r.cancelled
	r.cancelled = true
	r.mu.Unlock()
	if !again {
		r.h.Interrupt()
	}
}
