package bench

import (
	"math"
	"slices"
	"time"

	"github.com/agentharness/harness/event"
)

// Report is the outcome of a bench.
type Report struct {
	// ID names the stored report (SaveReport); "" until it is stored.
	ID string `json:"id,omitempty"`
	// PlanID is the hash of what defines the plan (PlanID), the same on
	// every shard and every machine; Planned is the number of runs of the
	// whole plan, all shards.
	PlanID  string `json:"plan_id,omitempty"`
	Planned int    `json:"planned,omitempty"`
	// Isolate is the engine the runs were made in (Plan.Isolate): none,
	// bwrap, podman or docker; "" in a report of an earlier harness
	// (none, or unknown: it did not record it).
	Isolate string `json:"isolate,omitempty"`
	// Mock is the scripted model's scenario the runs were made against
	// (Plan.Mock); "" for the agents' own models, and in a report of an
	// earlier harness (which did not record it).
	Mock string `json:"mock,omitempty"`
	// Permissions is every run's permission mode (Plan.Permissions,
	// harness.FullAccess when not given), and MaxTurns the agents' turn
	// limit (Plan.MaxTurns, 0 for none); Permissions is "" in a report of
	// an earlier harness (full access, or unknown: it did not record it).
	Permissions string `json:"permissions,omitempty"`
	MaxTurns    int    `json:"max_turns,omitempty"`
	// Shard is the part of the plan this report ran; nil for all of it
	// (or a merge of every shard).
	Shard *Shard `json:"shard,omitempty"`
	// Shape is the plan's shape, which tells the runs of each shard
	// (Shard.Of); set with Shard.
	Shape *Shape `json:"shape,omitempty"`
	// Missing and Duplicates are filled by Merge: runs of the plan no
	// input recorded, and runs recorded more than once (the first kept).
	Missing    []RunKey `json:"missing,omitempty"`
	Duplicates []RunKey `json:"duplicates,omitempty"`
	// Seed seeds the bootstrap intervals, so a report's numbers are
	// reproducible from its runs.
	Seed      uint64    `json:"seed"`
	Started   time.Time `json:"started"`
	WallMS    int64     `json:"wall_ms"`
	Parallel  int       `json:"parallel"`
	Cancelled bool      `json:"cancelled,omitempty"` // the bench was cancelled: some runs are cancelled or skipped
	Dir       string    `json:"dir,omitempty"`       // where the kept run trees are
	Groups    []Group   `json:"groups"`
	// TaskGroups are the groups split by task too (agent × model × task).
	TaskGroups []Group `json:"task_groups,omitempty"`
	// Comparisons pair every two groups on the runs of the same task and
	// repeat (stats.go).
	Comparisons []Comparison `json:"comparisons,omitempty"`
	Runs        []RunReport  `json:"runs"`
}

// RunReport holds the figures of one run.
type RunReport struct {
	Index         int    `json:"index"`
	Task          string `json:"task,omitempty"`
	Agent         string `json:"agent"`
	Model         string `json:"model,omitempty"`          // as asked for; "" is the agent's default
	ReportedModel string `json:"reported_model,omitempty"` // as the agent said in its session start
	Repeat        int    `json:"repeat"`
	Run           string `json:"run,omitempty"` // the run id of its events and session log
	// Status is the result's status (success, error, timeout, cancelled),
	// or skipped for a run the bench never started.
	Status string `json:"status"`
	// Reason says why a run did not succeed: the code of its fatal error
	// (idle_timeout, hard_timeout, interrupted, process_exit,
	// not_installed, …), agent_error when the agent's own terminal event
	// reported the failure, or setup when the run could not be started.
	Reason   string `json:"reason,omitempty"`
	Detail   string `json:"detail,omitempty"` // the fatal error's message
	Killed   bool   `json:"killed,omitempty"` // it took SIGKILL to end it
	ExitCode *int   `json:"exit_code,omitempty"`
	Signal   string `json:"signal,omitempty"`

	Check *CheckResult `json:"check,omitempty"`

	WallMS        int64          `json:"wall_ms"`
	FirstOutputMS *int64         `json:"first_output_ms,omitempty"` // first event from the agent after session_start
	FirstToolMS   *int64         `json:"first_tool_ms,omitempty"`   // first tool_start
	Turns         int            `json:"turns"`                     // as the agent reports them, else its assistant messages
	ToolCalls     int            `json:"tool_calls"`
	ToolsByKind   map[string]int `json:"tools_by_kind,omitempty"`
	Files         *FilesChanged  `json:"files_changed,omitempty"`
	Tokens        event.Tokens   `json:"tokens"`
	CostUSD       *float64       `json:"cost_usd,omitempty"`
	CostEstimated bool           `json:"cost_estimated,omitempty"` // priced by harness from the model registry

	Tree string `json:"tree,omitempty"` // the run's tree, when kept
	Log  string `json:"log,omitempty"`  // the session log (events file)
	// Trajectory is the run's trajectory in ATIF, beside its session log
	// (<run>.trajectory.json).
	Trajectory string `json:"trajectory,omitempty"`
	// Resumed marks a run recorded in the results directory by an
	// earlier bench of the same plan, taken as it was, not run again.
	Resumed bool   `json:"resumed,omitempty"`
	Error   string `json:"error,omitempty"`
	// Warnings say what of the task was not honoured, though the run
	// went on (a storage limit the engine cannot set, …).
	Warnings []string `json:"warnings,omitempty"`
	// Artifacts is the directory of the run's artifacts (a Harbor task's
	// /logs/artifacts and its task.toml artifacts), beside the session
	// log, or in the run's directory when kept and there is no log.
	Artifacts string `json:"artifacts,omitempty"`
}

// Succeeded reports whether the agent ended with status success.
func (r RunReport) Succeeded() bool { return r.Status == event.ResultSuccess }

// NotRun reports whether the run ended before its agent started, for a
// reason other than the bench's cancel (which skips it): its setup
// failed (the tree, the Setup hook, the sandbox or container, the task's
// environment), the agent is not installed or could not be spawned, or
// the task asks for what this machine or engine cannot give. Such a run
// says nothing about the agent: it is counted apart (Group.NotRun), in no
// rate, median or comparison. All but an unsupported one are also run
// again by a resume (they are not recorded in a results directory).
func (r RunReport) NotRun() bool {
	if r.Status == StatusSkipped {
		return false
	}
	switch r.Reason {
	case ReasonSetup, ReasonUnsupported, event.ErrNotInstalled, event.ErrSpawnFailed:
		return true
	}
	return false
}

// cutShort reports whether the run is not over: its status is
// cancelled (the bench's cancel interrupted its agent), or its check was
// cut short or kept from starting by that cancel (no verdict, whatever
// the agent's status). Such a run is not recorded in a results
// directory (final) and runs again on resume; a merge lists it missing.
func (r RunReport) cutShort() bool {
	return r.Status == event.ResultCancelled || r.Check.cancelled()
}

// ran reports whether the agent ran to the end: the run is neither
// skipped, not run, nor cut short. Only such runs make the figures of a
// group, so a bench's own report counts what a merge of it counts.
func (r RunReport) ran() bool { return r.Status != StatusSkipped && !r.NotRun() && !r.cutShort() }

// Group aggregates the runs of one agent and model (across tasks and
// repeats). Rates count runs whose agent ran (neither skipped, not run
// nor cut short); the pass rate counts runs that had a check and got a
// verdict.
type Group struct {
	Agent         string   `json:"agent"`
	Model         string   `json:"model,omitempty"`
	Task          string   `json:"task,omitempty"`           // in Report.TaskGroups only
	ReportedModel string   `json:"reported_model,omitempty"` // the model every run reported, when they agree
	Runs          int      `json:"runs"`                     // whose agent ran
	Skipped       int      `json:"skipped,omitempty"`        // the bench was cancelled before they started
	Cancelled     int      `json:"cancelled,omitempty"`      // RunReport.cutShort: the bench's cancel cut them short; not in Runs nor in any rate
	NotRun        int      `json:"not_run,omitempty"`        // RunReport.NotRun: not in Runs nor in any rate
	Succeeded     int      `json:"succeeded"`
	SuccessRate   float64  `json:"success_rate"` // 0 when no agent ran
	Checked       int      `json:"checked"`
	Passed        int      `json:"passed"`
	PassRate      *float64 `json:"pass_rate,omitempty"` // nil when no run was checked
	WallP50MS     int64    `json:"wall_p50_ms"`
	WallP90MS     int64    `json:"wall_p90_ms"`
	InputP50      int64    `json:"input_tokens_p50"`
	OutputP50     int64    `json:"output_tokens_p50"`
	CostRuns      int      `json:"cost_runs"` // runs that reported (or were given) a cost
	CostP50USD    *float64 `json:"cost_p50_usd,omitempty"`
	CostTotalUSD  *float64 `json:"cost_total_usd,omitempty"`
	CostEstimated bool     `json:"cost_estimated,omitempty"` // some of the costs are estimates

	// Wilson 95 % intervals of the rates (0 and 1 when there is no run).
	SuccessCILow  float64  `json:"success_ci_low"`
	SuccessCIHigh float64  `json:"success_ci_high"`
	PassCILow     *float64 `json:"pass_ci_low,omitempty"`
	PassCIHigh    *float64 `json:"pass_ci_high,omitempty"`
	// Bootstrap 95 % intervals of the medians (Report.Seed). Tokens are
	// input + output per run.
	WallP50CILowMS   int64    `json:"wall_p50_ci_low_ms"`
	WallP50CIHighMS  int64    `json:"wall_p50_ci_high_ms"`
	TokensP50        int64    `json:"tokens_p50"`
	TokensP50CILow   int64    `json:"tokens_p50_ci_low"`
	TokensP50CIHigh  int64    `json:"tokens_p50_ci_high"`
	CostP50CILowUSD  *float64 `json:"cost_p50_ci_low_usd,omitempty"`
	CostP50CIHighUSD *float64 `json:"cost_p50_ci_high_usd,omitempty"`
}

// Label names the group as the page and the API list it: the agent, and
// its model when one was asked for ("claude · sonnet").
func (g Group) Label() string {
	if g.Model == "" {
		return g.Agent
	}
	return g.Agent + " · " + g.Model
}

func aggregate(agent, model string, runs []RunReport) Group {
	g := Group{Agent: agent, Model: model}
	var walls, ins, outs []int64
	var costs []float64
	models := map[string]bool{}
	for _, r := range runs {
		if r.ReportedModel != "" {
			models[r.ReportedModel] = true
		}
		switch {
		case r.Status == StatusSkipped:
			g.Skipped++
			continue
		case r.NotRun():
			g.NotRun++
			continue
		case r.cutShort():
			g.Cancelled++
			continue
		}
		g.Runs++
		if r.Succeeded() {
			g.Succeeded++
		}
		// A check that timed out failed; one that was cancelled or could
		// not start gave no verdict.
		if c := r.Check; c != nil && (c.Error == "" || c.TimedOut) {
			g.Checked++
			if r.Check.Passed {
				g.Passed++
			}
		}
		walls = append(walls, r.WallMS)
		ins = append(ins, r.Tokens.Input)
		outs = append(outs, r.Tokens.Output)
		if r.CostUSD != nil {
			costs = append(costs, *r.CostUSD)
			g.CostEstimated = g.CostEstimated || r.CostEstimated
		}
	}
	if len(models) == 1 {
		for m := range models {
			g.ReportedModel = m
		}
	}
	if g.Runs > 0 {
		g.SuccessRate = float64(g.Succeeded) / float64(g.Runs)
	}
	if g.Checked > 0 {
		rate := float64(g.Passed) / float64(g.Checked)
		g.PassRate = &rate
	}
	g.WallP50MS, g.WallP90MS = Percentile(walls, 50), Percentile(walls, 90)
	g.InputP50, g.OutputP50 = Percentile(ins, 50), Percentile(outs, 50)
	g.CostRuns = len(costs)
	if len(costs) > 0 {
		med := Percentile(costs, 50)
		var total float64
		for _, c := range costs {
			total += c
		}
		g.CostP50USD, g.CostTotalUSD = &med, &total
	}
	return g
}

// Percentile returns the p-th percentile of xs by the nearest-rank
// method: sort ascending, take the value of rank ceil(p/100 × n) (from 1),
// so the result is always one of the values, the median of an even count
// is the lower middle one, and p90 of fewer than 10 values is the
// largest. It returns zero for no values.
func Percentile[T int64 | float64](xs []T, p float64) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}
