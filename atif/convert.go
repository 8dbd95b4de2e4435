package atif

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/agentharness/harness/event"
)

// FromEvents returns the trajectory of a run's events (in stream order;
// a stream cut short, or one that breaks the invariants, still gives one).
//
// Steps, in the order of the stream:
//   - a user step for the prompt (Meta.Prompt) and for each turn_start of
//     a live session;
//   - agent steps: each holds at most one reasoning block, then at most one
//     assistant message, then the tool calls the model made with them; an
//     event that cannot follow what the step holds opens the next step, as
//     does a tool call after a usage event that followed the step's tool
//     calls (that model call is over), or whose id the step names
//     already. A tool call's tool_end is a result in its own step's
//     observation; a tool_start that reuses the id of a call still open
//     ends that call there, with a result cancelled and synthetic;
//   - a system step for each error event and each system message;
//   - for a stream with none of these (and no prompt), one system step
//     saying so (extra.no_steps): ATIF requires a step.
//
// A usage event counts in the agent step in progress (the next one when
// it comes before any). A sub-agent's messages, reasoning and tool calls
// (parent_call_id) form an embedded subagent trajectory that the parent's
// task call's observation refers to by trajectory_id; its usage is in the
// parent's steps, as the stream reports it.
func FromEvents(evs []event.Event, m Meta) *Trajectory {
	p := newPlan()
	for _, ev := range evs {
		p.event(ev)
	}
	if p.surveyed() {
		for _, ev := range evs {
			p.refEvent(ev)
		}
	}
	p.done()
	t := p.trajectory(m)
	subs := make([][]Step, len(p.subs))
	b := newBuilder(m, p, func(s Step) { t.Steps = append(t.Steps, s) }, func(id string) func(Step) {
		k := p.sub[id]
		return func(s Step) { subs[k] = append(subs[k], s) }
	})
	// Every step emitted at the end, whole whatever the rules of when a
	// step is done: Export, which emits each as soon as it is, is held to
	// this (TestExportIsMarshal).
	b.hold = true
	for _, ev := range evs {
		b.event(ev)
	}
	b.finish()
	b.close(t)
	for k, s := range p.subs {
		sub := p.subTrajectory(m, t, s.id)
		sub.Steps = subs[k]
		t.SubagentTrajectories = append(t.SubagentTrajectories, sub)
	}
	return t
}

// builder makes the steps of one pass over a run's events, handing each
// to its track's emit as soon as no later event can change it (a step
// waits for its calls' results, the main agent's last agent step for
// usage, a track's step in progress for what follows), and every step
// left at finish. A track whose emit is nil is not built: its tool calls
// are matched to their ends, as a call id open in any track takes the
// tool_end, and nothing of it is held.
type builder struct {
	meta    Meta
	plan    *plan
	main    *track
	subs    map[string]*track // by the parent task call's id
	sink    func(id string) func(Step)
	calls   map[string]*call // open calls
	at      int              // index of the event in hand
	hold    bool             // emit nothing before finish
	pending event.Usage      // usage before any agent step
	pendN   int
	pendC   *float64
	total   event.Usage // the usage of the main agent's steps emitted
	turns   bool        // a user step of the main agent was emitted
}

// call is a tool call open: the step its result goes in (nil: its track
// is not built), that step's track, whether a tool_end will end it, and
// whether that end is the plan's (late): its result is in the step
// already.
type call struct {
	st   *stepState
	tr   *track
	ends bool
	late bool
}

// track is the steps of one trajectory being built: the main agent's or
// one sub-agent's.
type track struct {
	emit   func(Step)   // nil: not built in this pass
	steps  []*stepState // made and not emitted, oldest first
	cur    *stepState   // the agent step in progress
	last   *stepState   // the last agent step (the main agent's: usage counts in it)
	made   int          // steps made: the step_id of the last
	agents int          // agent steps made
}

type stepState struct {
	step      *Step
	reasoning bool
	message   bool
	sealed    bool  // a usage event came after its tool calls
	first     bool  // the track's first agent step
	calls     int   // tool calls it holds
	open      int   // its calls that a tool_end is still to end, but late ones
	resAt     []int // the index of the tool_end of each of its results
	usage     event.Usage
	usageN    int
	cost      *float64 // nil: no usage event had a cost
}

func newBuilder(m Meta, p *plan, main func(Step), sub func(id string) func(Step)) *builder {
	b := &builder{meta: m, plan: p, main: &track{emit: main}, subs: map[string]*track{}, sink: sub,
		calls: map[string]*call{}}
	if m.Prompt != "" && main != nil {
		// Marked: it is the caller's, not the stream's (Check).
		b.main.add(&Step{Source: "user", Message: m.Prompt, Extra: extra("prompt", true)})
	}
	return b
}

// push appends a step to the track, numbered.
func (tr *track) push(s *Step) *stepState {
	tr.made++
	s.StepID = tr.made
	st := &stepState{step: s}
	if s.Source == "agent" {
		st.first = tr.agents == 0
		tr.agents++
		tr.last = st
	}
	tr.steps = append(tr.steps, st)
	return st
}

// add appends a step that is not an agent's turn: the turn in progress
// is over.
func (tr *track) add(s *Step) *stepState {
	st := tr.push(s)
	tr.cur = nil
	return st
}

// agent returns the agent step that takes an event of the given part
// (0 reasoning, 1 message, 2 tool call), opening a new one when the
// step in progress cannot take it.
func (tr *track) agent(part int, ts int64) *stepState {
	c := tr.cur
	if c == nil || c.sealed ||
		(part == 0 && (c.reasoning || c.message || c.calls > 0)) ||
		(part == 1 && (c.message || c.calls > 0)) {
		tr.cur = tr.push(&Step{Source: "agent", Timestamp: timestamp(ts)})
	}
	return tr.cur
}

func (b *builder) track(parent string) *track {
	if parent == "" {
		return b.main
	}
	tr := b.subs[parent]
	if tr == nil {
		tr = &track{}
		if b.sink != nil {
			tr.emit = b.sink(parent)
		}
		b.subs[parent] = tr
	}
	return tr
}

func (b *builder) event(ev event.Event) {
	var touched *track // a sub-agent's track that may have a step to emit
	switch body := ev.Body.(type) {
	case *event.TurnStart:
		// A turn the agent began by itself has no prompt: no user step.
		if b.main.emit != nil && body.Origin != event.OriginAgent {
			b.main.add(&Step{Source: "user", Message: body.Prompt, Timestamp: timestamp(ev.TS),
				Extra: extra("turn_id", body.TurnID, "prompt_truncated", body.PromptTruncated)})
		}
	case *event.TurnEnd:
		b.main.cur = nil
	case *event.Reasoning:
		touched = b.track(body.ParentCallID)
		if touched.emit == nil {
			break
		}
		st := touched.agent(0, ev.TS)
		st.reasoning = true
		st.step.ReasoningContent = body.Text
		if body.Truncated {
			st.step.Extra = setExtra(st.step.Extra, "reasoning_truncated", true)
		}
	case *event.Message:
		touched = b.message(ev, body)
	case *event.ToolStart:
		touched = b.toolStart(ev, body)
	case *event.ToolEnd:
		touched = b.toolEnd(ev, body)
	case *event.Usage:
		b.usage(body)
	case *event.Error:
		if b.main.emit != nil {
			b.main.add(&Step{Source: "system", Message: body.Message, Timestamp: timestamp(ev.TS),
				Extra: extra("error", body.Code, "fatal", body.Fatal, "class", body.Class, "http_status", body.Status)})
		}
	}
	b.at++
	if b.hold {
		return
	}
	b.flush(b.main, false)
	if touched != nil && touched != b.main {
		b.flush(touched, false)
	}
}

func (b *builder) message(ev event.Event, m *event.Message) *track {
	tr := b.track(m.ParentCallID)
	if tr.emit == nil {
		return tr
	}
	if m.Role != "assistant" {
		source := "user"
		if m.Role == "system" {
			source = "system"
		}
		tr.add(&Step{Source: source, Message: m.Text, Timestamp: timestamp(ev.TS),
			Extra: extra("truncated", m.Truncated)})
		return tr
	}
	st := tr.agent(1, ev.TS)
	st.message = true
	st.step.Message = m.Text
	if m.Truncated {
		st.step.Extra = setExtra(st.step.Extra, "message_truncated", true)
	}
	return tr
}

func (b *builder) toolStart(ev event.Event, t *event.ToolStart) *track {
	tr := b.track(t.ParentCallID)
	if old := b.calls[t.CallID]; old != nil {
		// An id reused while its call is open (a log not written by
		// harness's stream, which drops such a start): the first call
		// gets no end of its own, so it ends here, as the otlp export
		// ends its span; the tool_end that follows is the new call's.
		delete(b.calls, t.CallID)
		b.endReused(old, t.CallID)
	}
	var st *stepState
	if tr.emit != nil {
		st = tr.agent(2, ev.TS)
		if slices.ContainsFunc(st.step.ToolCalls, func(c ToolCall) bool { return c.ToolCallID == t.CallID }) {
			// Harbor's models refuse a step that names an id twice (its
			// results could not say which call they are of).
			tr.cur = tr.push(&Step{Source: "agent", Timestamp: timestamp(ev.TS)})
			st = tr.cur
		}
		st.calls++
		st.step.ToolCalls = append(st.step.ToolCalls, ToolCall{
			ToolCallID: t.CallID, FunctionName: t.Name, Arguments: object(t.Input),
			Extra: extra("kind", string(t.Kind), "command", t.Command, "path", t.Path, "input_truncated", t.InputTruncated),
		})
	}
	c := &call{st: st, tr: tr, ends: !b.plan.unended[b.at]}
	l, late := b.plan.late[b.at]
	switch {
	case st == nil:
	case late:
		// Its result now, where its end is among the step's.
		c.late = true
		b.observe(st, l.end, l.at)
	case c.ends:
		st.open++
	}
	b.calls[t.CallID] = c
	return tr
}

// endReused ends open call c, whose id a tool_start (the event in hand)
// reuses: its result, cancelled and synthetic, is marked id_reused, as
// no tool_end of the stream is (Check).
func (b *builder) endReused(c *call, id string) {
	if c.st == nil || c.late {
		return // its track is not built, or its result is in already
	}
	if c.ends {
		c.st.open--
	}
	b.observe(c.st, &event.ToolEnd{CallID: id, Status: event.StatusCancelled, Synthetic: true}, b.at)
	r := &c.st.step.Observation.Results[slices.Index(c.st.resAt, b.at)]
	r.Extra = setExtra(r.Extra, "id_reused", true)
}

// toolEnd puts a tool_end's result in its call's step, and returns the
// track of that step.
func (b *builder) toolEnd(ev event.Event, t *event.ToolEnd) *track {
	c := b.calls[t.CallID]
	if c != nil {
		delete(b.calls, t.CallID)
		if c.st == nil || c.late {
			return nil
		}
		if c.ends {
			c.st.open--
		}
		b.observe(c.st, t, b.at)
		return c.tr
	}
	if b.main.emit == nil {
		return nil
	}
	// A tool_end with no tool_start (a broken stream): its own step, the
	// result naming no call of it.
	r := result(t)
	r.SourceCallID = ""
	r.Extra = setExtra(r.Extra, "call_id", t.CallID)
	st := b.main.add(&Step{Source: "agent", Timestamp: timestamp(ev.TS)})
	st.step.Observation = &Observation{Results: []ObservationResult{r}}
	return b.main
}

func result(t *event.ToolEnd) ObservationResult {
	return ObservationResult{SourceCallID: t.CallID, Content: t.Output,
		Extra: extra("status", t.Status, "duration_ms", t.DurationMS, "exit_code", t.ExitCode,
			"output_truncated", t.OutputTruncated, "synthetic", t.Synthetic, "paths", t.Paths,
			"diff", t.Diff, "diff_truncated", t.DiffTruncated, "diff_skipped", t.DiffSkipped)}
}

// observe puts the result of tool_end t, the at-th event, in its call's
// step, in the order of the stream: a late call's comes before the ends
// before it are read.
func (b *builder) observe(st *stepState, t *event.ToolEnd, at int) {
	r := result(t)
	if id, ok := b.plan.refs[at]; ok {
		r.SubagentTrajectoryRef = []SubagentTrajectoryRef{{TrajectoryID: b.plan.subID(b.meta, id)}}
	}
	if st.step.Observation == nil {
		st.step.Observation = &Observation{}
	}
	k := len(st.resAt)
	for k > 0 && st.resAt[k-1] > at {
		k--
	}
	st.resAt = slices.Insert(st.resAt, k, at)
	st.step.Observation.Results = slices.Insert(st.step.Observation.Results, k, r)
}

// usage counts in the main agent's last agent step: the one in progress,
// or after a turn's end or an error the one before.
func (b *builder) usage(u *event.Usage) {
	if b.main.emit == nil {
		return
	}
	st := b.main.last
	if st == nil {
		b.pending.Add(*u)
		b.pendN++
		b.pendC = addCost(b.pendC, u)
		return
	}
	st.usage.Add(*u)
	st.usageN++
	st.cost = addCost(st.cost, u)
	if st.calls > 0 {
		st.sealed = true
	}
}

// flush emits tr's steps from its oldest that no later event can change
// (all of them when final).
func (b *builder) flush(tr *track, final bool) {
	if tr.emit == nil {
		return
	}
	n := 0
	for _, st := range tr.steps {
		if !final && (st.open > 0 || st == tr.cur || tr == b.main && st == tr.last) {
			break
		}
		b.emit(tr, st)
		n++
	}
	tr.steps = slices.Delete(tr.steps, 0, n)
}

// emit sets a step's metrics and hands it to its track's emit.
func (b *builder) emit(tr *track, st *stepState) {
	if tr == b.main && st.first && b.pendN > 0 {
		// Usage before any agent step counts in the first; it stopped
		// growing when that step was made.
		st.usage.Add(b.pending)
		st.usageN += b.pendN
		st.cost = sumCost(st.cost, b.pendC)
	}
	s := *st.step
	if st.usageN > 0 {
		b.total.Add(st.usage)
		ex := fields(st.usage)
		ex["usage_events"] = st.usageN
		if st.usage.CostEstimated {
			ex["cost_estimated"] = true
		}
		s.Metrics = &Metrics{PromptTokens: prompt(st.usage), CompletionTokens: st.usage.OutputTokens,
			CachedTokens: st.usage.CacheReadTokens, CostUSD: st.cost, Extra: ex}
	}
	if tr == b.main && s.Source == "user" {
		b.turns = true
	}
	tr.emit(s)
}

// finish ends the pass: the steps the stream leaves to its end, then
// every step not emitted.
func (b *builder) finish() {
	if main := b.main; main.emit != nil {
		if b.pendN > 0 && main.agents == 0 {
			// Usage before any agent step, and the model said nothing at
			// all: a step of its own.
			main.add(&Step{Source: "agent"})
		}
		if main.made == 0 {
			// Harbor's models require a step; marked, as it is not the
			// stream's (Check).
			main.add(&Step{Source: "system", Message: "The run's stream has no prompt, message, tool call or error.",
				Extra: extra("no_steps", true)})
		}
	}
	b.flush(b.main, true)
	for _, k := range b.plan.subs {
		if tr := b.subs[k.id]; tr != nil {
			b.flush(tr, true)
		}
	}
}

// close sets what t says after the main agent's steps, all emitted: its
// notes, final metrics and extra.
func (b *builder) close(t *Trajectory) {
	t.FinalMetrics, t.Extra = b.final()
	if b.meta.Prompt == "" && b.plan.start != nil && !b.turns {
		t.Notes = "The prompt is not in the trajectory: the run's event stream does not carry it."
	}
}

func addCost(c *float64, u *event.Usage) *float64 {
	if u.CostUSD == 0 {
		return c
	}
	sum := event.Usage{CostUSD: u.CostUSD}
	if c != nil {
		sum.Add(event.Usage{CostUSD: *c}) // as the stream adds them: decimals
	}
	return &sum.CostUSD
}

// object returns raw when it is a JSON object, else {} (ATIF's arguments
// are an object; the stream's input always is one, a broken stream aside).
func object(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return t
	}
	return json.RawMessage("{}")
}

// extra builds an extra object from key, value pairs, leaving out zero
// values; nil when all are.
func extra(kv ...any) map[string]any {
	var m map[string]any
	for i := 0; i+1 < len(kv); i += 2 {
		m = setExtra(m, kv[i].(string), kv[i+1])
	}
	return m
}

func setExtra(m map[string]any, k string, v any) map[string]any {
	switch x := v.(type) {
	case string:
		if x == "" {
			return m
		}
	case bool:
		if !x {
			return m
		}
	case int:
		if x == 0 {
			return m
		}
	case int64:
		if x == 0 {
			return m
		}
	case *int:
		if x == nil {
			return m
		}
		v = *x
	case []string:
		if len(x) == 0 {
			return m
		}
	}
	if m == nil {
		m = map[string]any{}
	}
	m[k] = v
	return m
}

func sumCost(a, b *float64) *float64 {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	sum := event.Usage{CostUSD: *a}
	sum.Add(event.Usage{CostUSD: *b}) // as the stream adds them: decimals
	return &sum.CostUSD
}

// final returns the final metrics (the result's usage and cost; the sums
// of the steps' for a stream without a result) and the trajectory's
// extra: what the result says of the run.
func (b *builder) final() (*FinalMetrics, map[string]any) {
	fm := &FinalMetrics{TotalSteps: b.main.made}
	ex := map[string]any{"harness_run": b.plan.runID(b.meta)}
	u := b.total
	r := b.plan.result
	if r != nil {
		u = r.Usage
		fm.TotalCostUSD = r.CostUSD
		if r.CostUSD == nil && r.Usage.CostUSD != 0 {
			c := r.Usage.CostUSD
			fm.TotalCostUSD = &c
		}
		ex["status"] = r.Status
		ex["duration_ms"] = r.DurationMS
		ex = setExtra(ex, "num_turns", r.NumTurns)
		ex = setExtra(ex, "exit_code", r.ExitCode)
		ex = setExtra(ex, "signal", r.Signal)
	} else {
		ex["status"] = "incomplete"
		if u.CostUSD != 0 { // the steps' costs, as their tokens
			c := u.CostUSD
			fm.TotalCostUSD = &c
		}
	}
	fm.TotalPromptTokens, fm.TotalCompletionTokens, fm.TotalCachedTokens = prompt(u), u.OutputTokens, u.CacheReadTokens
	fm.Extra = fields(u)
	// Estimated or not as the cost it is said of: the result's cost_usd,
	// else its usage's (or the steps').
	estimated := u.CostEstimated
	if r != nil && r.CostUSD != nil {
		estimated = r.CostEstimated
	}
	if estimated {
		fm.Extra["cost_estimated"] = true
	}
	return fm, ex
}
