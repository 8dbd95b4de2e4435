package process

import (
	"container/list"
	"time"

	"github.com/agentharness/harness/event"
)

// toolSet is the open tool calls, kept so that the watchdogs' work on each
// wake does not grow with the number of open calls: the supervisor is
// woken by every ToolStarted, so a scan of every open call per wake made a
// run with many unclosed calls quadratic. Per distinct budget (there are as
// few as there are kinds), the calls not yet warned about wait in a queue
// in start order, which is also the order their budgets run out.
type toolSet struct {
	calls     map[string]*toolCall
	unlimited int // open calls with no budget
	byBudget  map[time.Duration]*budgetQueue
}

// budgetQueue is the open calls of one budget.
type budgetQueue struct {
	open    int       // open calls with this budget
	pending list.List // *toolCall not yet warned about, oldest first
}

type toolCall struct {
	id, name string
	kind     event.Kind
	started  time.Time // wall clock, for the warning's elapsed time
	at       time.Time // started on the tool clock (Proc.toolClock)
	budget   time.Duration
	pending  *list.Element // in its queue while not warned about
}

func newToolSet() *toolSet {
	return &toolSet{calls: map[string]*toolCall{}, byBudget: map[time.Duration]*budgetQueue{}}
}

// add opens c; a call already open under the same id is replaced.
func (ts *toolSet) add(c *toolCall) {
	ts.remove(c.id)
	ts.calls[c.id] = c
	if c.budget <= 0 {
		ts.unlimited++
		return
	}
	q := ts.byBudget[c.budget]
	if q == nil {
		q = &budgetQueue{}
		ts.byBudget[c.budget] = q
	}
	q.open++
	c.pending = q.pending.PushBack(c)
}

// remove closes the call id, if open.
func (ts *toolSet) remove(id string) {
	c, ok := ts.calls[id]
	if !ok {
		return
	}
	delete(ts.calls, id)
	if c.budget <= 0 {
		ts.unlimited--
		return
	}
	q := ts.byBudget[c.budget]
	if c.pending != nil {
		q.pending.Remove(c.pending)
		c.pending = nil
	}
	if q.open--; q.open == 0 {
		delete(ts.byBudget, c.budget)
	}
}

// maxBudget is the largest budget of an open call (0 with none), and
// whether some open call has no budget at all.
func (ts *toolSet) maxBudget() (budget time.Duration, unlimited bool) {
	for b := range ts.byBudget {
		budget = max(budget, b)
	}
	return budget, ts.unlimited > 0
}

// stalled removes from the queues and returns the calls whose budget ran
// out by now (each is returned once in its life), and returns the next
// time one runs out (zero if none is pending), both on the tool clock
// (toolCall.at). visits counts the calls looked at.
func (ts *toolSet) stalled(now time.Time, visits *int64) (out []*toolCall, next time.Time) {
	for _, q := range ts.byBudget {
		for e := q.pending.Front(); e != nil; e = q.pending.Front() {
			*visits++
			c := e.Value.(*toolCall)
			due := c.at.Add(c.budget)
			if now.Before(due) {
				if next.IsZero() || due.Before(next) {
					next = due
				}
				break
			}
			q.pending.Remove(e)
			c.pending = nil
			out = append(out, c)
		}
	}
	return out, next
}
