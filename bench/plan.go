package bench

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/isolate"
)

// Shard is part I (from 0) of N of a plan.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// String is the flag form, I/N.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ParseShard parses I/N (0 <= I < N).
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	idx, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("bench: shard %q: want I/N, e.g. 0/3", s)
	}
	if count < 1 || idx < 0 || idx >= count {
		return Shard{}, fmt.Errorf("bench: shard %q: want 0 <= I < N (shards are numbered from 0)", s)
	}
	return Shard{Index: idx, Count: count}, nil
}

// Of returns the specs of this shard of a plan of the given shape (its
// specs, Plan.Specs): the runs of groups [I·G/N, (I+1)·G/N) of the G
// groups, a group being the runs of every model and agent on one task
// and repeat (Shape.group), so that a paired comparison, made on those
// runs, is made of runs of one machine. Shards are as even as whole
// groups allow; a shard's runs are contiguous in plan order but for a
// plan of several models and repeats (the order is task, model, repeat,
// agent: a group is one block per model). Every process that expands the
// same plan agrees on the partition; the N shards cover the plan once.
// The zero Shard is the whole plan. A shape that is not the specs' (a
// test's bare specs) counts each run as a group of its own.
func (s Shard) Of(specs []Spec, sh Shape) []Spec {
	if s.Count <= 1 {
		return specs
	}
	if !sh.valid(len(specs)) {
		sh = Shape{Tasks: len(specs), Models: 1, Repeats: 1, Agents: 1}
	}
	var out []Spec
	for _, sp := range specs {
		if s.has(sh, sp.Index) {
			out = append(out, sp)
		}
	}
	return out
}

// has reports whether run i of a plan of shape sh is in s.
func (s Shard) has(sh Shape, i int) bool {
	if s.Count <= 1 {
		return true
	}
	g, n := sh.group(i), sh.groups()
	return s.bound(s.Index, n) <= g && g < s.bound(s.Index+1, n)
}

// bound is i·n/Count without overflow, for 0 <= i <= Count.
func (s Shard) bound(i, n int) int {
	hi, lo := bits.Mul64(uint64(i), uint64(n))
	q, _ := bits.Div64(hi, lo, uint64(s.Count)) // hi < Count as i·n/Count <= n
	return int(q)
}

// Shape is how a plan expands (Plan.Specs): for each of Tasks tasks,
// each of Models models (1 for the agents' defaults), each of Repeats
// repeats, each of Agents agents, one run. A report of a shard records
// it, so that a merge can tell which runs the shard holds.
type Shape struct {
	Tasks   int `json:"tasks"`
	Models  int `json:"models"`
	Repeats int `json:"repeats"`
	Agents  int `json:"agents"`
}

// Shape is the plan's shape.
func (p Plan) Shape() Shape {
	return Shape{Tasks: len(p.Tasks), Models: max(len(p.Models), 1), Repeats: max(p.Repeat, 1), Agents: len(p.Agents)}
}

// valid reports whether sh is the shape of a plan of runs runs (each
// factor at least 1; their product runs, computed without overflow).
func (sh Shape) valid(runs int) bool {
	n := 1
	for _, f := range []int{sh.Tasks, sh.Models, sh.Repeats, sh.Agents} {
		if f < 1 || f > runs || n > runs/f {
			return false
		}
		n *= f
	}
	return n == runs
}

// groups is the number of groups of sh: one per task and repeat.
func (sh Shape) groups() int { return sh.Tasks * sh.Repeats }

// group is the group of run i, from 0 in the order of tasks, then
// repeats: task·Repeats + repeat-1. Its runs are those of every model
// and agent on that task and repeat.
func (sh Shape) group(i int) int {
	perTask := sh.Models * sh.Repeats * sh.Agents
	return i/perTask*sh.Repeats + i/sh.Agents%sh.Repeats
}

// valid reports whether s is the whole plan (zero) or a shard of it.
func (s Shard) valid() bool {
	return s == Shard{} || s.Count >= 1 && s.Index >= 0 && s.Index < s.Count
}

// MaxRuns is the most runs a plan may have, and MaxGroups the most agent
// × model groups (a report pairs every two groups: MaxGroups² / 2
// comparisons). Both are far above any bench one pays agents for, and
// they bound what a merge of reports and results directories from
// anywhere may hold: an input saying more is refused, as is a plan
// saying more (bench.Run, CheckSize).
const (
	MaxRuns   = 100_000
	MaxGroups = 256
)

// maxRuns and maxGroups are the limits in force: tests lower them.
var maxRuns, maxGroups = MaxRuns, MaxGroups

// CheckSize refuses a plan of more than MaxRuns runs or MaxGroups agent ×
// model groups, without expanding it.
func (p Plan) CheckSize() error {
	models, rep := max(len(p.Models), 1), max(p.Repeat, 1)
	if g := len(p.Agents) * models; len(p.Agents) > maxGroups || models > maxGroups || g > maxGroups {
		return fmt.Errorf("bench: %d agents × %d models: more than %d groups to compare", len(p.Agents), models, maxGroups)
	}
	n := 1
	for _, f := range []int{len(p.Tasks), models, rep, len(p.Agents)} {
		if f > maxRuns || n*f > maxRuns { // n <= maxRuns and f <= maxRuns: no overflow
			return fmt.Errorf("bench: %d tasks × %d models × %d repeats × %d agents: more than %d runs", len(p.Tasks), models, rep, len(p.Agents), maxRuns)
		}
		n *= f
	}
	return nil
}

// RunKey identifies a run of a plan across shards and machines. A key
// of which only the index is known (a run a merge of reports alone lists
// missing: no input names it) has no Agent and Repeat 0, both left out
// of its JSON, as its other unknown fields are.
type RunKey struct {
	Index  int    `json:"index"`
	Task   string `json:"task,omitempty"`
	Agent  string `json:"agent,omitempty"`
	Model  string `json:"model,omitempty"`
	Repeat int    `json:"repeat,omitempty"`
}

func (k RunKey) String() string {
	if k.Agent == "" { // only its index is known
		return fmt.Sprintf("#%d", k.Index+1)
	}
	s := fmt.Sprintf("#%d %s", k.Index+1, k.Agent)
	if k.Model != "" {
		s += " " + k.Model
	}
	if k.Task != "" {
		s += " [" + k.Task + "]"
	}
	return s + fmt.Sprintf(" repeat %d", k.Repeat)
}

// Key is the run's key.
func (r RunReport) Key() RunKey {
	return RunKey{Index: r.Index, Task: r.Task, Agent: r.Agent, Model: r.Model, Repeat: r.Repeat}
}

// Key is the spec's key.
func (s Spec) Key() RunKey {
	return RunKey{Index: s.Index, Task: s.Task.Name, Agent: s.Agent, Model: s.Model, Repeat: s.Repeat}
}

// ID returns the plan's id: a hash of what defines it, the expanded runs
// in their order, each with its task's name, prompt and check (the plan's
// check for tasks without one), agent (aliases resolved), model and
// repeat, the isolation engine they run in, the scripted model's
// scenario they run against (Plan.Mock), and the agents' permission mode
// and turn limit (Plan.Permissions, MaxTurns). The starting trees' paths
// and contents are not part of it (the same plan runs from different
// checkouts), nor are budgets, binaries or parallelism. An unknown agent
// keeps its name as given.
func (p Plan) ID() string {
	q := p
	q.Agents = make([]string, len(p.Agents))
	for i, a := range p.Agents {
		q.Agents[i] = a
		if ad, err := harness.Adapter(a); err == nil {
			q.Agents[i] = ad.Name()
		}
	}
	q.Tasks = make([]Task, len(p.Tasks))
	for i, t := range p.Tasks {
		if t.Check == "" && t.Harbor == nil {
			t.Check = p.Check
		}
		q.Tasks[i] = t
	}
	return specsID(q.Specs(), p.conditions())
}

// conditions are what a plan asks of every one of its runs beside its
// specs, all part of its id: the isolation engine, the scripted model's
// scenario ("" for none), the agents' permission mode and turn limit (0
// for none). The zero value is not a plan's: use Plan.conditions.
type conditions struct {
	engine, mock, permissions string
	maxTurns                  int
}

// conditions are p's, defaults filled in (isolate.None, harness.FullAccess).
func (p Plan) conditions() conditions {
	return conditions{engine: cmp.Or(p.Isolate, isolate.None), mock: p.Mock,
		permissions: cmp.Or(p.Permissions, harness.FullAccess), maxTurns: p.MaxTurns}
}

// agentLimitsValid reports whether c's permission mode and turn limit
// are ones bench runs with: what merge and compare hold a report to.
func (c conditions) agentLimitsValid() bool {
	return (c.permissions == harness.FullAccess || c.permissions == harness.ReadOnly) && c.maxTurns >= 0
}

// specsID hashes the expanded plan run under conditions c (see Plan.ID).
func specsID(specs []Spec, c conditions) string {
	type row struct {
		Task, Prompt, Check, Agent, Model string
		Repeat                            int
		// Harbor is a Harbor task's digest: its verifier and environment
		// are part of what is asked (omitted otherwise: the ids of other
		// plans stay as they were).
		Harbor string `json:",omitempty"`
	}
	rows := make([]row, len(specs))
	for i, s := range specs {
		rows[i] = row{Task: s.Task.Name, Prompt: s.Task.Prompt, Check: s.Task.Check, Agent: s.Agent, Model: s.Model, Repeat: s.Repeat}
		if s.Task.Harbor != nil {
			rows[i].Harbor = s.Task.Harbor.Digest
		}
	}
	engine, perm := c.engine, c.permissions
	if engine == isolate.None {
		engine = "" // the ids of plans run on the host stay as they were
	}
	if perm == harness.FullAccess {
		perm = "" // likewise of plans run with full access
	}
	// Omitted when "" or 0: the ids of plans on real models, without a
	// turn limit, stay as they were.
	data, _ := json.Marshal(struct {
		V           int
		Isolate     string `json:",omitempty"`
		Mock        string `json:",omitempty"`
		Permissions string `json:",omitempty"`
		MaxTurns    int    `json:",omitempty"`
		Runs        []row
	}{1, engine, c.mock, perm, c.maxTurns, rows})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}
