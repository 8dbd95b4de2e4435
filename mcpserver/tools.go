package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/plural"
	"github.com/agentharness/harness/process"
)

// RunArgs are run_agent's arguments.
type RunArgs struct {
	Agent         string `json:"agent" jsonschema:"the agent to run (list_agents shows which are installed)"`
	Prompt        string `json:"prompt" jsonschema:"the task for the agent, complete and self-contained: it does not see your conversation"`
	Model         string `json:"model,omitempty" jsonschema:"model alias or the agent's own model id; the agent's default when omitted"`
	Cwd           string `json:"cwd,omitempty" jsonschema:"directory the agent works in (it can run shell commands and edit files there): absolute, or relative to the server's root; it must lie inside the server's roots (its working directory unless started with --root); the first root when omitted"`
	Permissions   string `json:"permissions,omitempty" jsonschema:"full-access (default: the agent runs tools and edits files without asking) or read-only"`
	IdleTimeoutMS *int64 `json:"idle_timeout_ms,omitempty" jsonschema:"end the run after this many milliseconds without output and no tool call in flight; clamped to the server's limits"`
	HardTimeoutMS *int64 `json:"hard_timeout_ms,omitempty" jsonschema:"wall-clock limit of the run in milliseconds; clamped to the server's limits"`
	Wait          string `json:"wait,omitempty" jsonschema:"turn (default): block until the run ends and return its answer; none: return the run id at once and follow it with run_status, run_events, cancel_run"`
	Resume        string `json:"resume,omitempty" jsonschema:"continue the agent's own session of an earlier run (its summary's session_id) with this prompt: the agent keeps that conversation's context; give the same agent and cwd"`
}

// RunRef names a run.
type RunRef struct {
	RunID string `json:"run_id" jsonschema:"the run id returned by run_agent"`
}

// EventsArgs are run_events' arguments.
type EventsArgs struct {
	RunID    string `json:"run_id" jsonschema:"the run id returned by run_agent"`
	AfterSeq int64  `json:"after_seq,omitempty" jsonschema:"return events with seq greater than this (0: from the start); pass the previous page's next_after_seq"`
	Limit    int    `json:"limit,omitempty" jsonschema:"most events to return (default 100, at most 1000)"`
}

// EventsPage is run_events' answer.
type EventsPage struct {
	RunID         string            `json:"run_id"`
	State         string            `json:"state" jsonschema:"running, or the run's final status"`
	Events        []json.RawMessage `json:"events" jsonschema:"events of harness's unified stream (docs/events.md): objects with v, type, run, seq, ts and the type's fields"`
	NextAfterSeq  int64             `json:"next_after_seq" jsonschema:"after_seq for the next page"`
	LastSeq       int64             `json:"last_seq" jsonschema:"seq of the newest event so far"`
	More          bool              `json:"more" jsonschema:"more events are buffered after this page"`
	Dropped       int64             `json:"dropped" jsonschema:"events after after_seq that are no longer kept (only a server without session logs drops any)"`
	EventsDropped bool              `json:"events_dropped,omitempty" jsonschema:"the run is over and none of its events are kept any more (run_status has its summary)"`
}

// AgentsList is list_agents' answer.
type AgentsList struct {
	Agents []AgentInfo `json:"agents"`
}

// AgentInfo describes one supported agent.
type AgentInfo struct {
	ID        string   `json:"id"`
	Installed bool     `json:"installed"`
	Binary    string   `json:"binary,omitempty" jsonschema:"the executable that would run"`
	Tried     []string `json:"tried,omitempty" jsonschema:"where the server looked, when not installed"`
}

// Budgets are the effective budgets of a run and the server's limits.
type Budgets struct {
	IdleTimeoutMS int64    `json:"idle_timeout_ms"`
	HardTimeoutMS int64    `json:"hard_timeout_ms"`
	IdleMinMS     int64    `json:"idle_min_ms"`
	IdleMaxMS     int64    `json:"idle_max_ms"`
	HardMinMS     int64    `json:"hard_min_ms"`
	HardMaxMS     int64    `json:"hard_max_ms"`
	Clamped       []string `json:"clamped,omitempty" jsonschema:"requested budgets the server changed to fit its limits"`
}

func (b Budgets) idle() time.Duration { return time.Duration(b.IdleTimeoutMS) * time.Millisecond }
func (b Budgets) hard() time.Duration { return time.Duration(b.HardTimeoutMS) * time.Millisecond }

// runDescription is the run_agent tool's description; %s is the agents.
const runDescription = "Start a coding agent (%s) on a task and return its answer. " +
	"The agent runs headless WITH SHELL ACCESS in the given directory (cwd): with permissions full-access (the default) " +
	"it runs commands and edits files there without asking; read-only limits it to reading. " +
	"harness supervises the run: no output for idle_timeout_ms ends it (EIDLE), and so does the wall-clock limit " +
	"hard_timeout_ms (ETIMEDOUT); both are clamped to the server's limits. With wait=turn (default) the call blocks " +
	"until the run ends, sending progress notifications; with wait=none it returns the run id at once. " +
	"To go on with an earlier run's conversation, pass its summary's session_id as resume. " +
	"A run that does not succeed returns isError with a structured error (code, message, partial results, suggestions)."

func (s *Server) addTools() {
	t := true
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "run_agent", Title: "Run a coding agent", Description: fmt.Sprintf(runDescription, agentList()),
		InputSchema: runArgsSchema(), OutputSchema: schemaFor[Outcome](),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &t, OpenWorldHint: &t}}, s.runAgent)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "run_status", Title: "Status of a run",
		Description:  "State of a run started by run_agent: running or its final status, elapsed time, time since its last output, what it is doing, and the tool calls in flight.",
		OutputSchema: schemaFor[Status](), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.runStatus)
	eventsSchema := schemaFor[EventsArgs]()
	intRange(eventsSchema, "run_events")
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "run_events", Title: "Events of a run", InputSchema: eventsSchema,
		Description:  fmt.Sprintf("Page through a run's normalized events (harness's unified event stream) with seq greater than after_seq. Events are read from the run's session log; a server without session logs keeps only the newest 10000 events (32 MiB) of each run, and reports older ones as dropped; of the runs that are over, a session keeps at most %d MiB of events, and drops the oldest runs' first (events_dropped).", MaxSessionEventBytes>>20),
		OutputSchema: schemaFor[EventsPage](), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.runEvents)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "cancel_run", Title: "Cancel a run",
		Description:  "Stop a run: SIGINT, then SIGTERM, then SIGKILL to the agent and every process it started. Returns the run's final result (state cancelled, error code ECANCELED) once it is over.",
		OutputSchema: schemaFor[Outcome](), Annotations: &mcp.ToolAnnotations{DestructiveHint: &t, IdempotentHint: true}}, s.cancelRun)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "list_agents", Title: "List agents",
		Description:  "The agents run_agent can start, and whether each is installed on the server.",
		OutputSchema: schemaFor[AgentsList](), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.listAgents)
}

func schemaFor[T any]() *jsonschema.Schema {
	sc, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {Type: "object"},
	}})
	if err != nil {
		panic(err) // the types are ours: a failure is a bug caught by any test
	}
	return sc
}

func runArgsSchema() *jsonschema.Schema {
	sc := schemaFor[RunArgs]()
	sc.Properties["wait"].Enum = []any{"turn", "none"}
	sc.Properties["permissions"].Enum = []any{harness.FullAccess, harness.ReadOnly}
	sc.Properties["prompt"].MinLength = jsonschema.Ptr(1)
	sc.Properties["agent"].MinLength = jsonschema.Ptr(1)
	sc.Properties["agent"].Description = "the agent to run: " + agentList() + " (list_agents shows which are installed)"
	intRange(sc, "run_agent")
	return sc
}

// intRange gives the whole-number arguments of tool their range in its
// input schema sc (checkIntArgs holds calls to it).
func intRange(sc *jsonschema.Schema, tool string) {
	for _, a := range intArgs[tool] {
		sc.Properties[a.name].Minimum = jsonschema.Ptr(0.0)
		sc.Properties[a.name].Maximum = jsonschema.Ptr(float64(maxArgInt))
	}
}

// agentList names the supported agents, for descriptions.
func agentList() string { return strings.Join(harness.AgentNames(), ", ") }

// MaxPromptBytes is the largest prompt a run takes, as 'harness run' does.
const MaxPromptBytes = 16 << 20

// errResult is a tool error the calling model can act on.
func errResult(format string, args ...any) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}, nil, nil
}

func (s *Server) runAgent(ctx context.Context, req *mcp.CallToolRequest, in RunArgs) (*mcp.CallToolResult, any, error) {
	wait := in.Wait
	if wait == "" {
		wait = "turn"
	}
	if wait != "turn" && wait != "none" {
		return errResult("run_agent: wait %q: want turn or none", in.Wait)
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return errResult("run_agent: prompt is empty: give the agent its task")
	}
	if len(in.Prompt) > MaxPromptBytes {
		return errResult("run_agent: the prompt is %d bytes, over the %d MiB limit", len(in.Prompt), MaxPromptBytes>>20)
	}
	a, err := harness.Adapter(in.Agent)
	if err != nil {
		return errResult("run_agent: %v", err)
	}
	for name, v := range map[string]*int64{"idle_timeout_ms": in.IdleTimeoutMS, "hard_timeout_ms": in.HardTimeoutMS} {
		if v != nil && *v < 0 {
			return errResult("run_agent: %s %d: want a positive number of milliseconds", name, *v)
		}
	}
	cwd, err := s.resolveCwd(in.Cwd)
	if err != nil {
		return errResult("run_agent: %v", err)
	}
	// The library fills what the client left unset from the settings, and
	// keeps harness's own secrets (the bearer token clients use to reach
	// this server) from the agent: it could call back with them.
	t := harness.Task{Agent: a.Name(), Prompt: in.Prompt, Model: in.Model, Cwd: cwd, Permissions: in.Permissions,
		Resume: in.Resume, Run: event.NewRunID()}
	tb := s.settings().Budgets()
	b := s.clamp(&tb, in.IdleTimeoutMS, in.HardTimeoutMS)
	t.Budgets = &tb
	var obs harness.Observer
	if s.o.Setup != nil {
		if obs, err = s.o.Setup(&t); err != nil {
			return errResult("run_agent: %v", err)
		}
	}
	// A client's trace context in _meta (W3C traceparent) is the parent
	// of the run's span when runs are traced.
	var tp string
	if req.Params != nil {
		tp, _ = req.Params.Meta["traceparent"].(string)
	}
	r, err := s.start(harness.ContextWithTraceparent(context.Background(), tp), req.Session, t, b, obs)
	if err != nil {
		return errResult("run_agent: %v", err)
	}
	if wait == "none" {
		o := Outcome{RunID: r.id, Agent: r.agent, State: StateRunning, Budgets: b}
		text := fmt.Sprintf("Started %s as run %s (idle timeout %s, hard timeout %s). Follow it with run_status and run_events, stop it with cancel_run.",
			r.agent, r.id, roundDur(b.idle()), roundDur(b.hard()))
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, o, nil
	}
	r.attach(ctx, req.Params.GetProgressToken())
	select {
	case <-r.done:
	case <-ctx.Done():
		r.cancel() // the client cancelled the call or went away
		<-r.done
	}
	<-r.notified // the last log notifications go before the result
	r.detach()
	return finalResult(r)
}

// clamp sets the run's idle and hard budgets from the request, or from the
// defaults, within the limits, and returns them with what was changed.
func (s *Server) clamp(tb *harness.Budgets, idleMS, hardMS *int64) Budgets {
	l := s.o.Limits
	b := Budgets{IdleMinMS: l.IdleMin.Milliseconds(), IdleMaxMS: l.IdleMax.Milliseconds(),
		HardMinMS: l.HardMin.Milliseconds(), HardMaxMS: l.HardMax.Milliseconds()}
	pick := func(name string, req *int64, def, lo, hi time.Duration) time.Duration {
		d := def
		if req != nil {
			// Compared in milliseconds first: past ~292 years the
			// product overflows, and wrapped below the minimum.
			d = time.Duration(min(*req, hi.Milliseconds()+1)) * time.Millisecond
		}
		switch {
		case req == nil && d <= 0:
			d = hi // "off" is not offered over MCP
		case d < lo:
			if req != nil {
				b.Clamped = append(b.Clamped, fmt.Sprintf("%s %d raised to the server minimum %d", name, *req, lo.Milliseconds()))
			}
			d = lo
		case d > hi:
			if req != nil {
				b.Clamped = append(b.Clamped, fmt.Sprintf("%s %d lowered to the server maximum %d", name, *req, hi.Milliseconds()))
			}
			d = hi
		}
		return d
	}
	tb.Idle = pick("idle_timeout_ms", idleMS, tb.Idle, l.IdleMin, l.IdleMax)
	tb.Hard = pick("hard_timeout_ms", hardMS, tb.Hard, l.HardMin, l.HardMax)
	// The idle warning must come before the idle timeout, with time left
	// to react: 30 s before, or a quarter of the budget when that is short.
	if w := tb.IdleWarning; w <= 0 || w >= tb.Idle/2 {
		tb.IdleWarning = min(30*time.Second, tb.Idle/4)
	}
	b.IdleTimeoutMS, b.HardTimeoutMS = tb.Idle.Milliseconds(), tb.Hard.Milliseconds()
	return b
}

// settings are the Settings runs start with.
func (s *Server) settings() *harness.Settings {
	if s.o.Settings == nil {
		return &harness.Settings{}
	}
	return s.o.Settings
}

// start starts a run owned by session ss.
func (s *Server) start(ctx context.Context, ss *mcp.ServerSession, t harness.Task, b Budgets, obs harness.Observer) (*run, error) {
	s.mu.Lock()
	se := s.sessions[ss]
	if se == nil && !s.closed {
		s.mu.Unlock()
		se = s.track(ss)
		s.mu.Lock()
	}
	if s.closed || se.closed {
		s.mu.Unlock()
		return nil, errors.New("the server is shutting down; no new runs")
	}
	se.wg.Add(1)
	s.mu.Unlock()
	started := false
	defer func() {
		if !started { // Start failed, or panicked (contained): the session's end waits for no run
			se.wg.Done()
		}
	}()

	r := &run{id: t.Run, agent: t.Agent, budgets: b, now: s.o.Now, start: s.o.Now(),
		done: make(chan struct{}), poke: make(chan struct{}, 1), notified: make(chan struct{}),
		maxEvents: s.o.MaxEvents, maxBytes: defaultMaxEventBytes}
	opts := harness.Options{OnEvent: r.onEvent, OnNative: r.onNative, Now: s.o.Now, Observers: []harness.Observer{obs}}
	h, err := s.settings().Start(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	r.h, started = h, true
	if path, _ := h.SessionLog(); path != "" {
		r.useLog(path)
	} else {
		r.keepRedacted(h.Redactor())
	}
	s.mu.Lock()
	se.runs[r.id] = r
	closed := se.closed
	s.mu.Unlock()
	go s.notifier(r, ss)
	go func() {
		// Wait calls the run's last callbacks here (the observer's
		// Close): one that panics takes the program down, but only once
		// every run's processes are ended.
		defer process.ContainPanic()
		res, werr := h.Wait()
		r.finish(res, werr)
		// Before done: the answer of run_agent finds the session's
		// bounds applied.
		s.retire(se, r)
		close(r.done)
		<-r.notified
		se.wg.Done()
	}()
	if closed {
		r.cancel()
	}
	return r, nil
}

// finalResult is run_agent's result for a finished run.
func finalResult(r *run) (*mcp.CallToolResult, any, error) {
	o := r.outcome()
	res := &mcp.CallToolResult{}
	if o.Error == nil {
		text := o.Text
		if text == "" {
			text = "(the agent finished without a final message)"
		}
		sm := o.Summary
		line := fmt.Sprintf("[harness] run %s: %s %s in %s, %s, tools %v, tokens in %d out %d",
			o.RunID, o.Agent, sm.Status, roundDur(time.Duration(sm.DurationMS)*time.Millisecond), plural.Count(int64(sm.Turns), "turn"),
			sortedKinds(sm.ToolsByKind), sm.Tokens.Input, sm.Tokens.Output)
		if sm.CostUSD != nil {
			line += fmt.Sprintf(", cost $%.4f", *sm.CostUSD)
		}
		if o.TextTruncated {
			line += fmt.Sprintf(", answer cut to its first %d KiB", event.MaxTextBytes>>10)
		}
		if sm.SessionLog != "" {
			line += ", log " + sm.SessionLog
		}
		res.Content = []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: line}}
		return res, o, nil
	}
	res.IsError = true
	e := o.Error
	msg := fmt.Sprintf("%s: %s run %s failed: %s (wall %s, idle %s", e.Code, o.Agent, o.RunID, e.Message,
		roundDur(time.Duration(e.WallMS)*time.Millisecond), roundDur(time.Duration(e.IdleMS)*time.Millisecond))
	if e.Killed {
		msg += ", killed with " + e.Signal
	}
	msg += ")."
	for _, sg := range e.Suggestions {
		msg += "\n- " + sg
	}
	detail, _ := json.Marshal(e)
	res.Content = []mcp.Content{&mcp.TextContent{Text: msg}, &mcp.TextContent{Text: string(detail)}}
	return res, o, nil
}

func (s *Server) runStatus(_ context.Context, req *mcp.CallToolRequest, in RunRef) (*mcp.CallToolResult, any, error) {
	r, err := s.lookup(req.Session, in.RunID)
	if err != nil {
		return errResult("run_status: %v", err)
	}
	st := r.status()
	text := fmt.Sprintf("run %s (%s): %s, %s elapsed, last output %s ago, %s", st.RunID, st.Agent, st.State,
		roundDur(time.Duration(st.ElapsedMS)*time.Millisecond), roundDur(time.Duration(st.LastActivityMS)*time.Millisecond), st.Activity)
	if st.EventsDropped {
		text += "; its events are no longer kept for run_events (the session's memory bound)"
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, st, nil
}

func (s *Server) runEvents(_ context.Context, req *mcp.CallToolRequest, in EventsArgs) (*mcp.CallToolResult, any, error) {
	r, err := s.lookup(req.Session, in.RunID)
	if err != nil {
		return errResult("run_events: %v", err)
	}
	if in.AfterSeq < 0 || in.Limit < 0 {
		return errResult("run_events: after_seq and limit cannot be negative")
	}
	limit := in.Limit
	if limit == 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	state := StateRunning
	if r.finished() {
		state = r.result.Status
	}
	pg, err := r.page(in.AfterSeq, limit)
	if err != nil {
		return errResult("run_events: %v", err)
	}
	p := EventsPage{RunID: r.id, State: state, Events: make([]json.RawMessage, len(pg.events)), LastSeq: pg.last,
		More: pg.more, NextAfterSeq: pg.next, Dropped: pg.dropped, EventsDropped: pg.evicted}
	for i, e := range pg.events {
		p.Events[i] = e
	}
	text := fmt.Sprintf("%s of run %s (%s); next_after_seq %d, more %t", plural.Count(int64(len(pg.events)), "event"), r.id, state, p.NextAfterSeq, p.More)
	switch {
	case pg.evicted:
		text = fmt.Sprintf("run %s (%s) is over and its events are no longer kept: without session logs, a session keeps at most %s of its finished runs' events and drops the oldest runs' first. run_status still has its summary.",
			r.id, state, byteSize(s.sessionEventBytes))
	case p.Dropped > 0:
		text += fmt.Sprintf("; %d older events are no longer buffered", p.Dropped)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, p, nil
}

func (s *Server) cancelRun(ctx context.Context, req *mcp.CallToolRequest, in RunRef) (*mcp.CallToolResult, any, error) {
	r, err := s.lookup(req.Session, in.RunID)
	if err != nil {
		return errResult("cancel_run: %v", err)
	}
	already := r.finished()
	r.cancel()
	select {
	case <-r.done:
	case <-ctx.Done():
		return errResult("cancel_run: run %s was interrupted, but the call ended before the agent was gone", r.id)
	}
	o := r.outcome()
	text := fmt.Sprintf("run %s cancelled; the agent and its processes are gone", r.id)
	if already {
		text = fmt.Sprintf("run %s had already finished: %s", r.id, o.State)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, o, nil
}

func (s *Server) listAgents(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	var l AgentsList
	var lines []string
	for _, id := range harness.AgentNames() {
		t := harness.Task{Agent: id, Prompt: "-"}
		var err error
		if s.o.Setup != nil {
			_, err = s.o.Setup(&t)
		}
		info := AgentInfo{ID: id}
		var c *harness.Command
		if err == nil {
			c, err = s.settings().Prepare(t)
		}
		switch {
		case err != nil:
			lines = append(lines, id+": "+err.Error())
		case c.NotInstalled == nil:
			info.Installed, info.Binary = true, c.Binary
			lines = append(lines, id+": installed ("+c.Binary+")")
		default:
			info.Tried = c.NotInstalled.Tried
			lines = append(lines, id+": not installed")
		}
		l.Agents = append(l.Agents, info)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(lines, "\n")}}}, l, nil
}
