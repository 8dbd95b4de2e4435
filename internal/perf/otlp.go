package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/internal/jaeger"
)

// otlpOverhead measures what --otlp costs harness itself: `harness run`
// of a fake making many tool calls (a span each, and a model call each)
// and doing nothing else, with --otlp to a live OTLP/HTTP receiver and
// without, as interleaved pairs, the CPU ratio taken pair by pair. The
// receiver runs in this process: the figure is harness's own CPU (and its
// reaper's), not the backend's. It is the export's cost per tool call
// with no agent work to set it against — 2000 calls in about 20 ms, a
// hundred times the rate of any real agent — so it has no target: the
// ≤ 1.05× target is held on real agents' runs (otlpRealAgents).
func (b *bench) otlpOverhead() row {
	figure := fmt.Sprintf("--otlp, harness's own CPU: a fake making %d tool calls and nothing else", b.sz.OTLPCalls)
	const target = "— (≤ 1.05× is for a run: the rows below)"
	b.log("%s: %d pairs", figure, b.sz.OTLPPairs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return failedRow(figure, target, err)
	}
	var requests atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		requests.Add(1)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	spec := fmt.Sprintf("tool-calls %d", b.sz.OTLPCalls)
	with := func() (usage, error) { return b.runUsage(b.harnessRun("--otlp", "http://"+ln.Addr().String()), spec) }
	without := func() (usage, error) { return b.runUsage(b.harnessRun(), spec) }
	w, n, ratios, err := b.cpuPairs(b.sz.OTLPPairs, b.sz.OTLPPairs, 0, with, without)
	if err != nil {
		return failedRow(figure, target, err)
	}
	if requests.Load() == 0 {
		return failedRow(figure, target, fmt.Errorf("the receiver got no request"))
	}
	perCall := (median(w) - median(n)) * 1e6 / float64(b.sz.OTLPCalls)
	return row{Figure: figure,
		Value:     fmt.Sprintf("%.3f s CPU: %+.2f µs a tool call, all told", median(w), perCall),
		Reference: fmt.Sprintf("%.3f s CPU without --otlp", median(n)),
		Ratio:     fmt.Sprintf("%.2f× CPU (median of %d pairs)", median(ratios), len(ratios)),
		Target:    target, Met: "—"}
}

// otlpRealAgents measures what --otlp costs the runs users make: `harness
// run --mock tool` of each real CLI that runs on the scripted model (the
// e2e suite's scenario: a tool call and a file written), with --otlp to a
// live Jaeger and without, as interleaved pairs. The figure is the CPU of
// the whole run — harness, the agent and what it started — since that is
// what --otlp adds to: harness's export and, for an agent that exports
// its own telemetry when harness turns it on (otlp.AgentEnv: Claude
// Code), the agent's too. On Claude's run that is most of it: 1.035×
// over 30 pairs, 1.001× with Claude Code's telemetry left off. A real
// agent's CPU moves by about 4 % from run to run, hence more pairs, as
// many as fit in OTLPAgentBudget for a quick agent.
func (b *bench) otlpRealAgents() []row {
	const target, limit = "≤ 1.05× without --otlp", 1.05
	figure := func(agent string) string {
		return "--otlp, a real agent's run: " + agent + " --mock tool, CPU of the run"
	}
	agents := harnesstest.MockAgents()
	fail := func(err error) []row {
		var rows []row
		for _, a := range agents {
			rows = append(rows, failedRow(figure(a), target, err))
		}
		return rows
	}
	dir, err := os.MkdirTemp(b.tmp, "jaeger")
	if err != nil {
		return fail(err)
	}
	j, err := jaeger.Start(dir)
	if err != nil {
		return fail(err)
	}
	defer j.Stop()
	env := append(append([]string(nil), b.env...), "HARNESS_AGENTS_DIR="+filepath.Join(b.root, ".agents"))
	var rows []row
	for _, agent := range agents {
		b.log("%s: %d to %d pairs", figure(agent), b.sz.OTLPAgentPairs, b.sz.OTLPAgentMax)
		run := func(extra ...string) func() (usage, error) {
			return func() (usage, error) {
				work, err := os.MkdirTemp(b.tmp, "run")
				if err != nil {
					return usage{}, err
				}
				defer os.RemoveAll(work)
				argv := append([]string{b.harness, "run", "--agent", agent, "--mock", "tool", "--cwd", work,
					"-p", "Follow the script.", "--timeout", "2m"}, extra...)
				return b.usageOf(argv, env)
			}
		}
		with, without := run("--otlp", j.OTLP), run()
		w, n, ratios, err := b.cpuPairs(b.sz.OTLPAgentPairs, b.sz.OTLPAgentMax, b.sz.OTLPAgentBudget, with, without)
		if err != nil {
			rows = append(rows, failedRow(figure(agent), target, err))
			continue
		}
		if err = j.HasService("harness"); err != nil { // the export measured did reach the backend
			rows = append(rows, failedRow(figure(agent), target, err))
			continue
		}
		r := median(ratios)
		rows = append(rows, row{Figure: figure(agent),
			Value:     fmt.Sprintf("%.3f s CPU", median(w)),
			Reference: fmt.Sprintf("%.3f s CPU without --otlp", median(n)),
			Ratio:     fmt.Sprintf("%.3f× CPU (median of %d pairs)", r, len(ratios)),
			Target:    target, Met: metStr(r <= limit)})
	}
	return rows
}

// cpuPairs runs interleaved pairs of with and without, after one more
// that warms the caches up and is left out: at least least pairs, and
// more up to most while all of them took under budget. It returns each
// side's CPU and the pairs' CPU ratios.
func (b *bench) cpuPairs(least, most int, budget time.Duration, with, without func() (usage, error)) (w, n, ratios []float64, err error) {
	start := time.Now()
	for i := 0; i <= least || (i <= most && time.Since(start) < budget); i++ {
		uw, un, err := b.pair(i%2 == 0, with, without)
		if err != nil {
			return nil, nil, nil, err
		}
		if i > 0 {
			w, n, ratios = append(w, uw.CPU), append(n, un.CPU), append(ratios, uw.CPU/un.CPU)
		}
	}
	return w, n, ratios, nil
}
