package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness"
)

// agents whose `harness parse` throughput is measured, in the table's
// order (claude first): those with captures in root's testdata/ (not
// oracle and nop, which print no native stream).
func agents(root string) []string {
	var ids []string
	for _, id := range harness.AgentNames() {
		if st, err := os.Stat(filepath.Join(root, "testdata", id)); err == nil && st.IsDir() {
			ids = append(ids, id)
		}
	}
	return ids
}

// meanLine is the mean line length, in bytes, of each agent's stream, for
// allocations per line of the go benchmarks.
var meanLine = map[string]float64{}

// throughput measures `harness parse` against jq and cat per agent.
func (b *bench) throughput() []row {
	var rows, perEvent []row
	for _, agent := range agents(b.root) {
		figure := "per-agent throughput: " + agent
		target, need := "≥ 10× jq", 10.0
		if agent == "claude" {
			figure, target, need = "normalize throughput: claude (partial messages)", "≥ 15× jq (≈ 300 MB/s)", 15
		}
		r, pe, err := b.throughputOf(agent, need)
		if err != nil {
			r = failedRow(figure, target, err)
		}
		r.Figure, r.Target = figure, target
		rows = append(rows, r)
		if err == nil {
			perEvent = append(perEvent, pe)
		}
	}
	return append(rows, perEvent...)
}

// throughputOf returns the throughput row of agent and, measured on the
// same stream, its CPU per event (cpuPerEvent).
func (b *bench) throughputOf(agent string, need float64) (row, row, error) {
	file, err := b.stream(agent)
	if err != nil {
		return row{}, row{}, err
	}
	defer os.Remove(file)
	st, err := os.Stat(file)
	if err != nil {
		return row{}, row{}, err
	}
	mb := float64(st.Size()) / 1e6
	b.log("throughput %s: %.0f MB, hyperfine", agent, mb)
	// harness, cat and jq take turns, round by round, so that all three
	// see the same moods of a shared machine; jq is slow, so it runs once
	// a round. Medians over all rounds.
	rounds := max(2, b.sz.HFRuns-2)
	var hTimes, cTimes, jTimes []float64
	for round := range rounds {
		warmup := 0
		if round == 0 {
			warmup = 1
		}
		res, err := b.hyperfine(warmup, max(1, (b.sz.HFRuns+rounds-1)/rounds), b.env,
			b.harness+" parse --agent "+agent+" "+file, "cat "+file)
		if err != nil {
			return row{}, row{}, err
		}
		jq, err := b.hyperfine(0, 1, b.env, "jq -c . "+file)
		if err != nil {
			return row{}, row{}, err
		}
		hTimes = append(hTimes, res[0].Times...)
		cTimes = append(cTimes, res[1].Times...)
		jTimes = append(jTimes, jq[0].Times...)
	}
	res := []hfResult{{Median: median(hTimes)}, {Median: median(cTimes)}}
	jq := []hfResult{{Median: median(jTimes)}}
	h, c, j := mb/res[0].Median, mb/res[1].Median, mb/jq[0].Median
	ratio := h / j
	return row{
		Value:     fmt.Sprintf("%.0f MB/s (%.0f MB in %.2f s)", h, mb, res[0].Median),
		Reference: fmt.Sprintf("jq -c . %.0f MB/s; cat %.0f MB/s", j, c),
		Ratio:     fmt.Sprintf("%.1f× jq", ratio),
		Met:       metStr(ratio >= need),
	}, b.cpuPerEvent(agent, file), nil
}

// stream generates agent's native stream with benchgen; Claude's from its
// --include-partial-messages captures only.
func (b *bench) stream(agent string) (string, error) {
	args := []string{"-agent", agent, "-size", b.sz.Stream}
	if agent == "claude" {
		td := filepath.Join(b.tmp, "testdata")
		if err := copyPartials(filepath.Join(b.root, "testdata", "claude"), filepath.Join(td, "claude")); err != nil {
			return "", err
		}
		args = append(args, "-testdata", td)
	}
	file := filepath.Join(b.tmp, agent+".jsonl")
	if err := b.benchgen(append(args, "-o", file)...); err != nil {
		return "", err
	}
	n, lines, err := countLines(file)
	if err != nil {
		return "", err
	}
	if lines > 0 {
		meanLine[agent] = float64(n) / float64(lines)
	}
	return file, nil
}

// benchgen runs the stream generator with args, from the module root
// (its default -testdata).
func (b *bench) benchgen(args ...string) error {
	b.log("benchgen %s", strings.Join(args, " "))
	cmd := exec.Command(filepath.Join(b.tmp, "benchgen"), args...)
	cmd.Dir = b.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("benchgen %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// copyPartials copies the partial-message captures (not the .raw copies)
// with their golden files.
func copyPartials(from, to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	matches, err := filepath.Glob(filepath.Join(from, "partial-*"))
	if err != nil {
		return err
	}
	n := 0
	for _, m := range matches {
		if strings.Contains(filepath.Base(m), ".raw.") {
			continue
		}
		data, err := os.ReadFile(m)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, filepath.Base(m)), data, 0o644); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("no partial-* captures in %s", from)
	}
	return nil
}

// countLines returns a file's size and number of newlines.
func countLines(path string) (size, lines int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		n, err := f.Read(buf)
		size += int64(n)
		lines += int64(bytes.Count(buf[:n], []byte{'\n'}))
		if err == io.EOF {
			return size, lines, nil
		}
		if err != nil {
			return size, lines, err
		}
	}
}
