package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// usage is what one finished command cost: user+sys CPU of it and the
// children it reaped (the agent, a reaper), and wall time, in seconds.
type usage struct{ CPU, Wall float64 }

// runUsage runs argv with the fake set to spec, output to /dev/null, and
// returns its usage.
func (b *bench) runUsage(argv []string, spec string) (usage, error) {
	return b.usageOf(argv, b.fakeEnv(spec))
}

// usageOf runs argv in env, output to /dev/null, and returns its usage:
// its CPU and that of every process it waited for.
func (b *bench) usageOf(argv []string, env []string) (usage, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = b.tmp
	var stderr bytes.Buffer
	if len(argv) > 1 {
		cmd.Stderr = &stderr
	}
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return usage{}, fmt.Errorf("%v: %s", err, lastLines(stderr.String(), 3))
	}
	wall := time.Since(start).Seconds()
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return usage{}, fmt.Errorf("no rusage")
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return usage{CPU: tv(ru.Utime) + tv(ru.Stime), Wall: wall}, nil
}

// sessionsDir is where `harness run` writes its session logs in b.env.
func (b *bench) sessionsDir() string {
	return filepath.Join(b.tmp, "home", ".local", "share", "harness", "sessions")
}

// withLog is the argv of harness run with its session log on, as users
// run it (the default).
func (b *bench) withLog() []string {
	var argv []string
	for _, a := range b.harnessRun() {
		if a != "--no-log" {
			argv = append(argv, a)
		}
	}
	return argv
}

// sessionLog measures what the session log (on by default) costs: a
// short run of many lines and a flood, each as interleaved pairs of runs
// with and without the log (the order alternating), the ratio taken pair
// by pair.
func (b *bench) sessionLog() []row {
	cases := []struct {
		figure, spec, target string
		limit                float64
		pairs                int
	}{
		{fmt.Sprintf("session log: %d lines, CPU with the log", b.sz.WrapLines), fmt.Sprintf("print-lines %d", b.sz.WrapLines),
			"≤ 1.3× --no-log", 1.3, b.sz.WrapRuns},
		{fmt.Sprintf("session log: %s stdout flood, CPU with the log", human(b.sz.FloodStdout)), fmt.Sprintf("flood-stdout %d", b.sz.FloodStdout),
			"≤ 1.25× --no-log", 1.25, b.sz.FloodPairs},
	}
	var rows []row
	for _, c := range cases {
		b.log("%s: %d pairs", c.figure, c.pairs)
		var with, without, ratios, wallRatios []float64
		var err error
		for i := range c.pairs {
			withLog := func() (usage, error) {
				u, err := b.runUsage(b.withLog(), c.spec)
				// A flood's log is gigabytes: removed, and its dirty pages
				// written out, before the next run, so that neither side
				// of a pair starts while the kernel is still busy with
				// the last one's.
				_ = os.RemoveAll(b.sessionsDir())
				syscall.Sync()
				return u, err
			}
			var w, n usage
			if w, n, err = b.pair(i%2 == 0, withLog, func() (usage, error) { return b.runUsage(b.harnessRun(), c.spec) }); err != nil {
				break
			}
			with, without = append(with, w.CPU), append(without, n.CPU)
			ratios, wallRatios = append(ratios, w.CPU/n.CPU), append(wallRatios, w.Wall/n.Wall)
		}
		if err != nil {
			rows = append(rows, failedRow(c.figure, c.target, err))
			continue
		}
		r := median(ratios)
		rows = append(rows, row{Figure: c.figure,
			Value:     fmt.Sprintf("%.3f s CPU", median(with)),
			Reference: fmt.Sprintf("%.3f s CPU with --no-log", median(without)),
			Ratio:     fmt.Sprintf("%.3f× CPU, %.2f× wall (medians of %d pairs)", r, median(wallRatios), len(ratios)),
			Target:    c.target, Met: metStr(r <= c.limit)})
	}
	return rows
}

// idleRun measures the harness's CPU over a long run in which the agent
// is silent (a tool call open, as while an agent waits on its model or a
// build): `harness run` of the fake, with the session log, for Idle and
// for no time at all, IdlePairs times; the difference over Idle, pair by
// pair, is what each second of silence costs, start-up left out (it has a
// row of its own). The end of the run is in both, but not at the same
// price on a VM, where a wake-up after seconds of sleep costs any process
// milliseconds of CPU: the long run's end, which wakes the harness's
// threads after the silence, is counted as part of the silence's cost.
// What the fake alone costs over the same silence (its Go runtime) is
// taken off: it runs beside the harness, as both are idle. The median of
// the pairs: a run of no silence alone moved by 0.015 s from one run to
// the next here (0.25 ms a second of a minute's silence).
func (b *bench) idleRun() row {
	d := b.sz.Idle
	figure := fmt.Sprintf("idle run (%s silent): harness CPU a second", d)
	target := "≤ 1 ms a second"
	b.log("%s: %d pairs", figure, b.sz.IdlePairs)
	long, short := "long-silent-tool "+d.String(), "long-silent-tool 0s"
	type res struct {
		u   usage
		err error
	}
	fake := make(chan res, 1)
	go func() {
		u, err := b.runUsage([]string{b.fake}, long)
		if err == nil {
			var u0 usage
			u0, err = b.runUsage([]string{b.fake}, short)
			u.CPU -= u0.CPU
		}
		fake <- res{u, err}
	}()
	var longs, shorts, diffs []float64
	var err error
	for range b.sz.IdlePairs {
		var hLong, hShort usage
		if hLong, err = b.runUsage(b.withLog(), long); err != nil {
			break
		}
		if hShort, err = b.runUsage(b.withLog(), short); err != nil {
			break
		}
		longs, shorts, diffs = append(longs, hLong.CPU), append(shorts, hShort.CPU), append(diffs, hLong.CPU-hShort.CPU)
	}
	f := <-fake
	if err == nil {
		err = f.err
	}
	if err != nil {
		return failedRow(figure, target, err)
	}
	own := max(0, median(diffs)-max(0, f.u.CPU))
	perSec := own / d.Seconds() * 1000
	return row{Figure: figure, Value: fmt.Sprintf("%.2f ms", perSec),
		Reference: fmt.Sprintf("%.3f s CPU the %s run in all, %.3f s with no silence (medians), the fake's silence alone %.3f s", median(longs), d, median(shorts), max(0, f.u.CPU)),
		Ratio:     fmt.Sprintf("%.3f s over %s (median of %d pairs)", own, d, len(diffs)),
		Target:    target, Met: metStr(perSec <= 1)}
}
