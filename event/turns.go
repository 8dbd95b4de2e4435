package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// TurnStart opens a turn of a live session: one prompt sent to the agent,
// or (Origin OriginAgent) a turn the agent began by itself, with no
// prompt of the caller's (Claude Code answering the end of a background
// command). Turns do not overlap: the next turn_start comes after this
// turn's turn_end. TurnID is "turn_1", "turn_2", … in the order the
// prompts were sent, "agent_1", "agent_2", … for the agent's own turns
// (the Stream numbers a turn whose id is empty).
type TurnStart struct {
	TurnID          string `json:"turn_id"`
	Prompt          string `json:"prompt"`
	PromptTruncated bool   `json:"prompt_truncated,omitempty"`
	Origin          string `json:"origin,omitempty"`
}

// OriginAgent is the Origin of a turn the agent began by itself. A
// turn's Origin is otherwise empty: the caller's prompt began it.
const OriginAgent = "agent"

// TurnEnd closes the open turn, exactly once. Status is one of the Result
// statuses; Text the turn's answer (the rules of result.text, within the
// turn); Usage the turn's totals, which the usage events of the turn sum
// to; CostUSD the turn's cost, nil when unknown (the Stream sets it and
// CostEstimated, as it sets a run's result's). Synthetic is set when the
// harness closed the turn itself because the session ended during it (the
// agent died, a watchdog, an interrupt).
type TurnEnd struct {
	TurnID        string   `json:"turn_id"`
	Status        string   `json:"status"`
	Text          string   `json:"text"`
	TextTruncated bool     `json:"text_truncated,omitempty"`
	Usage         Usage    `json:"usage"`
	CostUSD       *float64 `json:"cost_usd,omitempty"`
	CostEstimated bool     `json:"cost_estimated,omitempty"`
	DurationMS    int64    `json:"duration_ms"`
	Synthetic     bool     `json:"synthetic,omitempty"`
	// SessionCostUSD is the agent's own cost of the whole session so far,
	// as it reported it during the turn (Claude's total_cost_usd, ACP's
	// usage_update cost: running totals); nil when it reported none. The
	// adapter sets it; the Stream makes CostUSD the turn's part of it,
	// and the session's result the last one. It is never emitted.
	SessionCostUSD *float64 `json:"-"`
}

// PermissionRequest is the agent asking to run a tool call (a session
// with permissions ask): the caller answers it by CallID, and an
// unanswered request is denied after DeadlineMS.
type PermissionRequest struct {
	CallID     string          `json:"call_id"`
	TurnID     string          `json:"turn_id,omitempty"`
	Tool       string          `json:"tool"`
	Kind       Kind            `json:"kind"`
	Input      json.RawMessage `json:"input,omitempty"` // a JSON object, as the agent gave it
	Command    string          `json:"command,omitempty"`
	Path       string          `json:"path,omitempty"`
	DeadlineMS int64           `json:"deadline_ms,omitempty"`
}

func (*TurnStart) EventType() Type         { return TypeTurnStart }
func (*TurnEnd) EventType() Type           { return TypeTurnEnd }
func (*PermissionRequest) EventType() Type { return TypePermissionRequest }

// SessionOnly reports whether only a live session emits events of type t
// (a one-prompt run and harness parse never do).
func SessionOnly(t Type) bool {
	return t == TypeTurnStart || t == TypeTurnEnd || t == TypePermissionRequest
}

// openTurn is the Stream's turn in progress.
type openTurn struct {
	id    string
	at    time.Time
	usage Usage // the sum of the usage events when the turn started
}

// turnStart opens a turn; one still open (which the caller should not
// leave) is closed first, as an error. mu is held.
func (s *Stream) turnStart(v *TurnStart) {
	if s.turn != nil {
		s.emit(&TurnEnd{Status: ResultError, Synthetic: true})
	}
	s.turns++
	if v.TurnID == "" {
		v.TurnID = "turn_" + strconv.Itoa(s.turns)
	}
	s.capText(&v.Prompt, &v.PromptTruncated)
	s.turn = &openTurn{id: v.TurnID, at: s.clock(), usage: s.usage}
	// The session's answer is the last turn's.
	s.lastText, s.lastCut = "", false
	s.deltaText.Reset()
}

// turnEnd completes the turn's end before it is sent: its id, the tool
// calls still open (closed with the turn's status), its usage made to add
// up (as settleUsage does for a run), its text. false: no turn is open
// (an answer to a prompt never sent), and nothing is sent. mu is held.
func (s *Stream) turnEnd(v *TurnEnd) bool {
	t := s.turn
	if t == nil {
		return false
	}
	v.TurnID = t.id
	switch v.Status {
	case ResultSuccess, ResultError, ResultTimeout, ResultCancelled:
	default:
		v.Status = ResultError
	}
	tool := StatusCancelled
	if v.Status == ResultTimeout {
		tool = StatusTimeout
	}
	for _, c := range s.openCalls() {
		s.toolEnd(&ToolEnd{CallID: c.agentID, Name: c.name, Kind: c.kind, Status: tool, Synthetic: true})
	}
	sum := s.usage.tokens()
	sum = Usage{InputTokens: sum.InputTokens - t.usage.InputTokens, OutputTokens: sum.OutputTokens - t.usage.OutputTokens,
		CacheReadTokens: sum.CacheReadTokens - t.usage.CacheReadTokens, CacheWriteTokens: sum.CacheWriteTokens - t.usage.CacheWriteTokens,
		ReasoningTokens: sum.ReasoningTokens - t.usage.ReasoningTokens}
	total := v.Usage.tokens()
	d := Usage{InputTokens: total.InputTokens - sum.InputTokens, OutputTokens: total.OutputTokens - sum.OutputTokens,
		CacheReadTokens: total.CacheReadTokens - sum.CacheReadTokens, CacheWriteTokens: total.CacheWriteTokens - sum.CacheWriteTokens,
		ReasoningTokens: total.ReasoningTokens - sum.ReasoningTokens}
	switch {
	case v.Usage.IsZero():
		v.Usage = sum
	case d.InputTokens < 0 || d.OutputTokens < 0 || d.CacheReadTokens < 0 || d.CacheWriteTokens < 0 || d.ReasoningTokens < 0:
		s.emit(&Warning{Code: WarnUsageMismatch, Message: "the agent's usage for the turn is below the sum of its per-call usage; the turn reports the sum"})
		cost, est := v.Usage.CostUSD, v.Usage.CostEstimated
		v.Usage = sum
		v.Usage.CostUSD, v.Usage.CostEstimated = cost, est
	case !d.IsZero():
		d.CostUSD, d.CostEstimated = v.Usage.CostUSD, v.Usage.CostEstimated
		if d.CostUSD == 0 && s.cfg.Price != nil {
			s.cfg.Price(&d)
		}
		s.emit(&d)
	}
	switch {
	case !TurnCompleted(v):
		// No answer, not even the agent's own text for it: what the
		// agent said before it was stopped is in the stream already.
		v.Text, v.TextTruncated = "", false
	case v.Text == "":
		v.Text, v.TextTruncated = s.lastText, s.lastCut
		if v.Text == "" && v.Status == ResultSuccess {
			v.Text = s.deltaText.String()
		}
	}
	s.capText(&v.Text, &v.TextTruncated)
	s.turnText, s.turnCut = v.Text, v.TextTruncated
	s.turnCost(v, t)
	v.DurationMS = max(0, s.clock().Sub(t.at).Milliseconds())
	s.turn = nil
	return true
}

// turnCost gives turn t its cost as buildResult gives a run's: the
// agent's own where it reports it, else the sum of the costs of the
// turn's usage events (estimated where harness priced them), else none.
// An agent reports the session's running total (SessionCostUSD): the
// turn's part is what it grew by since the cost counted before the turn,
// which is the previous total, and the stream's cost becomes the total,
// so that the session's result has the agent's last total and not a sum
// of parts. mu is held.
func (s *Stream) turnCost(v *TurnEnd, t *openTurn) {
	v.CostUSD, v.CostEstimated = nil, false
	if total := v.SessionCostUSD; total != nil && !garbageCost(*total) {
		part := costSince(*total, t.usage.CostUSD)
		s.usage.CostUSD, s.usage.CostEstimated = *total, false
		s.sessionCost = Float(*total)
		if part >= 0 { // below 0, the total fell under what was counted before the turn: its part is unknown
			v.CostUSD = Float(part)
		}
		return
	}
	if part := costSince(s.usage.CostUSD, t.usage.CostUSD); part > 0 {
		v.CostUSD, v.CostEstimated = Float(part), s.usage.CostEstimated
	}
}

// costSince is what a running cost grew by from before to now. A
// difference is rounded to 1e-10 USD, far below any token's price: a part
// of 0.3-0.1 USD is 0.2, not 0.19999999999999998.
func costSince(now, before float64) float64 {
	if before == 0 {
		return now
	}
	d := now - before
	if r := math.Round(d*1e10) / 1e10; !math.IsInf(r, 0) { // d over 1e298 USD is left as it is
		return r
	}
	return d
}

// TurnCompleted reports whether the agent completed turn e on its own,
// successfully or not: a turn interrupted (cancelled), out of time
// (timeout) or closed by the harness (synthetic) did not, and has no
// answer (its text is "").
func TurnCompleted(e *TurnEnd) bool {
	return !e.Synthetic && e.Status != ResultCancelled && e.Status != ResultTimeout
}

// closeTurn ends a turn still open when the stream finishes: the session
// ended during it, with the session's status (error when it has none).
// mu is held.
func (s *Stream) closeTurn(status string) {
	if s.turn == nil {
		return
	}
	if status == "" || status == ResultSuccess {
		status = ResultError
	}
	s.emit(&TurnEnd{Status: status, Synthetic: true})
}

// permission names a permission request's call as the stream does (a
// reused id is renamed, see toolStart) and gives it the open turn; an
// input that is not a JSON object within the caps is left out. mu is held.
func (s *Stream) permission(v *PermissionRequest) {
	v.CallID = s.aliasOf(v.CallID)
	if v.TurnID == "" && s.turn != nil {
		v.TurnID = s.turn.id
	}
	if !v.Kind.Valid() {
		v.Kind = KindOther
	}
	if len(v.Input) > 0 {
		var in []byte
		if v.Input[0] == '{' && !InputOverCap(v.Input) {
			if c, ok := compactJSON(v.Input); ok {
				in = bytes.Clone(c)
			}
		}
		v.Input = in
	}
	for _, f := range [...]struct {
		field *string
		max   int
	}{{&v.Tool, MaxFieldBytes}, {&v.Path, MaxFieldBytes}, {&v.Command, MaxOutputBytes}} {
		if len(*f.field) > f.max {
			*f.field = s.unsplit(cutUTF8(*f.field, f.max))
		}
	}
}

// InTurn reports whether a turn is open.
func (s *Stream) InTurn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turn != nil
}

// turnCheck is what Check keeps of a stream's turns.
type turnCheck struct {
	open     string // the open turn's id
	openSeq  int64
	ids      map[string]bool
	usage    Usage // the usage events of the open turn
	sum      Usage // the turn_end usages
	seen     bool
	outside  bool   // a usage event outside every turn, once turns were seen
	toolOpen int64  // tool calls open when the turn began
	text     string // the last turn_end's text
}

// turn checks the turn invariants of docs/events.md for one event: every
// turn_start has exactly one later turn_end, turns do not overlap, the
// usage events of a turn sum to its usage, no tool call outlives its turn.
func (c *checker) turn(ev Event) {
	t := &c.turns
	switch b := ev.Body.(type) {
	case *TurnStart:
		if t.ids == nil {
			t.ids = map[string]bool{}
		}
		if t.open != "" {
			c.fail(ev, "turn %q starts while turn %q (seq %d) is open", b.TurnID, t.open, t.openSeq)
		}
		if b.TurnID == "" || t.ids[b.TurnID] {
			c.fail(ev, "turn_id %q is empty or not unique", b.TurnID)
		}
		if b.Origin != "" && b.Origin != OriginAgent {
			c.fail(ev, "origin %q", b.Origin)
		}
		t.ids[b.TurnID] = true
		t.open, t.openSeq, t.usage, t.seen = b.TurnID, ev.Seq, Usage{}, true
		t.toolOpen = int64(len(c.starts))
	case *TurnEnd:
		if t.open == "" || b.TurnID != t.open {
			c.fail(ev, "turn_end %q without its open turn_start (open: %q)", b.TurnID, t.open)
		}
		switch b.Status {
		case ResultSuccess, ResultError, ResultTimeout, ResultCancelled:
		default:
			c.fail(ev, "status %q", b.Status)
		}
		if got, want := t.usage.tokens(), b.Usage.tokens(); got != want {
			c.fail(ev, "turn usage %+v is not the sum of its usage events %+v", want, got)
		}
		if int64(len(c.starts)) > t.toolOpen {
			c.fail(ev, "a tool call of turn %q is still open at its end", b.TurnID)
		}
		if !TurnCompleted(b) && b.Text != "" {
			c.fail(ev, "turn %q did not complete (%s) but has an answer", b.TurnID, b.Status)
		}
		t.sum.Add(b.Usage)
		t.open, t.text = "", b.Text
	case *Usage:
		if t.open != "" {
			t.usage.Add(*b)
		} else if t.seen {
			t.outside = true
		}
	case *PermissionRequest:
		if b.CallID == "" || !b.Kind.Valid() {
			c.fail(ev, "call_id or kind missing or invalid (%q %q)", b.CallID, b.Kind)
		}
	}
}

// turnsResult checks the session's result against its turns: the turns'
// usage sums to result.usage (so no usage event falls outside a turn),
// and its text is the last turn's answer.
func (c *checker) turnsResult(ev Event, r *Result) {
	t := &c.turns
	if !t.seen {
		return
	}
	if t.open != "" {
		c.fail(ev, "turn %q (seq %d) never ended", t.open, t.openSeq)
	}
	if got, want := t.sum.tokens(), r.Usage.tokens(); got != want || t.outside {
		c.fail(ev, "%s", fmt.Sprintf("usage %+v is not the sum of the turns' usage %+v (usage outside a turn: %t)", want, got, t.outside))
	}
	if r.Text != t.text {
		c.fail(ev, "text is not the last turn's answer")
	}
}
