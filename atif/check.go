package atif

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentharness/harness/event"
)

// Validate checks what ATIF asks of a trajectory beyond its JSON Schema
// (Harbor's models check it in code): step ids run 1, 2, 3, … in every
// trajectory, a step names a tool_call_id once, each observation
// result's source_call_id names a tool call of its own step, and each
// embedded subagent trajectory's id is unique and every reference to one
// resolves.
func Validate(t *Trajectory) error {
	ids := map[string]bool{}
	for _, s := range t.SubagentTrajectories {
		if ids[s.TrajectoryID] {
			return fmt.Errorf("atif: subagent trajectory_id %q twice", s.TrajectoryID)
		}
		ids[s.TrajectoryID] = true
	}
	for _, tr := range append([]Trajectory{*t}, t.SubagentTrajectories...) {
		for i, s := range tr.Steps {
			if s.StepID != i+1 {
				return fmt.Errorf("atif: trajectory %q: step %d has step_id %d", tr.TrajectoryID, i+1, s.StepID)
			}
			for k, c := range s.ToolCalls {
				if slices.ContainsFunc(s.ToolCalls[:k], func(o ToolCall) bool { return o.ToolCallID == c.ToolCallID }) {
					return fmt.Errorf("atif: step %d: tool_call_id %q twice", s.StepID, c.ToolCallID)
				}
			}
			if s.Observation == nil {
				continue
			}
			for _, r := range s.Observation.Results {
				if r.SourceCallID != "" && !slices.ContainsFunc(s.ToolCalls, func(c ToolCall) bool { return c.ToolCallID == r.SourceCallID }) {
					return fmt.Errorf("atif: step %d: observation of %q, a call not in the step", s.StepID, r.SourceCallID)
				}
				for _, ref := range r.SubagentTrajectoryRef {
					if !ids[ref.TrajectoryID] {
						return fmt.Errorf("atif: step %d: reference to no subagent trajectory %q", s.StepID, ref.TrajectoryID)
					}
				}
			}
		}
	}
	return nil
}

// Check reports how t differs from the run its events are the stream of:
// a message, reasoning block, tool call, tool result, prompt or error of
// the stream not in t (in order), or usage in t that is not the stream's
// (each step's metrics consistent with its own fields, the steps' sum
// equal to the final metrics, and both to the result's usage, or the
// usage events' sum when the stream has no result).
func Check(t *Trajectory, evs []event.Event) error {
	if err := Validate(t); err != nil {
		return err
	}
	var want, got lists
	var sum event.Usage
	var result *event.Result
	for _, ev := range evs {
		want.addEvent(ev)
		switch b := ev.Body.(type) {
		case *event.Usage:
			sum.Add(*b)
		case *event.Result:
			result = b
		}
	}
	var steps event.Usage
	for _, tr := range append([]Trajectory{*t}, t.SubagentTrajectories...) {
		parent := ""
		if p, ok := tr.Extra["parent_call_id"].(string); ok {
			parent = p
		}
		for _, s := range tr.Steps {
			got.addStep(parent, s)
			if s.Metrics == nil {
				continue
			}
			u, err := metricsUsage(s.Metrics.Extra)
			if err != nil {
				return fmt.Errorf("atif: step %d: %w", s.StepID, err)
			}
			if s.Metrics.PromptTokens != prompt(u) || s.Metrics.CompletionTokens != u.OutputTokens || s.Metrics.CachedTokens != u.CacheReadTokens {
				return fmt.Errorf("atif: step %d: metrics %d/%d/%d disagree with its usage %+v", s.StepID,
					s.Metrics.PromptTokens, s.Metrics.CompletionTokens, s.Metrics.CachedTokens, u)
			}
			steps.Add(u)
		}
	}
	if err := want.diff(&got); err != nil {
		return err
	}
	total := tokens(sum)
	if result != nil {
		total = tokens(result.Usage)
	}
	if steps != total {
		return fmt.Errorf("atif: the steps' usage %+v is not the stream's %+v", steps, total)
	}
	fm := t.FinalMetrics
	if fm == nil {
		return errors.New("atif: no final_metrics")
	}
	fu, err := metricsUsage(fm.Extra)
	if err != nil {
		return fmt.Errorf("atif: final_metrics: %w", err)
	}
	if fu != total || fm.TotalPromptTokens != prompt(total) || fm.TotalCompletionTokens != total.OutputTokens || fm.TotalCachedTokens != total.CacheReadTokens {
		return fmt.Errorf("atif: final_metrics %+v (%d/%d/%d) are not the stream's usage %+v", fu,
			fm.TotalPromptTokens, fm.TotalCompletionTokens, fm.TotalCachedTokens, total)
	}
	if fm.TotalSteps != len(t.Steps) {
		return fmt.Errorf("atif: total_steps %d, but %d steps", fm.TotalSteps, len(t.Steps))
	}
	return nil
}

// metricsUsage reads the stream's usage fields back from an extra (as
// written, or as decoded from JSON).
func metricsUsage(ex map[string]any) (event.Usage, error) {
	var u event.Usage
	for k, p := range map[string]*int64{"input_tokens": &u.InputTokens, "output_tokens": &u.OutputTokens,
		"cache_read_tokens": &u.CacheReadTokens, "cache_write_tokens": &u.CacheWriteTokens, "reasoning_tokens": &u.ReasoningTokens} {
		switch v := ex[k].(type) {
		case int64:
			*p = v
		case float64:
			*p = int64(v)
		default:
			return u, fmt.Errorf("extra.%s missing", k)
		}
	}
	return u, nil
}

// lists are the contents of a run in order, per track ("" the main
// agent, else the parent task call).
type lists struct {
	items []string
}

func (l *lists) add(parent, kind, s string) {
	l.items = append(l.items, parent+"\x00"+kind+"\x00"+s)
}

func (l *lists) addEvent(ev event.Event) {
	switch b := ev.Body.(type) {
	case *event.Message:
		if b.Role == "assistant" && b.Text == "" {
			return // an empty message leaves no trace in a step
		}
		l.add(b.ParentCallID, "message:"+b.Role, b.Text)
	case *event.Reasoning:
		if b.Text != "" {
			l.add(b.ParentCallID, "reasoning", b.Text)
		}
	case *event.ToolStart:
		l.add(b.ParentCallID, "call", b.CallID)
	case *event.ToolEnd:
		l.add("", "result", b.CallID+"\x00"+b.Output)
	case *event.TurnStart:
		if b.Origin != event.OriginAgent {
			l.add("", "message:user", b.Prompt)
		}
	case *event.Error:
		l.add("", "error", b.Message)
	}
}

func (l *lists) addStep(parent string, s Step) {
	switch {
	case s.Source == "user" && s.Extra["prompt"] == true, s.Source == "system" && s.Extra["no_steps"] == true:
		// Meta.Prompt, or the step of a stream with none: not from the stream.
	case s.Source == "system" && s.Extra["error"] != nil:
		l.add(parent, "error", s.Message)
	case s.Source != "agent":
		l.add(parent, "message:"+s.Source, s.Message)
	default:
		if s.ReasoningContent != "" {
			l.add(parent, "reasoning", s.ReasoningContent)
		}
		if s.Message != "" {
			l.add(parent, "message:assistant", s.Message)
		}
		for _, c := range s.ToolCalls {
			l.add(parent, "call", c.ToolCallID)
		}
		if s.Observation != nil {
			for _, r := range s.Observation.Results {
				if r.Extra["id_reused"] == true {
					continue // the end of a call whose id was reused: no tool_end of the stream
				}
				id := r.SourceCallID
				if id == "" {
					id, _ = r.Extra["call_id"].(string)
				}
				l.add("", "result", id+"\x00"+r.Content)
			}
		}
	}
}

// diff compares the two: tool results as multisets (a result is in its
// call's step, not where its tool_end came), everything else as one
// sequence per track (a trajectory holds a sub-agent's apart).
func (want *lists) diff(got *lists) error {
	split := func(l *lists) (seqs map[string][]string, results []string) {
		seqs = map[string][]string{}
		for _, it := range l.items {
			if strings.HasPrefix(it, "\x00result\x00") {
				results = append(results, it)
				continue
			}
			parent, _, _ := strings.Cut(it, "\x00")
			seqs[parent] = append(seqs[parent], it)
		}
		slices.Sort(results)
		return seqs, results
	}
	ws, wr := split(want)
	gs, gr := split(got)
	if !slices.Equal(wr, gr) {
		return fmt.Errorf("atif: tool results differ: the stream has %d, the trajectory %d", len(wr), len(gr))
	}
	for _, parent := range slices.Sorted(maps.Keys(ws)) {
		w, g := ws[parent], gs[parent]
		for i := range min(len(w), len(g)) {
			if w[i] != g[i] {
				return fmt.Errorf("atif: item %d: the stream has %q, the trajectory %q", i+1, w[i], g[i])
			}
		}
		if len(w) != len(g) {
			return fmt.Errorf("atif: the stream has %d items, the trajectory %d", len(w), len(g))
		}
	}
	if len(gs) != len(ws) {
		return fmt.Errorf("atif: the trajectory has %d tracks, the stream %d", len(gs), len(ws))
	}
	return nil
}
