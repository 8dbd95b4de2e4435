package main

import (
	"fmt"
	"os"
	"sync"
)

// parallelRuns measures whether a run costs harness more when many run
// at once, as in a script or CI job that starts them together: Parallel
// `harness run`s of the print-lines fake (with the session log, the
// default) one after another, then all at once. Harness's own CPU per
// run is the CPU of the runs (harness and the fake it reaps, wait4) less
// that of as many fakes run alone the same way, one after another or all
// at once. Rounds alternate the order; the figures are medians.
func (b *bench) parallelRuns() row {
	n := b.sz.Parallel
	figure := fmt.Sprintf("%d runs at once: harness CPU per run (%d lines each, with the session log)", n, b.sz.ParallelLines)
	const target = "flat: ≤ 1.25× one at a time"
	spec := fmt.Sprintf("print-lines %d", b.sz.ParallelLines)
	b.log("parallel runs: %d runs of %s, %d rounds", n, spec, b.sz.ParallelRounds)
	// batch runs argv n times, all at once or one after another, and
	// returns the CPU of them all in seconds.
	batch := func(argv []string, together bool) (float64, error) {
		cpu := make([]float64, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			run := func() {
				u, err := b.runUsage(argv, spec)
				cpu[i], errs[i] = u.CPU, err
			}
			if together {
				wg.Go(run)
			} else {
				run()
			}
		}
		wg.Wait()
		total := 0.0
		for i := range n {
			if errs[i] != nil {
				return 0, errs[i]
			}
			total += cpu[i]
		}
		return total, nil
	}
	// perRun is harness's own CPU per run, in ms; hFirst: the harness
	// batch before the fakes'.
	perRun := func(together, hFirst bool) (float64, error) {
		h, f, err := b.pair(hFirst, func() (usage, error) {
			cpu, err := batch(b.withLog(), together)
			_ = os.RemoveAll(b.sessionsDir())
			return usage{CPU: cpu}, err
		}, func() (usage, error) {
			cpu, err := batch([]string{b.fake}, together)
			return usage{CPU: cpu}, err
		})
		return (h.CPU - f.CPU) * 1e3 / float64(n), err
	}
	var alone, together []float64
	for i := range b.sz.ParallelRounds {
		order := []bool{false, true}
		if i%2 == 1 {
			order = []bool{true, false}
		}
		for _, tog := range order {
			v, err := perRun(tog, i%2 == 0)
			if err != nil {
				return failedRow(figure, target, err)
			}
			if tog {
				together = append(together, v)
			} else {
				alone = append(alone, v)
			}
		}
	}
	a, t := median(alone), median(together)
	return row{Figure: figure,
		Value:     fmt.Sprintf("%.1f ms", t),
		Reference: fmt.Sprintf("%.1f ms one at a time (the fake's own CPU taken off both)", a),
		Ratio:     fmt.Sprintf("%.2f× (medians of %d rounds)", t/a, len(alone)),
		Target:    target, Met: metStr(t <= 1.25*a)}
}
