package bench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// ErrNotComparable is returned by Diff when two reports were not run on
// comparable plans.
var ErrNotComparable = errors.New("bench: compare: not comparable")

// DiffOptions are the thresholds of Diff.
type DiffOptions struct {
	// MaxCostGrowth and MaxTimeGrowth are the growth of a median (0.2 is
	// 20 %) beyond which a rise counts as a regression, when its
	// interval also excludes zero. Negative means the default, 0.2.
	MaxCostGrowth float64
	MaxTimeGrowth float64
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
	// BaseNotRun and NewNotRun count the runs that never ran
	// (RunReport.NotRun), in no rate.
	BaseNotRun int `json:"base_not_run,omitempty"`
	NewNotRun  int `json:"new_not_run,omitempty"`

	// Growths are new/base − 1 of the medians, with bootstrap intervals;
	// nil when either side has no value (or the base median is 0).
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
}

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
// that is what is being compared); otherwise the error wraps
// ErrNotComparable and names a cell one has and the other lacks.
//
// A row is worse when the rate's interval is wholly below zero, or when
// the median wall time or cost grew by more than the allowed growth and
// the growth's interval is wholly above zero; better when the rate's
// interval is wholly above zero.
func Diff(base, next *Report, o DiffOptions) (*DiffReport, error) {
	if o.MaxCostGrowth < 0 {
		o.MaxCostGrowth = 0.2
	}
	if o.MaxTimeGrowth < 0 {
		o.MaxTimeGrowth = 0.2
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	bc, nc := cells(base.Runs), cells(next.Runs)
	if err := sameCells(bc, nc); err != nil {
		return nil, err
	}
	d := &DiffReport{BasePlan: base.PlanID, NewPlan: next.PlanID}
	for _, byTask := range []bool{false, true} {
		bg, ng := group(base.Runs, byTask), group(next.Runs, byTask)
		for _, k := range bg.order {
			if byTask && len(bc.tasks) < 2 {
				break // one task: its rows are the groups'
			}
			row := diffRow(k, bg.runs[k], ng.runs[k], o)
			d.Regressed = d.Regressed || row.Verdict == "worse"
			d.Rows = append(d.Rows, row)
		}
	}
	return d, nil
}

type cellKey struct{ agent, model, task string }

type cellSet struct {
	order []cellKey
	tasks map[string]bool
}

func cells(runs []RunReport) cellSet {
	s := cellSet{tasks: map[string]bool{}}
	for _, r := range runs {
		k := cellKey{r.Agent, r.Model, r.Task}
		if !slices.Contains(s.order, k) {
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
		if !slices.Contains(b.order, k) {
			return fmt.Errorf("%w: BASE has %s, NEW does not (different plans)", ErrNotComparable, name(k))
		}
	}
	for _, k := range b.order {
		if !slices.Contains(a.order, k) {
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
	row.BaseNotRun, row.NewNotRun = bg.NotRun, ng.NotRun
	// Runs that never ran are in no rate; that more of NEW's did not run
	// (in proportion) is still worse: the gate must not pass a NEW whose
	// agent could not even start.
	if ng.NotRun*(bg.Runs+bg.NotRun) > bg.NotRun*(ng.Runs+ng.NotRun) {
		row.Verdict = "worse"
		row.Why = append(row.Why, fmt.Sprintf("runs not run %d/%d → %d/%d", bg.NotRun, bg.Runs+bg.NotRun, ng.NotRun, ng.Runs+ng.NotRun))
	}
	switch {
	case row.BaseN == 0 || row.NewN == 0:
	case row.RateDiffCIHi < 0:
		row.Verdict = "worse"
		row.Why = append(row.Why, fmt.Sprintf("%s rate %s → %s", row.Metric, pct(ratio(row.BaseK, row.BaseN)), pct(ratio(row.NewK, row.NewN))))
	case row.RateDiffCILow > 0 && row.Verdict == "":
		row.Verdict = "better"
		row.Why = append(row.Why, fmt.Sprintf("%s rate %s → %s", row.Metric, pct(ratio(row.BaseK, row.BaseN)), pct(ratio(row.NewK, row.NewN))))
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
	growth := func(what string, b, n []float64, limit float64) (g, lo, hi *float64) {
		gv, l, h, ok := BootstrapGrowth(b, n, seed)
		if !ok {
			return nil, nil, nil
		}
		if gv > limit && l > 0 {
			row.Verdict = "worse"
			row.Why = append(row.Why, fmt.Sprintf("median %s +%.0f%% (interval %+.0f%%…%+.0f%%, limit %.0f%%)", what, gv*100, l*100, h*100, limit*100))
		}
		return &gv, &l, &h
	}
	row.WallGrowth, row.WallGrowthCILow, row.WallGrowthCIHigh = growth("wall time", walls(base), walls(next), o.MaxTimeGrowth)
	row.CostGrowth, row.CostGrowthCILow, row.CostGrowthCIHigh = growth("cost", costs(base), costs(next), o.MaxCostGrowth)
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
// median is not positive.
func BootstrapGrowth(base, next []float64, rng interface{ IntN(int) int }) (growth, low, high float64, ok bool) {
	if len(base) == 0 || len(next) == 0 {
		return 0, 0, 0, false
	}
	bm, nm := Percentile(base, 50), Percentile(next, 50)
	if bm <= 0 {
		return 0, 0, 0, false
	}
	growth = nm/bm - 1
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
		if b <= 0 {
			continue
		}
		gs = append(gs, nb[(len(nb)+1)/2-1]/b-1)
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
		rows = append(rows, []string{r.Agent, dash(r.Model), task,
			fmt.Sprintf("%s %d/%d → %d/%d", r.Metric, r.BaseK, r.BaseN, r.NewK, r.NewN),
			fmt.Sprintf("%+.0f%% [%+.0f%%, %+.0f%%]", r.RateDiff*100, r.RateDiffCILow*100, r.RateDiffCIHi*100),
			growthCell(r.WallGrowth, r.WallGrowthCILow, r.WallGrowthCIHigh),
			growthCell(r.CostGrowth, r.CostGrowthCILow, r.CostGrowthCIHigh),
			verdictCell(r)})
	}
	legend := "Δ RATE is NEW − BASE with Newcombe's 95% interval; medians' growth has a bootstrap 95% interval; a row is worse only when its interval excludes zero."
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
	if g == nil {
		return "-"
	}
	return fmt.Sprintf("%+.0f%% [%+.0f%%, %+.0f%%]", *g*100, *lo*100, *hi*100)
}

func verdictCell(r DiffRow) string {
	if r.Verdict == "" {
		return "no difference shown"
	}
	return r.Verdict + ": " + strings.Join(r.Why, "; ")
}
