package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// memory measures the peak RSS of `harness run` while the fake floods it.
func (b *bench) memory() []row {
	cases := []struct{ figure, spec string }{
		{fmt.Sprintf("memory: %s stdout in ~1 KiB lines", human(b.sz.FloodStdout)), fmt.Sprintf("flood-stdout %d", b.sz.FloodStdout)},
		{fmt.Sprintf("memory: %s stderr", human(b.sz.FloodStderr)), fmt.Sprintf("flood-stderr %d", b.sz.FloodStderr)},
		{fmt.Sprintf("memory: one %s line", human(b.sz.HugeLine)), fmt.Sprintf("huge-line %d", b.sz.HugeLine)},
		{fmt.Sprintf("memory: one %s streamed block", human(b.sz.OneBlock)), fmt.Sprintf("long-block %d", b.sz.OneBlock)},
		// Hostile shapes of issue 22: many open calls of megabytes each,
		// and one tool input nested 8M levels deep (a 16 MB line).
		{fmt.Sprintf("memory: 60 open tool calls of %g MB", float64(b.sz.OpenCall)/1e6), fmt.Sprintf("big-open-calls 60 %d", b.sz.OpenCall)},
		{fmt.Sprintf("memory: a tool input nested %dk levels deep", b.sz.DeepLevels/1000), fmt.Sprintf("deep-tool-input %d", b.sz.DeepLevels)},
	}
	var rows []row
	for _, c := range cases {
		b.log("%s", c.figure)
		h, err := b.peakRSS(b.harnessRun(), c.spec)
		if err != nil {
			rows = append(rows, failedRow(c.figure, "≤ 50 MB", err))
			continue
		}
		f, err := b.peakRSS([]string{b.fake}, c.spec)
		if err != nil {
			rows = append(rows, failedRow(c.figure, "≤ 50 MB", fmt.Errorf("fake alone: %w", err)))
			continue
		}
		rows = append(rows, row{Figure: c.figure, Value: fmt.Sprintf("%.1f MB", h),
			Reference: fmt.Sprintf("%.1f MB fake alone", f), Ratio: fmt.Sprintf("%.1f×", h/f),
			Target: "≤ 50 MB", Met: metStr(h <= 50)})
	}
	return rows
}

// peakRSS runs argv with its output to /dev/null and returns its peak
// resident set in MB (10^6 bytes): wait4's ru_maxrss, which on Linux is
// the larger of the process's own peak and its reaped children's. It is
// measured from a fresh copy of this binary (peakRSSArg), not from here:
// Linux also counts into a child's ru_maxrss the resident set of the
// process it was forked from, and this one holds the live-view clients
// by then (every row read 58 MB, the fake alone too).
func (b *bench) peakRSS(argv []string, spec string) (float64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self, append([]string{peakRSSArg}, argv...)...)
	cmd.Env = b.fakeEnv(spec)
	cmd.Dir = b.tmp
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	if len(argv) > 1 { // harness's own stderr; the fake's floods are its output
		cmd.Stderr = &stderr
	}
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%v: %s", err, lastLines(stderr.String(), 3))
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(stdout.String()), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("peak RSS: %q: %v", stdout.String(), err)
	}
	return float64(kb) * 1024 / 1e6, nil
}

// peakRSSArg makes this binary run its other arguments with their output
// to /dev/null and print their ru_maxrss in KiB (see peakRSS).
const peakRSSArg = "-peak-rss-of"

func peakRSSChild(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "no rusage")
		return 1
	}
	fmt.Println(ru.Maxrss)
	return 0
}

// human prints a size in binary units.
func human(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// rssMB is the resident set of process pid now, in MB (10^6 bytes).
func rssMB(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for l := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return float64(kb) * 1024 / 1e6, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
