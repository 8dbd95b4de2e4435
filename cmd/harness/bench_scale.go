package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/agentharness/harness/bench"
)

// benchScaleFlags are bench's flags for benches larger than one machine
// and one sitting: shards, results directories, stored reports.
type benchScaleFlags struct {
	Shard    string `help:"Run only shard I (from 0) of N of the plan, e.g. 0/3; every machine splits the plan the same way." placeholder:"I/N"`
	Results  string `help:"Write each run's row (and a copy of its session log) to this directory as soon as it ends; a bench of the same plan on the same directory runs only what is missing." type:"path"`
	Seed     uint64 `help:"Seed of the bootstrap intervals (default 1): the same runs give the same report."`
	NoStore  bool   `help:"Do not store the JSON report under $XDG_DATA_HOME/harness/bench."`
	ExitZero bool   `help:"Exit 0 even when runs failed or did not pass their check (the report says which): for job runners that retry a failing process."`
}

func (f *benchScaleFlags) shard() (bench.Shard, error) {
	if f.Shard == "" {
		return bench.Shard{}, nil
	}
	s, err := bench.ParseShard(f.Shard)
	if err != nil {
		return s, withStatus(exitUsage, err)
	}
	return s, nil
}

// store keeps the report for 'harness serve' and later comparisons; a
// failure to store is said, but the report is still written.
func (f *benchScaleFlags) store(e *env, rep *bench.Report) {
	if f.NoStore {
		return
	}
	if _, err := bench.SaveReport(rep); err != nil {
		fmt.Fprintf(e.Stderr, "harness: %s\n", oneLine(err.Error()))
	}
}

// loadReport reads a report given as a results directory (merged), a
// JSON report file, or the id of a stored report. A file is read as
// merge reads one (bench.ReadCompareInput), never whole: its runs up to
// its plan's, its groups skipped.
func loadReport(arg string) (*bench.Report, error) {
	st, err := os.Stat(arg)
	switch {
	case err == nil && st.IsDir():
		return bench.Merge([]string{arg})
	case err == nil:
		return bench.ReadCompareInput(arg)
	case errors.Is(err, os.ErrNotExist):
		if r, lerr := bench.LoadReport(arg); lerr == nil {
			return r, nil
		}
		return nil, fmt.Errorf("bench: %s: no such file, directory or stored report", arg)
	}
	return nil, fmt.Errorf("bench: %w", err)
}
