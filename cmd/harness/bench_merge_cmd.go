package main

import (
	"fmt"

	"github.com/alecthomas/kong"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/plural"
)

// benchMergeCmd combines the shards of one plan into one report, in
// every format, with bench's --report, -o, --no-store, --seed and
// --exit-zero; bench's other flags are refused.
//
// Exit status: 0 when the plan is complete and every run succeeded and
// passed, 1 when runs are missing or failed, 2 for bad input (no input,
// not a results directory or report, a corrupt row, mixed plans: two
// engines, runs of the scripted model and of another model, or of other
// permissions or turn limits; a run recorded as two different runs;
// --seed 0).
type benchMergeCmd struct {
	Inputs []string `arg:"" help:"Results directories (--results) or JSON reports of the shards." type:"path"`
}

func (m *benchMergeCmd) Run(e *env, parent *benchCmd, ctx *kong.Context) error {
	if err := refuseRunFlags(ctx, "merge", "report", "output", "no-store", "seed", "exit-zero"); err != nil {
		return err
	}
	rep, err := bench.MergeSeed(m.Inputs, parent.Seed)
	if err != nil {
		return withStatus(exitUsage, err)
	}
	out, closeOut, err := parent.reportWriter(e)
	if err != nil {
		return err
	}
	defer closeOut()
	parent.store(e, rep)
	if err := writeReport(out, rep, parent.Report); err != nil {
		return withStatus(exitAgentFailed, fmt.Errorf("bench: writing the report: %w", err))
	}
	if len(rep.Missing) > 0 || len(rep.Duplicates) > 0 {
		return withStatus(exitAgentFailed, fmt.Errorf("bench: merge: plan %s: %d of %s missing, %s (the report lists them)",
			rep.PlanID, len(rep.Missing), plural.Count(int64(rep.Planned), "run"), plural.Count(int64(len(rep.Duplicates)), "duplicate")))
	}
	if parent.ExitZero {
		return nil
	}
	return benchStatus(rep)
}
