package main

import (
	"bufio"
	"fmt"
	"os/exec"
	"path"
	"strconv"
	"strings"
)

// benchPkgs are the packages whose in-process benchmarks are recorded.
var benchPkgs = []string{"./event", "./linescan", "./adapters/...", "./process", "./serve", "./bench"}

// goBenchmarks runs the in-process benchmarks and parses their results.
func (b *bench) goBenchmarks() ([]goBench, error) {
	args := append([]string{"test", "-run", "^$", "-bench", ".", "-benchmem", "-count", "1"}, b.sz.GoBenchFlags...)
	cmd := exec.Command("go", append(args, benchPkgs...)...)
	cmd.Dir = b.root
	out, err := cmd.CombinedOutput()
	res := parseGoBench(string(out))
	if err != nil {
		return res, fmt.Errorf("%v: %s", err, lastLines(string(out), 8))
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("no benchmark results: %s", lastLines(string(out), 8))
	}
	return res, nil
}

// parseGoBench reads `go test -bench -benchmem` output.
func parseGoBench(out string) []goBench {
	var res []goBench
	pkg := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimPrefix(strings.TrimSpace(p), "github.com/agentharness/harness/")
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		g := goBench{Pkg: pkg, Name: f[0], Iterations: n, Metrics: map[string]float64{}}
		if i := strings.LastIndexByte(g.Name, '-'); i > 0 {
			if _, err := strconv.Atoi(g.Name[i+1:]); err == nil {
				g.Name = g.Name[:i] // the GOMAXPROCS suffix
			}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			switch f[i+1] {
			case "ns/op":
				g.NsPerOp = v
			case "MB/s":
				g.MBPerSec = v
			case "B/op":
				g.BPerOp = v
			case "allocs/op":
				g.AllocsOp = v
			default:
				g.Metrics[f[i+1]] = v
			}
		}
		g.PerLine = perLine(g)
		res = append(res, g)
	}
	return res
}

// perLine is allocs per line: from the benchmark's lines/op, else (≈)
// from bytes/op and the mean line length of the adapter's agent stream.
func perLine(g goBench) string {
	if l := g.Metrics["lines/op"]; l > 0 {
		return fmt.Sprintf("%.3f", g.AllocsOp/l)
	}
	agent := path.Base(g.Pkg)
	if ml := meanLine[agent]; ml > 0 && g.MBPerSec > 0 && strings.HasPrefix(g.Pkg, "adapters/") {
		bytesPerOp := g.MBPerSec * g.NsPerOp / 1e3 // MB/s is 10^6 bytes per 10^9 ns
		if lines := bytesPerOp / ml; lines >= 1 {
			return fmt.Sprintf("≈ %.3f", g.AllocsOp/lines)
		}
	}
	return "—"
}
