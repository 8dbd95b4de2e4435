package main

import (
	"fmt"
)

// wrapOverhead compares `harness run` of the print-lines fake with the
// fake run alone, as interleaved pairs (the order alternating pair by
// pair, so that a machine getting busier or quieter weighs on both
// sides): the figures are the medians of the pairs' wall times, and the
// target is judged on the median of the pairs' own excesses over it.
func (b *bench) wrapOverhead() row {
	const figure, target = "wrap overhead", "≤ 1.05× + 15 ms"
	spec := fmt.Sprintf("print-lines %d", b.sz.WrapLines)
	b.log("wrap overhead: %d lines, %d pairs", b.sz.WrapLines, b.sz.WrapRuns)
	var with, alone, added, excess, fixed, fixedCPU []float64
	for i := range b.sz.WrapRuns + 2 { // the first two pairs warm the caches up
		h, f, err := b.pair(i%2 == 0, func() (usage, error) { return b.runUsage(b.harnessRun(), spec) },
			func() (usage, error) { return b.runUsage([]string{b.fake}, spec) })
		if err != nil {
			return failedRow(figure, target, err)
		}
		// The same pair with a fake that prints nothing: what a run costs
		// whatever its output (harness's start-up, the agent's spawn, the
		// end of the run), apart from what its lines cost.
		h0, f0, err := b.pair(i%2 == 0, func() (usage, error) { return b.runUsage(b.harnessRun(), "print-lines 0") },
			func() (usage, error) { return b.runUsage([]string{b.fake}, "print-lines 0") })
		if err != nil {
			return failedRow(figure, target, err)
		}
		if i < 2 {
			continue
		}
		hm, fm := h.Wall*1e3, f.Wall*1e3
		with, alone, added, excess = append(with, hm), append(alone, fm), append(added, hm-fm), append(excess, hm-1.05*fm)
		fixed, fixedCPU = append(fixed, (h0.Wall-f0.Wall)*1e3), append(fixedCPU, (h0.CPU-f0.CPU)*1e3)
	}
	h, f, e := median(with), median(alone), median(excess)
	b.notes = append(b.notes, fmt.Sprintf("wrap overhead: a run of a fake that prints nothing takes +%.1f ms (median of %d pairs; +%.1f ms of CPU): "+
		"what a run costs whatever its output (harness's start-up, see its row; the agent's spawn in its cgroup; the end of the run); the rest of the +%.1f ms is the %d lines'.",
		median(fixed), len(fixed), median(fixedCPU), median(added), b.sz.WrapLines))
	return row{Figure: fmt.Sprintf("wrap overhead (%d lines, harness run --no-log)", b.sz.WrapLines),
		Value:     fmt.Sprintf("%.1f ms", h),
		Reference: fmt.Sprintf("%.1f ms the fake alone", f),
		Ratio:     fmt.Sprintf("+%.1f ms (median of %d pairs)", median(added), len(added)),
		Target:    fmt.Sprintf("%s: excess %.1f ms", target, e),
		Met:       metStr(e <= 15)}
}

// pair runs a and b, a first when aFirst, and returns their usages in
// the order a, b.
func (b *bench) pair(aFirst bool, a, c func() (usage, error)) (ua, uc usage, err error) {
	first, second := a, c
	if !aFirst {
		first, second = c, a
	}
	u1, err := first()
	if err != nil {
		return usage{}, usage{}, err
	}
	u2, err := second()
	if err != nil {
		return usage{}, usage{}, err
	}
	if !aFirst {
		u1, u2 = u2, u1
	}
	return u1, u2, nil
}

// startup times `harness --version` and a dry run.
func (b *bench) startup() []row {
	b.log("start-up: hyperfine")
	cmds := []string{b.harness + " --version", b.harness + " run --agent claude --binary /bin/true -p x --dry-run"}
	names := []string{"start-up: harness --version", "start-up: harness run --dry-run"}
	res, err := b.hyperfine(5, b.sz.StartRuns, b.env, append(cmds, "/bin/true")...)
	if err != nil {
		return []row{failedRow(names[0], "≤ 10 ms", err), failedRow(names[1], "≤ 10 ms", err)}
	}
	t := res[2].Median * 1e3
	var rows []row
	for i, n := range names {
		v := res[i].Median * 1e3
		rows = append(rows, row{Figure: n, Value: fmt.Sprintf("%.1f ms", v),
			Reference: fmt.Sprintf("%.1f ms /bin/true", t), Ratio: fmt.Sprintf("+%.1f ms", v-t),
			Target: "≤ 10 ms", Met: metStr(v <= 10)})
	}
	return rows
}
