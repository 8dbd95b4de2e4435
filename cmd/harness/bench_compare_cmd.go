package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/ansi"
)

// benchCompareCmd is the regression gate: NEW against BASE, per agent ×
// model and per task, with intervals. It uses bench's --report (table,
// markdown or json), -o and --seed, and refuses bench's other flags.
//
// Exit status: 0 when NEW is not shown worse, 1 when it is (pass or
// success rate lower with the interval below zero and Fisher's exact
// p < 0.05, or median cost or wall time grown beyond the limit with the
// interval above zero), 2 when the two were not run on comparable plans,
// cannot be read, or have nothing to compare (no run that ran on both
// sides).
type benchCompareCmd struct {
	Base          string        `arg:"" help:"The base: a JSON report, a results directory or a stored report id."`
	New           string        `arg:"" help:"The new one, likewise."`
	MaxCostGrowth string        `help:"Growth of the median cost that fails the gate, e.g. 20% or 0.2." default:"20%"`
	MaxTimeGrowth string        `help:"Growth of the median wall time that fails the gate." default:"20%"`
	TimeNoise     time.Duration `help:"A rise of the median wall time up to this is measurement noise, never a regression (0: none)." default:"1s"`
}

func (c *benchCompareCmd) Run(e *env, parent *benchCmd, ctx *kong.Context) error {
	if err := refuseRunFlags(ctx, "compare", "report", "output", "seed"); err != nil {
		return err
	}
	cost, err := growthFlag("--max-cost-growth", c.MaxCostGrowth)
	if err != nil {
		return err
	}
	wall, err := growthFlag("--max-time-growth", c.MaxTimeGrowth)
	if err != nil {
		return err
	}
	if parent.Report == "csv" {
		return usageErrorf("bench: compare: --report csv: want table, markdown or json")
	}
	base, err := loadReport(c.Base)
	if err != nil {
		return withStatus(exitUsage, err)
	}
	next, err := loadReport(c.New)
	if err != nil {
		return withStatus(exitUsage, err)
	}
	if c.TimeNoise < 0 {
		return usageErrorf("bench: compare: --time-noise %v: want a duration of 0 or more", c.TimeNoise)
	}
	noise := c.TimeNoise
	if noise == 0 {
		noise = -1 // Diff's "none"; its 0 is the default
	}
	d, err := bench.Diff(base, next, bench.DiffOptions{MaxCostGrowth: cost, MaxTimeGrowth: wall, TimeNoise: noise, Seed: parent.Seed})
	if err != nil { // bench.ErrNotComparable or ErrNothingToCompare
		return withStatus(exitUsage, err)
	}
	out, closeOut, err := parent.reportWriter(e)
	if err != nil {
		return err
	}
	defer closeOut()
	var b strings.Builder
	if err := d.Write(&b, parent.Report); err != nil {
		return withStatus(exitUsage, err)
	}
	text := b.String()
	if parent.Report != "json" {
		text = ansi.TermSafe(text)
	}
	if _, err := fmt.Fprint(out, text); err != nil {
		return withStatus(exitAgentFailed, fmt.Errorf("bench: compare: writing: %w", err))
	}
	if d.Regressed {
		var worse []string
		for _, r := range d.Rows {
			name := strings.TrimSpace(r.Agent + " " + r.Model)
			if r.Task != "" {
				name += " [" + r.Task + "]"
			}
			if r.Verdict == "worse" {
				worse = append(worse, name)
			}
		}
		return withStatus(exitAgentFailed, fmt.Errorf("bench: compare: NEW is worse (%s); the table says where", strings.Join(worse, ", ")))
	}
	return nil
}

// growthFlag parses 20% or 0.2.
func growthFlag(name, v string) (float64, error) {
	s := strings.TrimSpace(v)
	div := 1.0
	if t, ok := strings.CutSuffix(s, "%"); ok {
		s, div = t, 100
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f >= 0 && !math.IsInf(f, 1)) { // NaN and +Inf would gate nothing
		return 0, usageErrorf("bench: compare: %s %q: want a growth like 20%% or 0.2", name, v)
	}
	return f / div, nil
}
