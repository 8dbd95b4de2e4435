package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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

// goReference is a Go program that links what any Go command-line tool
// with an HTTP client links (net/http, encoding/json, os/exec, regexp)
// and prints one line: the start-up rows' second reference, so that a
// machine whose page faults are slow (this one: every Go binary starts
// slowly) is told apart from harness starting slowly.
const goReference = `package main

import (
	"fmt"
	_ "encoding/json"
	_ "net/http"
	_ "os/exec"
	_ "regexp"
)

func main() { fmt.Println("go reference") }
`

// buildGoReference writes goReference into b.tmp and builds it as
// harness is built (static, stripped).
func (b *bench) buildGoReference() (string, error) {
	dir := filepath.Join(b.tmp, "goref")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for name, text := range map[string]string{"main.go": goReference, "go.mod": "module goref\n\ngo 1.24\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	bin := filepath.Join(dir, "goref")
	// -buildvcs=false: the reference is no repository's, whatever is above b.tmp
	// (an empty /tmp/.git made its stamping fail).
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build the Go reference: %v\n%s", err, out)
	}
	return bin, nil
}

// startup times `harness --version` and a dry run, against /bin/true and
// a Go program that links net/http (the floor of a Go tool on this
// machine), and notes the page faults each takes.
func (b *bench) startup() []row {
	b.log("start-up: hyperfine")
	const target = "≤ 10 ms"
	cmds := []string{b.harness + " --version", b.harness + " run --agent claude --binary /bin/true -p x --dry-run"}
	names := []string{"start-up: harness --version", "start-up: harness run --dry-run"}
	fail := func(err error) []row {
		return []row{failedRow(names[0], target, err), failedRow(names[1], target, err)}
	}
	ref, err := b.buildGoReference()
	if err != nil {
		return fail(err)
	}
	res, err := b.hyperfine(5, b.sz.StartRuns, b.env, append(cmds, "/bin/true", ref)...)
	if err != nil {
		return fail(err)
	}
	t, g := res[2].Median*1e3, res[3].Median*1e3
	var rows []row
	for i, n := range names {
		v := res[i].Median * 1e3
		rows = append(rows, row{Figure: n, Value: fmt.Sprintf("%.1f ms", v),
			Reference: fmt.Sprintf("%.1f ms /bin/true; %.1f ms a Go program linking net/http", t, g),
			Ratio:     fmt.Sprintf("+%.1f ms; %.2f× the Go program", v-t, v/g),
			Target:    target, Met: metStr(v <= 10)})
	}
	b.faultsNote(map[string][]string{"harness --version": {b.harness, "--version"}, "the Go program": {ref}, "/bin/true": {"/bin/true"}})
	return rows
}

// faultsNote says how many page faults (wait4's ru_minflt, median of 5)
// each program takes to start: start-up on a virtual machine is mostly
// their cost.
func (b *bench) faultsNote(progs map[string][]string) {
	var parts []string
	for _, name := range []string{"harness --version", "the Go program", "/bin/true"} {
		var faults []float64
		for range 5 {
			cmd := exec.Command(progs[name][0], progs[name][1:]...)
			cmd.Env = b.env
			if err := cmd.Run(); err != nil {
				b.notes = append(b.notes, fmt.Sprintf("start-up: %s failed: %v", name, err))
				return
			}
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				faults = append(faults, float64(ru.Minflt))
			}
		}
		parts = append(parts, fmt.Sprintf("%s %.0f", name, median(faults)))
	}
	b.notes = append(b.notes, "start-up: page faults to start (median of 5): "+strings.Join(parts, ", ")+
		"; the Go program is a hello world that links net/http, encoding/json, os/exec and regexp, built as harness is.")
}
