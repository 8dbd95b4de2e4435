package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// parseGrowth checks that harness parse keeps its memory and its CPU per
// MB flat in the length of a stream: the peak RSS and CPU of a stream
// four times as long (sizes.Long) against one of sizes.Stream. Claude's
// stream of every capture (the parser kept each tool call and model
// call until f8fe8a4: 87 MB and 7 s of CPU at 800 MB, 0.12 s at 50 MB)
// and codex's, the most tool calls a MB.
func (b *bench) parseGrowth() []row {
	var rows []row
	for _, agent := range []string{"claude", "codex"} {
		figure := fmt.Sprintf("parse growth: %s, every capture, %s → %s", agent, b.sz.Stream, b.sz.Long)
		const target = "flat: ≤ 1.25× the RSS and CPU per MB of the shorter"
		r, err := b.growthOf(agent)
		if err != nil {
			r = failedRow(figure, target, err)
		}
		r.Figure, r.Target = figure, target
		rows = append(rows, r)
	}
	return rows
}

// growthOf measures one agent's parse at both lengths.
func (b *bench) growthOf(agent string) (row, error) {
	type at struct{ rss, cpuPerMB float64 }
	var got [2]at
	for i, size := range []string{b.sz.Stream, b.sz.Long} {
		file := filepath.Join(b.tmp, agent+"-growth.jsonl")
		if err := b.benchgen("-agent", agent, "-size", size, "-o", file); err != nil {
			return row{}, err
		}
		st, err := os.Stat(file)
		if err != nil {
			return row{}, err
		}
		// Peak RSS moves by a few MB from run to run (where the
		// collections fall): medians of three, as the CPU.
		var rsss, cpus []float64
		for range perEventRuns {
			rss, err := b.peakRSS([]string{b.harness, "parse", "--agent", agent, file}, "")
			if err != nil {
				os.Remove(file)
				return row{}, err
			}
			c, _, err := b.parseCPU(agent, file)
			if err != nil {
				os.Remove(file)
				return row{}, err
			}
			rsss, cpus = append(rsss, rss), append(cpus, c)
		}
		os.Remove(file)
		got[i] = at{median(rsss), median(cpus) / (float64(st.Size()) / 1e6)}
	}
	rssRatio, cpuRatio := got[1].rss/got[0].rss, got[1].cpuPerMB/got[0].cpuPerMB
	return row{
		Value:     fmt.Sprintf("%.1f MB RSS, %.2f ms CPU a MB", got[1].rss, got[1].cpuPerMB*1e3),
		Reference: fmt.Sprintf("%.1f MB RSS, %.2f ms CPU a MB at %s", got[0].rss, got[0].cpuPerMB*1e3, b.sz.Stream),
		Ratio:     fmt.Sprintf("%.2f× RSS, %.2f× CPU a MB", rssRatio, cpuRatio),
		Met:       metStr(rssRatio <= 1.25 && cpuRatio <= 1.25),
	}, nil
}
