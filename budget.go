package harness

import (
	"fmt"
	"time"

	"github.com/agentharness/harness/event"
)

// BudgetOverride is what a caller sets over the configured budgets: the
// CLI's budget flags (--idle-timeout, --timeout, --tool-timeout, --linger,
// --kill-grace) and the budgets of serve's run request. A nil field keeps
// the configured budget; 0 turns it off. Tool is the budget of a tool
// call of every kind.
type BudgetOverride struct {
	Idle, Hard, Tool, Linger, KillGrace *time.Duration
}

// BudgetError is a budget out of range. Budget names it as serve's
// request body does: idle, hard, tool, linger or kill_grace (and, of a
// Task's Budgets, idle_warning or setup; of SessionOptions, turn).
type BudgetError struct {
	Budget string
	Value  time.Duration
}

func (e *BudgetError) Error() string { return e.Named(e.Budget) }

// Named is the error's text with the budget called name, as the caller's
// input calls it ("--timeout", "budgets.hard"): front doors differ in
// the name only.
func (e *BudgetError) Named(name string) string {
	return fmt.Sprintf("%s %s: a budget cannot be negative (0 turns it off)", name, e.Value)
}

// Validate returns a *BudgetError for the first negative budget (idle,
// hard, tool, linger, kill_grace), as the configuration refuses its own.
func (o BudgetOverride) Validate() error {
	for _, b := range []struct {
		name string
		d    *time.Duration
	}{{"idle", o.Idle}, {"hard", o.Hard}, {"tool", o.Tool}, {"linger", o.Linger}, {"kill_grace", o.KillGrace}} {
		if b.d != nil && *b.d < 0 {
			return &BudgetError{Budget: b.name, Value: *b.d}
		}
	}
	return nil
}

// validate returns a *BudgetError for the first negative budget of b, as
// Validate and the configuration refuse one: negative, a budget is none
// of its documented values (0 turns it off, or KillGrace kills at once).
// Tool, a function of the kind, is asked for every kind once, here: a
// negative budget of one kind would otherwise run that kind's calls
// unbounded.
func (b *Budgets) validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"idle", b.Idle}, {"idle_warning", b.IdleWarning}, {"hard", b.Hard}, {"linger", b.Linger},
		{"kill_grace", b.KillGrace}, {"setup", b.Setup}} {
		if d.v < 0 {
			return &BudgetError{Budget: d.name, Value: d.v}
		}
	}
	if b.Tool != nil {
		for _, k := range event.Kinds() {
			if v := b.Tool(k); v < 0 {
				return &BudgetError{Budget: "tool", Value: v}
			}
		}
	}
	return nil
}

// Apply returns b with the budgets o sets put over it.
func (o BudgetOverride) Apply(b Budgets) Budgets {
	set := func(dst *time.Duration, v *time.Duration) {
		if v != nil {
			*dst = *v
		}
	}
	set(&b.Idle, o.Idle)
	set(&b.Hard, o.Hard)
	set(&b.Linger, o.Linger)
	set(&b.KillGrace, o.KillGrace)
	if o.Tool != nil {
		all := *o.Tool
		b.Tool = func(event.Kind) time.Duration { return all }
	}
	return b
}
