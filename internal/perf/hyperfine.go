package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// hfResult is one command of hyperfine's --export-json output; times are
// seconds.
type hfResult struct {
	Command string    `json:"command"`
	Mean    float64   `json:"mean"`
	Stddev  float64   `json:"stddev"`
	Median  float64   `json:"median"`
	Min     float64   `json:"min"`
	Max     float64   `json:"max"`
	Times   []float64 `json:"times"`
}

// parseHyperfine reads hyperfine's --export-json document.
func parseHyperfine(data []byte) ([]hfResult, error) {
	var doc struct {
		Results []hfResult `json:"results"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("hyperfine json: %w", err)
	}
	if len(doc.Results) == 0 {
		return nil, errors.New("hyperfine json: no results")
	}
	for i, r := range doc.Results {
		if len(r.Times) == 0 {
			return nil, fmt.Errorf("hyperfine json: %q has no times", r.Command)
		}
		if r.Median == 0 { // older versions: compute it
			doc.Results[i].Median = median(r.Times)
		}
	}
	return doc.Results, nil
}

// hyperfine runs the commands (no shell: each is split on spaces, so paths
// must have none) with warm-up and runs and returns one result per
// command, in order. Their output goes to /dev/null; a non-zero exit fails.
func (b *bench) hyperfine(warmup, runs int, env []string, cmds ...string) ([]hfResult, error) {
	out := filepath.Join(b.tmp, "hyperfine.json")
	args := []string{"-N", "--style", "none", "--warmup", strconv.Itoa(warmup), "--runs", strconv.Itoa(runs), "--export-json", out}
	args = append(args, cmds...)
	cmd := exec.Command("hyperfine", args...)
	cmd.Env = env
	cmd.Dir = b.tmp
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("hyperfine %s: %v: %s", strings.Join(cmds, " | "), err, lastLines(stderr.String(), 5))
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	res, err := parseHyperfine(data)
	if err == nil && len(res) != len(cmds) {
		err = fmt.Errorf("hyperfine json: %d results for %d commands", len(res), len(cmds))
	}
	return res, err
}

// lastLines keeps the last n lines of s, for error messages.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
