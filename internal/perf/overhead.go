package main

import (
	"fmt"
	"strings"
)

// wrapOverhead compares `harness run` of the print-lines fake with the
// fake run directly.
func (b *bench) wrapOverhead() row {
	const figure, target = "wrap overhead", "≤ 1.05× + 15 ms"
	b.log("wrap overhead: %d lines, hyperfine", b.sz.WrapLines)
	env := b.fakeEnv(fmt.Sprintf("print-lines %d", b.sz.WrapLines))
	res, err := b.hyperfine(3, b.sz.WrapRuns, env, strings.Join(b.harnessRun(), " "), b.fake)
	if err != nil {
		return failedRow(figure, target, err)
	}
	h, f := res[0].Median*1e3, res[1].Median*1e3
	limit := 1.05*f + 15
	return row{Figure: fmt.Sprintf("wrap overhead (%d lines)", b.sz.WrapLines),
		Value:     fmt.Sprintf("%.1f ms", h),
		Reference: fmt.Sprintf("%.1f ms fake alone", f),
		Ratio:     fmt.Sprintf("%.2f× (+%.1f ms)", h/f, h-f),
		Target:    fmt.Sprintf("%s = %.1f ms", target, limit),
		Met:       metStr(h <= limit)}
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
