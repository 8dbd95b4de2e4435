package atif

import (
	"bytes"
	"encoding/json"

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
//     calls (that model call is over). A tool call's tool_end is a result
//     in its own step's observation;
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
	b := newBuilder(m)
	for _, ev := range evs {
		b.event(ev)
	}
	return b.finish()
}

type builder struct {
	meta    Meta
	start   *event.SessionStart
	result  *event.Result
	main    *track
	subs    map[string]*track // by the parent task call's id
	subIDs  []string          // subs in order of first appearance
	calls   map[string]*callRef
	results map[string]resultRef // by call id: where its tool_end's result is
	pending event.Usage          // usage before any agent step
	pendN   int
	pendC   *float64
	run     string // the events' run id
}

// track is the steps of one trajectory being built: the main agent's or
// one sub-agent's.
type track struct {
	steps []*stepState
	cur   *stepState // the agent step in progress
}

type stepState struct {
	step      *Step
	reasoning bool
	message   bool
	sealed    bool // a usage event came after its tool calls
	usage     event.Usage
	usageN    int
	cost      *float64 // nil: no usage event had a cost
}

type callRef struct {
	st *stepState
}

type resultRef struct {
	st *stepState
	i  int // in st's observation results
}

func newBuilder(m Meta) *builder {
	b := &builder{meta: m, main: &track{}, subs: map[string]*track{}, calls: map[string]*callRef{}, results: map[string]resultRef{}}
	if m.Prompt != "" {
		// Marked: it is the caller's, not the stream's (Check).
		b.main.add(&Step{Source: "user", Message: m.Prompt, Extra: extra("prompt", true)})
	}
	return b
}

// add appends a step that is not an agent's turn: the turn in progress
// is over.
func (tr *track) add(s *Step) *stepState {
	st := &stepState{step: s}
	tr.steps = append(tr.steps, st)
	tr.cur = nil
	return st
}

// agent returns the agent step that takes an event of the given part
// (0 reasoning, 1 message, 2 tool call), opening a new one when the
// step in progress cannot take it.
func (tr *track) agent(part int, ts int64) *stepState {
	c := tr.cur
	if c == nil || c.sealed ||
		(part == 0 && (c.reasoning || c.message || len(c.step.ToolCalls) > 0)) ||
		(part == 1 && (c.message || len(c.step.ToolCalls) > 0)) {
		tr.cur = &stepState{step: &Step{Source: "agent", Timestamp: timestamp(ts)}}
		tr.steps = append(tr.steps, tr.cur)
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
		b.subs[parent] = tr
		b.subIDs = append(b.subIDs, parent)
	}
	return tr
}

func (b *builder) event(ev event.Event) {
	if b.run == "" {
		b.run = ev.Run
	}
	switch body := ev.Body.(type) {
	case *event.SessionStart:
		if b.start == nil {
			b.start = body
		}
	case *event.TurnStart:
		b.main.add(&Step{Source: "user", Message: body.Prompt, Timestamp: timestamp(ev.TS),
			Extra: extra("turn_id", body.TurnID, "prompt_truncated", body.PromptTruncated)})
	case *event.TurnEnd:
		b.main.cur = nil
	case *event.Reasoning:
		st := b.track(body.ParentCallID).agent(0, ev.TS)
		st.reasoning = true
		st.step.ReasoningContent = body.Text
		if body.Truncated {
			st.step.Extra = setExtra(st.step.Extra, "reasoning_truncated", true)
		}
	case *event.Message:
		b.message(ev, body)
	case *event.ToolStart:
		b.toolStart(ev, body)
	case *event.ToolEnd:
		b.toolEnd(ev, body)
	case *event.Usage:
		b.usage(body)
	case *event.Error:
		b.main.add(&Step{Source: "system", Message: body.Message, Timestamp: timestamp(ev.TS),
			Extra: extra("error", body.Code, "fatal", body.Fatal, "class", body.Class, "http_status", body.Status)})
	case *event.Result:
		b.result = body
	}
}

func (b *builder) message(ev event.Event, m *event.Message) {
	tr := b.track(m.ParentCallID)
	if m.Role != "assistant" {
		source := "user"
		if m.Role == "system" {
			source = "system"
		}
		tr.add(&Step{Source: source, Message: m.Text, Timestamp: timestamp(ev.TS),
			Extra: extra("truncated", m.Truncated)})
		return
	}
	st := tr.agent(1, ev.TS)
	st.message = true
	st.step.Message = m.Text
	if m.Truncated {
		st.step.Extra = setExtra(st.step.Extra, "message_truncated", true)
	}
}

func (b *builder) toolStart(ev event.Event, t *event.ToolStart) {
	tr := b.track(t.ParentCallID)
	st := tr.agent(2, ev.TS)
	st.step.ToolCalls = append(st.step.ToolCalls, ToolCall{
		ToolCallID: t.CallID, FunctionName: t.Name, Arguments: object(t.Input),
		Extra: extra("kind", string(t.Kind), "command", t.Command, "path", t.Path, "input_truncated", t.InputTruncated),
	})
	if _, dup := b.calls[t.CallID]; !dup {
		b.calls[t.CallID] = &callRef{st: st}
	}
}

func (b *builder) toolEnd(ev event.Event, t *event.ToolEnd) {
	r := ObservationResult{SourceCallID: t.CallID, Content: t.Output,
		Extra: extra("status", t.Status, "duration_ms", t.DurationMS, "exit_code", t.ExitCode,
			"output_truncated", t.OutputTruncated, "synthetic", t.Synthetic, "paths", t.Paths,
			"diff", t.Diff, "diff_truncated", t.DiffTruncated, "diff_skipped", t.DiffSkipped)}
	ref := b.calls[t.CallID]
	var st *stepState
	if ref != nil {
		st = ref.st
		delete(b.calls, t.CallID)
	} else {
		// A tool_end with no tool_start (a broken stream): its own step,
		// the result naming no call of it.
		r.SourceCallID = ""
		r.Extra = setExtra(r.Extra, "call_id", t.CallID)
		st = b.main.add(&Step{Source: "agent", Timestamp: timestamp(ev.TS)})
	}
	if st.step.Observation == nil {
		st.step.Observation = &Observation{}
	}
	st.step.Observation.Results = append(st.step.Observation.Results, r)
	if ref != nil {
		b.results[t.CallID] = resultRef{st, len(st.step.Observation.Results) - 1}
	}
}

func (b *builder) usage(u *event.Usage) {
	st := b.main.cur
	for i := len(b.main.steps) - 1; st == nil && i >= 0; i-- {
		// After a turn's end or an error: the last agent step.
		if b.main.steps[i].step.Source == "agent" {
			st = b.main.steps[i]
		}
	}
	if st == nil {
		b.pending.Add(*u)
		b.pendN++
		b.pendC = addCost(b.pendC, u)
		return
	}
	st.usage.Add(*u)
	st.usageN++
	st.cost = addCost(st.cost, u)
	if len(st.step.ToolCalls) > 0 {
		st.sealed = true
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

// subID is the trajectory_id of the sub-agent of task call callID.
func (b *builder) subID(callID string) string { return b.runID() + "/" + callID }

func (b *builder) runID() string {
	if b.meta.Run != "" {
		return b.meta.Run
	}
	return b.run
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

func (b *builder) finish() *Trajectory {
	t := &Trajectory{SchemaVersion: SchemaVersion, TrajectoryID: b.runID(), Agent: b.agent(),
		SessionID: b.meta.SessionID}
	if b.start != nil && b.start.SessionID != "" {
		t.SessionID = b.start.SessionID
	}
	if b.result != nil && b.result.SessionID != "" {
		t.SessionID = b.result.SessionID
	}
	if b.pendN > 0 {
		// Usage before any agent step: the first one's, or a step of its
		// own when the model said nothing at all.
		st := b.firstAgent()
		if st == nil {
			st = b.main.add(&Step{Source: "agent"})
		}
		st.usage.Add(b.pending)
		st.usageN += b.pendN
		st.cost = sumCost(st.cost, b.pendC)
	}
	if len(b.main.steps) == 0 {
		// Harbor's models require a step; marked, as it is not the
		// stream's (Check).
		b.main.add(&Step{Source: "system", Message: "The run's stream has no prompt, message, tool call or error.",
			Extra: extra("no_steps", true)})
	}
	var total event.Usage
	t.Steps = b.main.build(&total)
	for _, id := range b.subIDs {
		sub := Trajectory{SchemaVersion: SchemaVersion, TrajectoryID: b.subID(id), SessionID: t.SessionID,
			Agent: t.Agent, Steps: b.subs[id].build(&total),
			// The stream reports a sub-agent's usage with its parent's.
			Extra: map[string]any{"parent_call_id": id, "usage_in_parent": true}}
		t.SubagentTrajectories = append(t.SubagentTrajectories, sub)
		b.refer(id)
	}
	t.FinalMetrics, t.Extra = b.final(total, len(t.Steps))
	if b.meta.Prompt == "" && b.start != nil && !hasTurns(t.Steps) {
		t.Notes = "The prompt is not in the trajectory: the run's event stream does not carry it."
	}
	return t
}

func hasTurns(steps []Step) bool {
	for _, s := range steps {
		if s.Source == "user" {
			return true
		}
	}
	return false
}

func (b *builder) agent() Agent {
	a := Agent{Name: b.meta.Agent, Version: b.meta.AgentVersion, ModelName: b.meta.Model}
	if s := b.start; s != nil {
		a.Name = cmpOr(s.Agent, a.Name)
		a.Version = cmpOr(s.AgentVersion, a.Version)
		a.ModelName = cmpOr(s.Model, a.ModelName)
		if len(s.Tools) > 0 {
			a.Extra = map[string]any{"tools": s.Tools}
		}
	}
	// ATIF requires both; the stream may know neither.
	a.Name = cmpOr(a.Name, "unknown")
	a.Version = cmpOr(a.Version, "unknown")
	return a
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (b *builder) firstAgent() *stepState {
	for _, st := range b.main.steps {
		if st.step.Source == "agent" {
			return st
		}
	}
	return nil
}

// refer adds the reference to sub-agent id's trajectory to the result of
// its task call, where there is one.
func (b *builder) refer(id string) {
	if r, ok := b.results[id]; ok {
		r.st.step.Observation.Results[r.i].SubagentTrajectoryRef = []SubagentTrajectoryRef{{TrajectoryID: b.subID(id)}}
	}
}

// build numbers a track's steps and sets their metrics, adding them to
// total.
func (tr *track) build(total *event.Usage) []Step {
	out := make([]Step, len(tr.steps))
	for i, st := range tr.steps {
		s := *st.step
		s.StepID = i + 1
		if st.usageN > 0 {
			total.Add(st.usage)
			ex := fields(st.usage)
			ex["usage_events"] = st.usageN
			if st.usage.CostEstimated {
				ex["cost_estimated"] = true
			}
			s.Metrics = &Metrics{PromptTokens: prompt(st.usage), CompletionTokens: st.usage.OutputTokens,
				CachedTokens: st.usage.CacheReadTokens, CostUSD: st.cost, Extra: ex}
		}
		out[i] = s
	}
	return out
}

func sumCost(a, b *float64) *float64 {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	v := *a + *b
	return &v
}

// final returns the final metrics (the result's usage and cost; the sums
// of the steps' for a stream without a result) and the trajectory's
// extra: what the result says of the run.
func (b *builder) final(sum event.Usage, steps int) (*FinalMetrics, map[string]any) {
	fm := &FinalMetrics{TotalSteps: steps}
	ex := map[string]any{"harness_run": b.runID()}
	u := sum
	if r := b.result; r != nil {
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
	estimated := u.CostEstimated
	if b.result != nil {
		estimated = b.result.CostEstimated
	}
	if estimated {
		fm.Extra["cost_estimated"] = true
	}
	return fm, ex
}
