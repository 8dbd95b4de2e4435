package bench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// ErrNotComparable is returned by Diff when two reports were not run on
// comparable plans.
var ErrNotComparable = errors.New("bench: compare: not comparable")

// ErrNothingToCompare is returned by Diff when the two reports hold the
// same cells but no agent × model has a run that ran on both sides (all
// skipped, cut short or not run), and no side is worse for it: no figure of one
// can be set against the other's.
var ErrNothingToCompare = errors.New("bench: compare: nothing to compare")

// MinMedianRuns is how many runs each side needs before the growth of a
// median gets an interval and may give a verdict. Below 6, no 95 %
// interval of a median exists at all without assuming a distribution
// (all n runs fall on one side of the true median with probability
// 2/2^n, 6.25 % at n = 5), and the bootstrap's interval collapses: two
// runs of 2 ms against two of 3 ms gave +50 % [+50 %, +50 %].
const MinMedianRuns = 6

// RateAlpha is the level of Fisher's exact test that a rate's difference
// must pass, besides its interval excluding zero, to make a row worse or
// better. Newcombe's interval alone is anti-conservative at small n: it
// excludes zero at 2/2 → 0/2, whose Fisher p is 1/3. Fisher's test keeps
// the false-alarm rate at most 5 % at any n; the interval must agree so
// that no verdict contradicts the figure shown (as for A vs B, whose
// winner needs its interval and McNemar's p).
const RateAlpha = 0.05

// DefaultTimeNoise is the change of a median wall time within which it
// is measurement noise, whatever its ratio: process start, scheduling
// and the millisecond clock, which make a 2 ms run 3 ms (+50 %).
const DefaultTimeNoise = time.Second

// DiffOptions are the thresholds of Diff.
type DiffOptions struct {
	// MaxCostGrowth and MaxTimeGrowth are the growth of a median (0.2 is
	// 20 %) beyond which a rise counts as a regression, when its
	// interval also excludes zero. Negative means the default, 0.2.
	MaxCostGrowth float64
	MaxTimeGrowth float64
	// TimeNoise is the rise of the median wall time that is never a
	// regression, however large its ratio; 0 means DefaultTimeNoise,
	// negative none.
	TimeNoise time.Duration
	// Seed seeds the bootstrap; 0 means DefaultSeed.
	Seed uint64
}

// DiffRow compares one agent × model (Task "") or agent × model × task
// between two reports. Rates are pass rates when both sides have check
// verdicts, else success rates; intervals are 95 %.
type DiffRow struct {
	Agent string `json:"agent"`
	Model string `json:"model,omitempty"`
	Task  string `json:"task,omitempty"`

	Metric        string  `json:"metric"` // pass or success
	BaseK         int     `json:"base_k"`
	BaseN         int     `json:"base_n"`
	NewK          int     `json:"new_k"`
	NewN          int     `json:"new_n"`
	RateDiff      float64 `json:"rate_diff"` // new − base
	RateDiffCILow float64 `json:"rate_diff_ci_low"`
	RateDiffCIHi  float64 `json:"rate_diff_ci_high"`
	// RatePValue is Fisher's exact two-sided p of the two rates (1 when a
	// side has no run).
	RatePValue float64 `json:"rate_p_value"`
	// BaseNotRun and NewNotRun count the runs that never ran
	// (RunReport.NotRun), in no rate.
	BaseNotRun int `json:"base_not_run,omitempty"`
	NewNotRun  int `json:"new_not_run,omitempty"`

	// Growths are new/base − 1 of the medians, with bootstrap intervals;
	// nil when either side has no value (or the base median is 0). The
	// intervals are nil too when a side has fewer than MinMedianRuns
	// values: too few runs to tell.
	WallGrowth       *float64 `json:"wall_growth,omitempty"`
	WallGrowthCILow  *float64 `json:"wall_growth_ci_low,omitempty"`
	WallGrowthCIHigh *float64 `json:"wall_growth_ci_high,omitempty"`
	CostGrowth       *float64 `json:"cost_growth,omitempty"`
	CostGrowthCILow  *float64 `json:"cost_growth_ci_low,omitempty"`
	CostGrowthCIHigh *float64 `json:"cost_growth_ci_high,omitempty"`

	// Verdict is "worse", "better" or "" (no difference shown); Why says
	// what made it so.
	Verdict string   `json:"verdict,omitempty"`
	Why     []string `json:"why,omitempty"`
	// Undecided says which figures gave no verdict and why: no run ran
	// on a side (nothing to compare; the rate's interval is then
	// [-1, 1]), too few runs for a rate's difference (its interval
	// excludes zero, Fisher's test does not reject) or for a median's
	// growth, or a wall time's rise within measurement noise.
	Undecided []string `json:"undecided,omitempty"`
}

// compared is whether the row's rates had runs on both sides.
func (r DiffRow) compared() bool { return r.BaseN > 0 && r.NewN > 0 }

// DiffReport is the outcome of Diff.
type DiffReport struct {
	BasePlan  string    `json:"base_plan_id,omitempty"`
	NewPlan   string    `json:"new_plan_id,omitempty"`
	Rows      []DiffRow `json:"rows"`
	Regressed bool      `json:"regressed"` // some row is worse
}

// Diff compares NEW against BASE per agent × model and per agent × model
// × task. Two reports are comparable when they hold the same agent ×
// model × task cells (the prompts or the agents' versions may differ:
// that is what is being compared) and ran under the same isolation
// engine, against the same model source, with the same permission mode
// and turn limit (a report of an earlier harness, which did not record
// them, ran under none, with full access and no limit); otherwise the error
// wraps ErrNotComparable and says what differs. A report bench cannot
// have written (checkInput: more runs than its plan, an index twice or
// outside its plan or shard) is refused first, naming its side.
//
// A row is worse when the rate's interval is wholly below zero and
// Fisher's exact test rejects equal rates (p < RateAlpha), or when
// the median wall time or cost grew by more than the allowed growth and
// the growth's interval is wholly above zero (with at least
// MinMedianRuns values a side, and for wall time a rise beyond
// TimeNoise); better when the rate's interval is wholly above zero and
// Fisher's test rejects.
// When no row has runs that ran on both sides and none is worse for
// it, the error wraps ErrNothingToCompare.
func Diff(base, next *Report, o DiffOptions) (*DiffReport, error) {
	if o.MaxCostGrowth < 0 {
		o.MaxCostGrowth = 0.2
	}
	if o.MaxTimeGrowth < 0 {
		o.MaxTimeGrowth = 0.2
	}
	if o.TimeNoise == 0 {
		o.TimeNoise = DefaultTimeNoise
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if err := checkInput("BASE", base); err != nil {
		return nil, err
	}
	if err := checkInput("NEW", next); err != nil {
		return nil, err
	}
	// The same runs under another engine are another plan (the plan id
	// hashes it, and merge refuses to mix them): a sandbox changes what
	// an agent can reach and how fast it starts, so the difference would
	// be the engine's, not NEW's.
	if be, ne := base.conditions().engine, next.conditions().engine; be != ne {
		return nil, fmt.Errorf("%w: BASE ran under --isolate %s, NEW under --isolate %s: the runs of two engines are not the same condition",
			ErrNotComparable, be, ne)
	}
	if base.Mock != next.Mock {
		// A scripted model's pass rate, cost and time say nothing of the
		// agents' own models, nor of another scenario's.
		return nil, fmt.Errorf("%w: BASE ran against %s, NEW against %s", ErrNotComparable, mockName(base.Mock), mockName(next.Mock))
	}
	// A read-only agent, or one cut off after 5 turns, is not failing
	// where a full-access one passes: that is another condition, as the
	// plan id says, not a regression.
	if bc, nc := base.conditions(), next.conditions(); bc.permissions != nc.permissions || bc.maxTurns != nc.maxTurns {
		return nil, fmt.Errorf("%w: BASE ran %s, NEW %s: runs that may do different things are not the same condition",
			ErrNotComparable, agentLimits(bc), agentLimits(nc))
	}
	bc, nc := cells(base.Runs), cells(next.Runs)
	if err := sameCells(bc, nc); err != nil {
		return nil, err
	}
	d := &DiffReport{BasePlan: base.PlanID, NewPlan: next.PlanID}
	compared := false
	for _, byTask := range []bool{false, true} {
		bg, ng := group(base.Runs, byTask), group(next.Runs, byTask)
		for _, k := range bg.order {
			if byTask && len(bc.tasks) < 2 {
				break // one task: its rows are the groups'
			}
			row := diffRow(k, bg.runs[k], ng.runs[k], o)
			d.Regressed = d.Regressed || row.Verdict == "worse"
			compared = compared || row.compared()
			d.Rows = append(d.Rows, row)
		}
	}
	if !compared && !d.Regressed {
		return nil, fmt.Errorf("%w: no agent × model has a run that ran on both sides (BASE: %d of %d runs ran, NEW: %d of %d; the others were skipped, cut short or not run)",
			ErrNothingToCompare, ranOf(base.Runs), len(base.Runs), ranOf(next.Runs), len(next.Runs))
	}
	return d, nil
}

// ReadCompareInput reads the JSON report at path as merge reads a report
// input (readMergeReport): as a stream, decoding at most its planned
// runs (else MaxRuns) and skipping its groups and comparisons, so a file
// of any size costs no more than its plan. A report holding more runs
// than that is refused as merge refuses it. The Report returned has what
// Diff reads (plan, conditions, shard, shape, seed and runs), not the
// aggregates, which Diff recomputes.
func ReadCompareInput(path string) (*Report, error) {
	r, err := readMergeReport(path)
	if err != nil {
		return nil, fmt.Errorf("bench: compare: %w", err)
	}
	return &Report{PlanID: r.PlanID, Planned: r.Planned, Isolate: r.Isolate, Mock: r.Mock,
		Permissions: r.Permissions, MaxTurns: r.MaxTurns, Shard: r.Shard, Shape: r.Shape,
		Seed: r.Seed, Started: r.Started, WallMS: r.WallMS, Runs: r.Runs}, nil
}

// conditions are what r's plan asked of its runs, as merge reads them:
// a report of an earlier harness, which did not record them, ran under
// none, with full access and no turn limit.
func (r *Report) conditions() conditions {
	return Plan{Isolate: r.Isolate, Mock: r.Mock, Permissions: r.Permissions, MaxTurns: r.MaxTurns}.conditions()
}

// checkInput holds the report of one side to what merge holds each of
// its inputs to: a report bench writes. Compare counts every run it is
// given, so a run copied ten times would count ten times in a rate and
// flip a verdict; merge refuses such a report, and so does compare.
func checkInput(side string, r *Report) error {
	c := r.conditions()
	if !c.agentLimitsValid() {
		return fmt.Errorf("bench: compare: %s: permissions %q, max turns %d: not a report bench writes", side, c.permissions, c.maxTurns)
	}
	return checkRuns("compare", side, r.Planned, r.Shard, r.Shape, r.Runs)
}

// checkRuns refuses the runs of a report (named from, for bench's op)
// that bench cannot have written: a run with no agent or a negative
// index, an index held twice, more than maxGroups agent × model groups,
// and, when the report gives its plan's size (planned; every report
// bench wrote since shards exist does), more runs than the plan has or
// a run outside the plan or its shard. It is merge's check of a report
// input (merger.file), which compare shares.
func checkRuns(op, from string, planned int, shard *Shard, shape *Shape, runs []RunReport) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("bench: %s: %s: %s", op, from, fmt.Sprintf(format, a...))
	}
	if planned < 0 || planned > maxRuns {
		return bad("a plan of %d runs: not a plan bench makes (1 to %d)", planned, maxRuns)
	}
	if planned > 0 && len(runs) > planned {
		return bad("%d runs of a plan of %d: more than its plan has", len(runs), planned)
	}
	// The runs of its shard: whole groups of the plan's shape, or, in a
	// report of an earlier harness (no shape), a block of the plan order.
	sh, sp := Shard{}, Shape{Tasks: planned, Models: 1, Repeats: 1, Agents: 1}
	if shard != nil && planned > 0 {
		if sh = *shard; !sh.valid() {
			return bad("shard %d/%d of %d runs: not a shard bench makes", sh.Index, sh.Count, planned)
		}
		if shape != nil {
			if !shape.valid(planned) {
				return bad("shape %d tasks × %d models × %d repeats × %d agents: not the %d runs of its plan",
					shape.Tasks, shape.Models, shape.Repeats, shape.Agents, planned)
			}
			sp = *shape
		}
	}
	mine := make(map[int]bool, len(runs))
	groups := map[[2]string]bool{}
	for _, rr := range runs {
		switch {
		case rr.Index < 0:
			return bad("a run has index %d: not a report bench writes (indexes start at 0)", rr.Index)
		case planned > 0 && rr.Index >= planned:
			return bad("run #%d is not in its plan (runs #1 to #%d)", rr.Index+1, planned)
		case planned > 0 && !sh.has(sp, rr.Index):
			return bad("run #%d is not in its shard %s", rr.Index+1, sh)
		case mine[rr.Index]:
			return bad("holds run #%d twice: not a report bench writes", rr.Index+1)
		case rr.Agent == "":
			return bad("run #%d has no agent: not a report bench writes", rr.Index+1)
		}
		if err := rr.figureError(); err != nil {
			return bad("%v", err)
		}
		mine[rr.Index] = true
		if groups[[2]string{rr.Agent, rr.Model}] = true; len(groups) > maxGroups {
			return bad("more than %d agent × model groups: not a plan bench makes", maxGroups)
		}
	}
	return nil
}

// mockName names a report's Mock for an error.
func mockName(mock string) string {
	if mock == "" {
		return "the agents' own models"
	}
	return fmt.Sprintf("the scripted model (--mock %s)", mock)
}

func ranOf(runs []RunReport) (n int) {
	for _, r := range runs {
		if r.ran() {
			n++
		}
	}
	return n
}

type cellKey struct{ agent, model, task string }

// cellSet is the cells of a report's runs, in the order they first
// come (an error names the first one missing), and as a set, so that
// finding and matching the cells of 100 000 runs costs no more than
// reading them.
type cellSet struct {
	order []cellKey
	has   map[cellKey]bool
	tasks map[string]bool
}

func cells(runs []RunReport) cellSet {
	s := cellSet{has: map[cellKey]bool{}, tasks: map[string]bool{}}
	for _, r := range runs {
		k := cellKey{r.Agent, r.Model, r.Task}
		if !s.has[k] {
			s.has[k] = true
			s.order = append(s.order, k)
		}
		s.tasks[r.Task] = true
	}
	return s
}

func sameCells(a, b cellSet) error {
	if len(a.order) == 0 || len(b.order) == 0 {
		return fmt.Errorf("%w: a report holds no run", ErrNotComparable)
	}
	name := func(k cellKey) string {
		s := k.agent
		if k.model != "" {
			s += " " + k.model
		}
		if k.task != "" {
			s += " [" + k.task + "]"
		}
		return s
	}
	for _, k := range a.order {
		if !b.has[k] {
			return fmt.Errorf("%w: BASE has %s, NEW does not (different plans)", ErrNotComparable, name(k))
		}
	}
	for _, k := range b.order {
		if !a.has[k] {
			return fmt.Errorf("%w: NEW has %s, BASE does not (different plans)", ErrNotComparable, name(k))
		}
	}
	return nil
}

type grouped struct {
	order []cellKey
	runs  map[cellKey][]RunReport
}

func group(runs []RunReport, byTask bool) grouped {
	g := grouped{runs: map[cellKey][]RunReport{}}
	for _, r := range runs {
		k := cellKey{r.Agent, r.Model, ""}
		if byTask {
			k.task = r.Task
		}
		if _, ok := g.runs[k]; !ok {
			g.order = append(g.order, k)
			g.runs[k] = nil // known, even when its runs are all skipped
		}
		if r.Status != StatusSkipped {
			g.runs[k] = append(g.runs[k], r)
		}
	}
	return g
}

func diffRow(k cellKey, base, next []RunReport, o DiffOptions) DiffRow {
	row := DiffRow{Agent: k.agent, Model: k.model, Task: k.task}
	bg, ng := aggregate(k.agent, k.model, base), aggregate(k.agent, k.model, next)
	row.Metric, row.BaseK, row.BaseN, row.NewK, row.NewN = "pass", bg.Passed, bg.Checked, ng.Passed, ng.Checked
	if bg.Checked == 0 || ng.Checked == 0 {
		row.Metric, row.BaseK, row.BaseN, row.NewK, row.NewN = "success", bg.Succeeded, bg.Runs, ng.Succeeded, ng.Runs
	}
	row.RateDiff, row.RateDiffCILow, row.RateDiffCIHi = UnpairedDiff(row.NewK, row.NewN, row.BaseK, row.BaseN)
	row.RatePValue = FisherExact(row.NewK, row.NewN, row.BaseK, row.BaseN)
	rates := fmt.Sprintf("%s → %s", pct(ratio(row.BaseK, row.BaseN)), pct(ratio(row.NewK, row.NewN)))
	row.BaseNotRun, row.NewNotRun = bg.NotRun, ng.NotRun
	// Runs that never ran are in no rate; that more of NEW's did not run
	// (in proportion) is still worse: the gate must not pass a NEW whose
	// agent could not even start.
	if ng.NotRun*(bg.Runs+bg.NotRun) > bg.NotRun*(ng.Runs+ng.NotRun) {
		row.Verdict = "worse"
		row.Why = append(row.Why, fmt.Sprintf("runs not run %d/%d → %d/%d", bg.NotRun, bg.Runs+bg.NotRun, ng.NotRun, ng.Runs+ng.NotRun))
	}
	switch {
	case !row.compared():
		side := "BASE"
		if row.NewN == 0 {
			side = "NEW"
			if row.BaseN == 0 {
				side = "BASE nor NEW"
			}
		}
		row.Undecided = append(row.Undecided, "nothing to compare: no run of "+side+" ran")
	case row.RateDiffCIHi >= 0 && row.RateDiffCILow <= 0:
		// The interval holds zero: "no difference shown" says it.
	case row.RatePValue >= RateAlpha:
		row.Undecided = append(row.Undecided, fmt.Sprintf("%s rate: too few runs to tell (%s, Fisher's exact p = %.3g; below %g needed)",
			row.Metric, rates, row.RatePValue, RateAlpha))
	case row.RateDiffCIHi < 0:
		row.Verdict = "worse"
		row.Why = append(row.Why, fmt.Sprintf("%s rate %s", row.Metric, rates))
	case row.Verdict == "":
		row.Verdict = "better"
		row.Why = append(row.Why, fmt.Sprintf("%s rate %s", row.Metric, rates))
	}
	seed := rngFor(o.Seed, k.agent, k.model, k.task, "diff")
	// A run whose agent never ran has no time or cost of the agent's.
	walls := func(rs []RunReport) (xs []float64) {
		for _, r := range rs {
			if r.ran() {
				xs = append(xs, float64(r.WallMS))
			}
		}
		return xs
	}
	costs := func(rs []RunReport) (xs []float64) {
		for _, r := range rs {
			if r.ran() && r.CostUSD != nil {
				xs = append(xs, *r.CostUSD)
			}
		}
		return xs
	}
	// noise is the rise of the median (in its unit) that is no regression.
	growth := func(what string, b, n []float64, limit, noise float64, unit time.Duration) (g, lo, hi *float64) {
		gv, l, h, ok := BootstrapGrowth(b, n, seed)
		if !ok {
			return nil, nil, nil
		}
		if len(b) < MinMedianRuns || len(n) < MinMedianRuns {
			row.Undecided = append(row.Undecided, fmt.Sprintf("%s: too few runs to tell (%d and %d; %d a side needed)", what, len(b), len(n), MinMedianRuns))
			return &gv, nil, nil
		}
		if gv > limit && l > 0 {
			if rise := Percentile(n, 50) - Percentile(b, 50); rise > noise {
				row.Verdict = "worse"
				row.Why = append(row.Why, fmt.Sprintf("median %s +%.0f%% (interval %+.0f%%…%+.0f%%, limit %.0f%%)", what, gv*100, l*100, h*100, limit*100))
			} else {
				row.Undecided = append(row.Undecided, fmt.Sprintf("%s: +%.0f%% is +%v, within measurement noise (%v)",
					what, gv*100, time.Duration(rise*float64(unit)), time.Duration(noise*float64(unit))))
			}
		}
		return &gv, &l, &h
	}
	noise := max(float64(o.TimeNoise)/float64(time.Millisecond), 0) // walls are in ms
	row.WallGrowth, row.WallGrowthCILow, row.WallGrowthCIHigh = growth("wall time", walls(base), walls(next), o.MaxTimeGrowth, noise, time.Millisecond)
	row.CostGrowth, row.CostGrowthCILow, row.CostGrowthCIHigh = growth("cost", costs(base), costs(next), o.MaxCostGrowth, 0, 0)
	return row
}

func ratio(k, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(k) / float64(n)
}

// UnpairedDiff returns k1/n1 − k2/n2 with Newcombe's 95 % interval for
// two independent proportions (his method 10, from the two Wilson
// intervals). An empty side gives 0 in [-1, 1].
func UnpairedDiff(k1, n1, k2, n2 int) (diff, low, high float64) {
	if n1 <= 0 || n2 <= 0 {
		return 0, -1, 1
	}
	p1, p2 := float64(k1)/float64(n1), float64(k2)/float64(n2)
	l1, u1 := Wilson(k1, n1)
	l2, u2 := Wilson(k2, n2)
	diff = p1 - p2
	low = diff - math.Sqrt(sq(p1-l1)+sq(u2-p2))
	high = diff + math.Sqrt(sq(u1-p1)+sq(p2-l2))
	return diff, max(min(low, diff), -1), min(max(high, diff), 1)
}

// BootstrapGrowth returns the growth of the median from base to next
// (next/base − 1) with a 95 % percentile-bootstrap interval, resampling
// both sides independently. ok is false when a side is empty or the base
// median is not positive, or so small that the growth is past a float64
// (+Inf, which no JSON holds).
func BootstrapGrowth(base, next []float64, rng interface{ IntN(int) int }) (growth, low, high float64, ok bool) {
	if len(base) == 0 || len(next) == 0 {
		return 0, 0, 0, false
	}
	bm, nm := Percentile(base, 50), Percentile(next, 50)
	growth = nm/bm - 1
	if bm <= 0 || math.IsInf(growth, 0) { // a median too small to divide by
		return 0, 0, 0, false
	}
	gs := make([]float64, 0, bootstrapResamples)
	bb, nb := make([]float64, len(base)), make([]float64, len(next))
	for range bootstrapResamples {
		for j := range bb {
			bb[j] = base[rng.IntN(len(base))]
		}
		for j := range nb {
			nb[j] = next[rng.IntN(len(next))]
		}
		slices.Sort(bb)
		slices.Sort(nb)
		b := bb[(len(bb)+1)/2-1]
		if g := nb[(len(nb)+1)/2-1]/b - 1; b > 0 && !math.IsInf(g, 0) {
			gs = append(gs, g)
		}
	}
	if len(gs) == 0 {
		return growth, growth, growth, true
	}
	low, high = Percentile(gs, 2.5), Percentile(gs, 97.5)
	return growth, min(low, growth), max(high, growth), true
}

// Write renders the comparison: table or markdown (one line per row,
// with a legend), or json.
func (d *DiffReport) Write(w io.Writer, format string) error {
	switch format {
	case "json":
		return writeJSON(w, d)
	case "table", "markdown":
	default:
		return fmt.Errorf("bench: compare: unknown format %q (want table, markdown or json)", format)
	}
	header := []string{"AGENT", "MODEL", "TASK", "RATE BASE → NEW", "Δ RATE [95% CI]", "WALL P50 Δ [95% CI]", "COST P50 Δ [95% CI]", "VERDICT"}
	var rows [][]string
	for _, r := range d.Rows {
		task := r.Task
		if task == "" {
			task = "(all)"
		}
		rate := "-" // a side without runs: no interval to show
		if r.compared() {
			rate = fmt.Sprintf("%+.0f%% [%+.0f%%, %+.0f%%]", r.RateDiff*100, r.RateDiffCILow*100, r.RateDiffCIHi*100)
		}
		rows = append(rows, []string{r.Agent, dash(r.Model), task,
			fmt.Sprintf("%s %d/%d → %d/%d", r.Metric, r.BaseK, r.BaseN, r.NewK, r.NewN), rate,
			growthCell(r.WallGrowth, r.WallGrowthCILow, r.WallGrowthCIHigh),
			growthCell(r.CostGrowth, r.CostGrowthCILow, r.CostGrowthCIHigh),
			verdictCell(r)})
	}
	legend := fmt.Sprintf("Δ RATE is NEW − BASE with Newcombe's 95%% interval; medians' growth has a bootstrap 95%% interval, given %d runs a side; a row is worse only when its interval excludes zero (and a rate's difference has Fisher's exact p < %g, a wall time's rise is beyond measurement noise).", MinMedianRuns, RateAlpha)
	if err := writeTables(w, format == "markdown", table{header: header, rows: rows}); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, legend)
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func growthCell(g, lo, hi *float64) string {
	switch {
	case g == nil:
		return "-"
	case lo == nil:
		return fmt.Sprintf("%+.0f%% (too few runs)", *g*100)
	}
	return fmt.Sprintf("%+.0f%% [%+.0f%%, %+.0f%%]", *g*100, *lo*100, *hi*100)
}

func verdictCell(r DiffRow) string {
	var s string
	switch {
	case r.Verdict != "":
		s = r.Verdict + ": " + strings.Join(r.Why, "; ")
	case r.compared():
		s = "no difference shown"
	}
	return strings.Join(slices.DeleteFunc(append([]string{s}, r.Undecided...), func(x string) bool { return x == "" }), "; ")
}

// MaxRunCostUSD is the most a run may cost in a report or row that
// merge and compare read (figureError): far above any agent's run, and
// low enough that the costs of MaxRuns runs add up to a finite number,
// which JSON can hold.
const MaxRunCostUSD = 1e6

// figureError says which of the run's figures bench cannot have
// written: a negative wall time or token count, or a cost below 0 or
// over MaxRunCostUSD. Such figures from a crafted input summed to +Inf
// (no report's JSON could hold it) or gave negative medians.
func (r RunReport) figureError() error {
	t := r.Tokens
	switch {
	case r.WallMS < 0:
		return fmt.Errorf("run #%d: wall_ms %d: not a figure bench writes", r.Index+1, r.WallMS)
	case t.Input < 0 || t.Output < 0 || t.CacheRead < 0 || t.CacheWrite < 0 || t.Reasoning < 0:
		return fmt.Errorf("run #%d: a token count below 0: not a figure bench writes", r.Index+1)
	case r.CostUSD != nil && !(*r.CostUSD >= 0 && *r.CostUSD <= MaxRunCostUSD):
		return fmt.Errorf("run #%d: cost_usd %g: not a figure bench writes (0 to %g)", r.Index+1, *r.CostUSD, MaxRunCostUSD)
	}
	return nil
}
