package atif

import "github.com/agentharness/harness/event"

// plan is what a first pass over a run's events learns for the passes
// that build its trajectory a step at a time: what the trajectory says
// before its steps, and what a step cannot know from the events before
// it (whether a tool call will ever end, which result a sub-agent's
// trajectory is referred from, where a sub-agent's events end, the ends
// of calls that end late). Its size is that of the run's sub-agents, of
// the calls open at a time and of the late ends kept (bounded: maxLate,
// maxLateBytes), never that of the run's content or of its count of
// calls.
type plan struct {
	events int
	run    string              // the first event's run id
	start  *event.SessionStart // the first session_start
	result *event.Result       // the last result
	subs   []subPlan           // in order of first appearance
	sub    map[string]int      // index in subs by the parent task call's id
	// unended are the tool_starts (by index) that open a call no tool_end
	// ends: their step waits for no result.
	unended map[int]bool
	// refs are the tool_ends (by index) whose results refer to a
	// sub-agent's trajectory: the last that ended its task call. The
	// survey sees the ends after a sub-agent's first event (its task
	// call ends after it); a sub-agent whose call has no end after it
	// takes a pass of its own (refEvent), as the survey cannot keep every
	// call's end in case it is a sub-agent's.
	refs map[int]string
	// late are the ends of calls that end far after they start (lateBytes,
	// lateEvents), by their tool_start's index, kept by the first pass of
	// Export (collect) so that their steps wait for no later line: a
	// background command, or a call the stream ends only at the run's
	// result or a turn's end, would else hold every step after its own.
	// At most maxLate of them, with maxLateBytes of outputs and diffs
	// (a stream caps each at event.MaxOutputBytes); a call past either
	// bound is waited for.
	late     map[int]lateEnd
	lateSize int64
	collect  bool  // keep late
	pos      int64 // collect: where the event in hand is in the log, give or take a buffer

	at      int                 // index of the next event
	open    map[string]openCall // calls started, not ended
	lastEnd map[string]int      // the last end of each sub-agent's call, after its first event
	unknown map[string]bool     // refEvent: the sub-agents whose call's last end is not in lastEnd
}

// subPlan is where one sub-agent's events are: the first and last that
// change its trajectory (a tool_end of one of its calls counts).
type subPlan struct {
	id          string
	first, last int
}

type openCall struct {
	at     int    // the tool_start's index
	parent string // its track: "" the main agent
	pos    int64  // the plan's pos at the tool_start
}

// lateEnd is the end of a call that ends late: its index and its body.
type lateEnd struct {
	at  int
	end *event.ToolEnd
}

// A call ends late when its end comes over lateBytes of log or over
// lateEvents events after its start: a step waits for its calls' ends,
// and the steps after it wait with it, held (vars: tests set them).
var (
	lateBytes    int64 = 1 << 20
	lateEvents         = 4096
	maxLate            = 256
	maxLateBytes int64 = 16 << 20
)

func newPlan() *plan {
	return &plan{sub: map[string]int{}, open: map[string]openCall{}, refs: map[int]string{}, lastEnd: map[string]int{},
		late: map[int]lateEnd{}}
}

// event surveys the next event, matching calls as the builder does.
func (p *plan) event(ev event.Event) {
	i := p.at
	p.at++
	if p.run == "" {
		p.run = ev.Run
	}
	switch b := ev.Body.(type) {
	case *event.SessionStart:
		if p.start == nil {
			p.start = b
		}
	case *event.Result:
		p.result = b
	case *event.Reasoning:
		p.touch(b.ParentCallID, i)
	case *event.Message:
		p.touch(b.ParentCallID, i)
	case *event.ToolStart:
		p.touch(b.ParentCallID, i)
		if c, reused := p.open[b.CallID]; reused {
			p.touch(c.parent, i) // it ends here (builder.toolStart)
		}
		p.open[b.CallID] = openCall{at: i, parent: b.ParentCallID, pos: p.pos}
	case *event.ToolEnd:
		if c, ok := p.open[b.CallID]; ok {
			delete(p.open, b.CallID)
			p.keepLate(c, i, b)
			p.touch(c.parent, i)
			if _, sub := p.sub[b.CallID]; sub {
				p.lastEnd[b.CallID] = i
			}
		}
	}
}

// keepLate keeps the end (at i) of call c when it ends late, within
// the bounds.
func (p *plan) keepLate(c openCall, i int, b *event.ToolEnd) {
	if !p.collect || (p.pos-c.pos <= lateBytes && i-c.at <= lateEvents) || len(p.late) >= maxLate {
		return
	}
	size := int64(len(b.Output) + len(b.Diff))
	for _, path := range b.Paths {
		size += int64(len(path))
	}
	if p.lateSize+size > maxLateBytes {
		return
	}
	p.lateSize += size
	p.late[c.at] = lateEnd{at: i, end: b}
}

func (p *plan) touch(parent string, i int) {
	if parent == "" {
		return
	}
	k, ok := p.sub[parent]
	if !ok {
		k = len(p.subs)
		p.sub[parent] = k
		p.subs = append(p.subs, subPlan{id: parent, first: i})
	}
	p.subs[k].last = i
}

// surveyed ends the first pass, and says whether the run needs a pass of
// refEvent.
func (p *plan) surveyed() bool {
	p.events = p.at
	p.unended = map[int]bool{}
	for _, c := range p.open {
		p.unended[c.at] = true
	}
	p.at, p.open = 0, map[string]openCall{}
	p.unknown = map[string]bool{}
	for _, s := range p.subs {
		if _, ok := p.lastEnd[s.id]; !ok {
			p.unknown[s.id] = true
		}
	}
	return len(p.unknown) > 0
}

// refEvent is the pass that finds the refs the survey could not: it
// matches calls again, keeping the last end of each unknown sub-agent's
// task call.
func (p *plan) refEvent(ev event.Event) {
	i := p.at
	p.at++
	switch b := ev.Body.(type) {
	case *event.ToolStart:
		p.open[b.CallID] = openCall{at: i}
	case *event.ToolEnd:
		if _, ok := p.open[b.CallID]; ok {
			delete(p.open, b.CallID)
			if p.unknown[b.CallID] {
				p.lastEnd[b.CallID] = i
			}
		}
	}
}

// done ends the passes of the plan.
func (p *plan) done() {
	for id, i := range p.lastEnd {
		p.refs[i] = id
	}
	p.open, p.lastEnd, p.unknown = nil, nil, nil
}

// runID is the trajectory's id: the caller's, else the stream's.
func (p *plan) runID(m Meta) string {
	if m.Run != "" {
		return m.Run
	}
	return p.run
}

// subID is the trajectory_id of the sub-agent of task call callID.
func (p *plan) subID(m Meta, callID string) string { return p.runID(m) + "/" + callID }

// trajectory is the trajectory's envelope: what goes before its steps.
func (p *plan) trajectory(m Meta) *Trajectory {
	t := &Trajectory{SchemaVersion: SchemaVersion, TrajectoryID: p.runID(m), Agent: agentOf(m, p.start),
		SessionID: m.SessionID}
	if p.start != nil && p.start.SessionID != "" {
		t.SessionID = p.start.SessionID
	}
	if p.result != nil && p.result.SessionID != "" {
		t.SessionID = p.result.SessionID
	}
	return t
}

// subTrajectory is sub-agent callID's trajectory in t, without its steps.
func (p *plan) subTrajectory(m Meta, t *Trajectory, callID string) Trajectory {
	return Trajectory{SchemaVersion: SchemaVersion, TrajectoryID: p.subID(m, callID), SessionID: t.SessionID,
		Agent: t.Agent,
		// The stream reports a sub-agent's usage with its parent's.
		Extra: map[string]any{"parent_call_id": callID, "usage_in_parent": true}}
}

func agentOf(m Meta, s *event.SessionStart) Agent {
	a := Agent{Name: m.Agent, Version: m.AgentVersion, ModelName: m.Model}
	if s != nil {
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
