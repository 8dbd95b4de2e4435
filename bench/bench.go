// Package bench runs coding agents side by side on the same tasks and
// compares them: every (task, agent, model, repeat) is one run, supervised
// exactly like a single harness run, in its own fresh copy of the task's
// starting tree, optionally followed by a verifier command whose exit
// status is the run's pass or fail. Run returns a Report with the figures
// of every run and per agent/model aggregates; report.go renders it.
//
// Nothing is printed: progress goes to Options.Progress, each run's stream
// to the Observer that Options.Setup returns.
package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/privtmp"
	"github.com/agentharness/harness/logger"
)

// Task is one thing to ask every agent.
type Task struct {
	Name   string // shown in reports; "" is fine for a single prompt
	Prompt string
	// Tree is the starting tree copied for every run (a checkout of HEAD
	// in a repository of the run's own that borrows the source's objects,
	// when it is inside a git repository, else a plain copy); "" is an
	// empty directory.
	Tree string
	// Check is the task's own verifier, run with sh -c in the run's tree
	// after the agent ends; "" falls back to Plan.Check.
	Check string
	// Harbor is set for a task in Harbor's format (harbor.go): its
	// verifier is tests/test.sh and its reward, not Check.
	Harbor *HarborTask
}

// Plan is what to run: every task × agent × model, Repeat times.
type Plan struct {
	Tasks  []Task
	Agents []string // agent ids or aliases
	// Models are run with every agent; empty means each agent's default
	// (one run per agent with Model "").
	Models []string
	Repeat int // 0 means 1
	// Check is the verifier of tasks that have none of their own.
	Check string
	// Isolate is the engine Harbor tasks' runs are sandboxed in:
	// isolate.None (or ""), Bwrap, Podman or Docker (harbor_run.go). It
	// is part of the plan's id: the same runs under two engines are two
	// plans, never resumed or merged into one report.
	Isolate string
	// Mock is the scenario of the scripted model the runs are made
	// against (--mock), "" for the agents' own models. bench does not
	// attach it (the caller's Setup does); it is part of the plan's id,
	// as Isolate is: a scripted model's runs are never resumed or merged
	// as real ones.
	Mock string
	// Permissions is every run's permission mode (harness.Task's):
	// harness.FullAccess (or "") or harness.ReadOnly. MaxTurns limits
	// every agent's turns where it can; 0 is no limit. Both change what
	// the agents may do, so both are part of the plan's id (each only
	// when not its default, so the ids of other plans stay as they were).
	// A Setup that sets them on its Task overrides them.
	Permissions string
	MaxTurns    int
}

// Spec identifies one run of a plan.
type Spec struct {
	Index  int // position in the plan, from 0; reports keep this order
	Task   Task
	Agent  string
	Model  string
	Repeat int // from 1
}

// Specs expands the plan in a stable order: task, then model, then
// repeat, then agent, so that runs of different agents on the same task
// are started next to each other.
func (p Plan) Specs() []Spec {
	models := p.Models
	if len(models) == 0 {
		models = []string{""}
	}
	rep := max(p.Repeat, 1)
	var out []Spec
	for _, t := range p.Tasks {
		for _, m := range models {
			for r := 1; r <= rep; r++ {
				for _, a := range p.Agents {
					out = append(out, Spec{Index: len(out), Task: t, Agent: a, Model: m, Repeat: r})
				}
			}
		}
	}
	return out
}

// Options configure Run. The zero value runs with NumCPU runs at a time,
// in a temporary directory, removing every tree afterwards.
type Options struct {
	// Parallel bounds the runs in progress at once (agent and check); 0
	// means runtime.NumCPU().
	Parallel int
	// Dir holds the run trees; a fresh temporary directory when "".
	Dir string
	// Keep leaves every run tree (and Dir) in place for inspection.
	Keep bool
	// CheckTimeout bounds each verifier; 0 means 10 minutes.
	CheckTimeout time.Duration
	// Settings start every run (harness.Settings.Start: the
	// configuration's defaults, binaries, session logs, prices); nil is
	// the zero Settings.
	Settings *harness.Settings
	// Setup is called once per run, on the run's goroutine, right before
	// it starts, with the task built from the spec (Agent, Prompt, Model,
	// Cwd set). It returns the task to start — the place where the caller
	// sets what its flags say (budgets, binaries, the mock model) — and an
	// observer of the run (a merged event file, the mock's stop; its Close
	// is called before the run's tree is removed). An error fails that
	// run only. nil starts the task as is.
	Setup func(s Spec, t harness.Task) (harness.Task, harness.Observer, error)
	// Progress receives a snapshot of a run at each change of state and
	// each tool call it starts. Calls are serialized.
	Progress func(Progress)
	// Interrupt, when set, interrupts the bench at each value received:
	// the first skips the queued runs and interrupts every run in
	// progress, as cancelling ctx does; each later one interrupts them
	// again, and harness.Run.Interrupt kills at once when called twice
	// within 2 s — the second Ctrl-C of a terminal user.
	Interrupt <-chan struct{}
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Shard runs only that part of the plan (Shard.Of); the zero value
	// runs all of it. Reports keep every run's index in the whole plan.
	Shard Shard
	// Results, when not "", is a directory where each run's row (and a
	// copy of its session log) is written as soon as the run ends; runs
	// already recorded there for the same plan are not run again (see
	// OpenResults). Benches sharing the directory run each run once
	// between them: each claims a run before running it (results.go).
	Results string
	// Seed seeds the report's bootstrap intervals; 0 means DefaultSeed.
	Seed uint64
	// KeepTimeout keeps the budgets' hard timeout for Harbor tasks too;
	// otherwise a task's [agent].timeout_sec is its runs' hard timeout.
	KeepTimeout bool
	// Trace, when set, traces the bench (the OpenTelemetry export): it
	// is called with nil when the bench starts, and with a row's spec
	// when that row starts, and returns ctx carrying the new span as the
	// parent of what starts under it (harness.ContextWithTraceparent: the
	// plan's span is the rows' parent, a row's span its run's) and the
	// span's end, called with the row's report (nil for the plan's).
	Trace func(ctx context.Context, s *Spec) (context.Context, func(*RunReport))
	// Hide are files and directories of the caller's own that no run
	// may read, such as its report's and events' files (the merged
	// stream of every run): a bwrap sandbox shows them empty, as it does
	// the bench's run directories, Results, the session logs and the
	// stored reports. A file must exist when the runs start (Accepted
	// makes them) to be hidden.
	Hide []string
	// Accepted, when set, is called once the plan, its engine, the shard
	// and the results directory are accepted, before any run starts:
	// where the caller opens the files the bench writes (its report, its
	// events), so that a bench refused leaves them as they were. Its
	// error ends the bench and is returned as is.
	Accepted func() error
}

// State is where a run is.
type State string

// The states of a run, in order; a run ends in StateDone or StateSkipped.
const (
	StateQueued   State = "queued"
	StatePrepare  State = "preparing"
	StateRunning  State = "running"
	StateChecking State = "checking"
	StateDone     State = "done"
	StateSkipped  State = "skipped"
)

// Progress is a snapshot of one run.
type Progress struct {
	Spec    Spec
	State   State
	Elapsed time.Duration // since the agent started; 0 before
	Tools   int           // tool calls started so far
	Status  string        // the run's status once done
	Passed  *bool         // the check's verdict once done, when there is one
}

// Run runs the plan and returns its report. Cancelling ctx (or
// Options.Interrupt) interrupts every run in progress (SIGINT, then
// SIGTERM, then SIGKILL after the kill grace, as for a single run), ends
// the checks in progress and skips the queued runs; the report is still complete,
// with those runs marked cancelled or skipped, and Report.Cancelled set.
// The error is only for a plan that cannot run at all (no task, no
// agent, an unknown agent, a missing tree, a run directory that cannot be
// made); failed runs are figures, not errors.
func Run(ctx context.Context, p Plan, o Options) (*Report, error) {
	specs, err := validate(p)
	if err != nil {
		return nil, err
	}
	if err := checkIsolate(p, p.Isolate); err != nil {
		return nil, err
	}
	if err := checkAgentTimeouts(p, o.KeepTimeout); err != nil {
		return nil, err
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	parallel := o.Parallel
	if parallel <= 0 {
		parallel = runtime.NumCPU()
	}
	dir, cleanup, err := runDir(o.Dir, o.Keep)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.Trace != nil {
		var end func(*RunReport)
		cctx, end = o.Trace(cctx, nil)
		defer end(nil)
	}
	cond := p.conditions()
	b := &bencher{opts: o, engine: cond.engine, cond: cond, now: now, dir: dir, cancel: cancel, live: map[int]*harness.Run{}}
	if !o.Shard.valid() {
		return nil, fmt.Errorf("bench: shard %s: want 0 <= I < N", o.Shard)
	}
	all := specs
	specs = o.Shard.Of(all, p.Shape())
	var results *Results
	if o.Results != "" {
		if results, err = openResults(o.Results, all, cond); err != nil {
			return nil, err
		}
	}
	if o.Accepted != nil {
		if err := o.Accepted(); err != nil {
			return nil, err
		}
	}
	rep := &Report{Started: now(), Parallel: parallel, Runs: make([]RunReport, len(specs)),
		PlanID: specsID(all, cond), Planned: len(all), Seed: o.Seed, Isolate: b.engine, Mock: p.Mock,
		Permissions: cond.permissions, MaxTurns: cond.maxTurns}
	if o.Shard.Count > 1 {
		sh, shape := o.Shard, p.Shape()
		rep.Shard, rep.Shape = &sh, &shape
	}
	if results != nil {
		results.shard = rep.Shard
	}
	if o.Keep {
		rep.Dir = dir
	}
	finished := make(chan struct{})
	defer close(finished)
	go b.watch(ctx, finished)
	// Parallel workers take the runs in plan order; runs recorded by an
	// earlier bench in the results directory are taken as they are.
	type job struct {
		pos int
		s   Spec
	}
	queue := make(chan job, len(specs))
	for pos, s := range specs {
		if rr, ok := results.done(s); ok {
			rep.Runs[pos] = rr
			b.progress(Progress{Spec: s, State: StateDone, Status: rr.Status, Passed: passed(rr.Check),
				Elapsed: time.Duration(rr.WallMS) * time.Millisecond, Tools: rr.ToolCalls})
			continue
		}
		b.progress(Progress{Spec: s, State: StateQueued})
		queue <- job{pos, s}
	}
	close(queue)
	// A run another bench on the same results directory holds is put
	// off; once the queue is empty, the put-off runs wait for their
	// claims (Results.claim).
	var (
		dmu      sync.Mutex
		deferred []job
	)
	work := func(j job, wait bool) {
		var release func()
		if cctx.Err() == nil { // else skipped below, claimed or not
			var rr RunReport
			var done bool
			var err error
			release, rr, done, err = results.claim(cctx, j.s, wait)
			switch {
			case err != nil:
				rep.Runs[j.pos] = RunReport{Index: j.s.Index, Task: j.s.Task.Name, Agent: j.s.Agent, Model: j.s.Model,
					Repeat: j.s.Repeat, Status: event.ResultError, Reason: ReasonSetup, Error: err.Error()}
				b.progress(Progress{Spec: j.s, State: StateDone, Status: event.ResultError})
				return
			case done:
				rep.Runs[j.pos] = rr
				b.progress(Progress{Spec: j.s, State: StateDone, Status: rr.Status, Passed: passed(rr.Check),
					Elapsed: time.Duration(rr.WallMS) * time.Millisecond, Tools: rr.ToolCalls})
				return
			case release == nil && !wait:
				dmu.Lock()
				deferred = append(deferred, j)
				dmu.Unlock()
				return
			}
		}
		rr := b.one(cctx, j.s)
		results.record(&rr)
		if release != nil {
			release()
		}
		rep.Runs[j.pos] = rr
	}
	var wg sync.WaitGroup
	for range min(parallel, len(queue)) {
		wg.Go(func() {
			for j := range queue {
				work(j, false)
			}
		})
	}
	wg.Wait()
	later := make(chan job, len(deferred))
	for _, j := range deferred {
		later <- j
	}
	close(later)
	for range min(parallel, len(later)) {
		wg.Go(func() {
			for j := range later {
				work(j, true)
			}
		})
	}
	wg.Wait()
	rep.WallMS = now().Sub(rep.Started).Milliseconds()
	rep.Cancelled = cctx.Err() != nil
	Summarize(rep)
	return rep, nil
}

// validate checks the plan and resolves agent aliases to their ids.
func validate(p Plan) ([]Spec, error) {
	if len(p.Tasks) == 0 {
		return nil, errors.New("bench: no task")
	}
	if len(p.Agents) == 0 {
		return nil, errors.New("bench: no agent")
	}
	if p.Repeat < 0 {
		return nil, fmt.Errorf("bench: repeat %d: want 1 or more", p.Repeat)
	}
	if p.Permissions != "" && p.Permissions != harness.FullAccess && p.Permissions != harness.ReadOnly {
		return nil, fmt.Errorf("bench: permissions %q: want %s or %s", p.Permissions, harness.FullAccess, harness.ReadOnly)
	}
	if p.MaxTurns < 0 {
		return nil, fmt.Errorf("bench: max turns %d: want 0 (no limit) or more", p.MaxTurns)
	}
	if err := p.CheckSize(); err != nil {
		return nil, err
	}
	p.Tasks = slices.Clone(p.Tasks)
	agents := make([]string, len(p.Agents))
	seen := map[string]bool{}
	for i, name := range p.Agents {
		a, err := harness.Adapter(name)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		if seen[a.Name()] {
			return nil, fmt.Errorf("bench: agent %q given twice", a.Name())
		}
		seen[a.Name()], agents[i] = true, a.Name()
	}
	p.Agents = agents
	for i, m := range p.Models {
		// Two runs of one agent, model, task and repeat would be one
		// pair of the comparison, the second overwriting the first.
		if slices.Contains(p.Models[:i], m) {
			return nil, fmt.Errorf("bench: model %q given twice", m)
		}
	}
	for i, t := range p.Tasks {
		if t.Prompt == "" {
			return nil, fmt.Errorf("bench: task %q has no prompt", t.Name)
		}
		if t.Tree != "" {
			if err := isDir(t.Tree); err != nil {
				return nil, fmt.Errorf("bench: task %q: tree: %w", t.Name, err)
			}
		}
		if t.Check == "" && t.Harbor == nil {
			p.Tasks[i].Check = p.Check
		}
	}
	return p.Specs(), nil
}

type bencher struct {
	opts   Options
	engine string     // Plan.Isolate, isolate.None when ""
	cond   conditions // of every run: its permissions and turn limit are set before Setup
	now    func() time.Time
	dir    string
	pmu    sync.Mutex
	cancel context.CancelFunc // of the bench's context: skips queued runs, ends checks

	mu     sync.Mutex
	live   map[int]*harness.Run  // runs in progress, by spec index
	images map[string]*taskImage // Harbor tasks' images, by task directory
	// noStorage is why the engine could not limit a container's storage
	// (storage_mb), once seen.
	noStorage string
}

// watch turns ctx's end and each Options.Interrupt into interrupts of the
// runs in progress, until finished is closed. Runs are started with a
// context that is never cancelled, so that they are interrupted exactly
// once per request and a second request within 2 s kills them.
func (b *bencher) watch(ctx context.Context, finished <-chan struct{}) {
	done, first := ctx.Done(), true
	for {
		select {
		case <-finished:
			return
		case <-done:
			done = nil
			if first {
				first = false
				b.interruptAll()
			}
		case <-b.opts.Interrupt:
			first = false
			b.interruptAll()
		}
	}
}

func (b *bencher) interruptAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cancel() // under mu: a run registering after this sees it
	for _, r := range b.live {
		r.Interrupt()
	}
}

// register records a started run; it is interrupted at once when the
// bench already is.
func (b *bencher) register(ctx context.Context, i int, r *harness.Run) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.live[i] = r
	if ctx.Err() != nil {
		r.Interrupt()
	}
}

func (b *bencher) unregister(i int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.live, i)
}

func (b *bencher) progress(p Progress) {
	if b.opts.Progress == nil {
		return
	}
	b.pmu.Lock()
	defer b.pmu.Unlock()
	b.opts.Progress(p)
}

// one runs a spec, unless ctx is done: then it is skipped.
func (b *bencher) one(ctx context.Context, s Spec) (rr RunReport) {
	rr = RunReport{Index: s.Index, Task: s.Task.Name, Agent: s.Agent, Model: s.Model, Repeat: s.Repeat, Status: StatusSkipped}
	if b.opts.Trace != nil {
		var end func(*RunReport)
		ctx, end = b.opts.Trace(ctx, &s)
		defer func() { end(&rr) }()
	}
	if ctx.Err() != nil {
		b.progress(Progress{Spec: s, State: StateSkipped, Status: StatusSkipped})
		return rr
	}
	b.progress(Progress{Spec: s, State: StatePrepare})
	rr = b.execute(ctx, s, rr)
	b.progress(Progress{Spec: s, State: StateDone, Status: rr.Status, Passed: passed(rr.Check),
		Elapsed: time.Duration(rr.WallMS) * time.Millisecond, Tools: rr.ToolCalls})
	return rr
}

// runTmp makes a temporary directory for a run on the host (no sandbox
// or container, whose own /tmp goes with it) and returns the variables
// that point the agent and the check at it, set before anything of the
// task's or --mock's (which may point elsewhere), and what removes it
// once the run is over: what they leave there does not pile up in the
// host's (OpenCode writes a 5.4 MB library there at every start and never
// removes it), nor does what a bench killed with SIGKILL left (privtmp).
// Under the host's temporary directory, for a short path: a socket's path
// must fit in 108 bytes.
func runTmp() (env []string, remove func(), err error) {
	d, err := privtmp.Make(os.TempDir(), runTmpPrefix)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: %w", err)
	}
	return d.Env(), func() { d.Remove() }, nil
}

// passed is the check's verdict for Progress: none without a check, or
// when the bench's cancel cut it short.
func passed(c *CheckResult) *bool {
	if c == nil || c.cancelled() {
		return nil
	}
	v := c.Passed
	return &v
}

// execute makes the run's tree, runs the agent, measures the tree and
// runs the check.
func (b *bencher) execute(ctx context.Context, s Spec, in RunReport) (rr RunReport) {
	rr = in
	if s.Task.Harbor != nil {
		return b.harbor(ctx, s, rr)
	}
	tr, err := makeTree(ctx, s.Task.Tree, b.dir, s)
	if err != nil {
		if ctx.Err() == nil { // else cancelled while copying: still skipped
			rr.Status, rr.Reason, rr.Error = event.ResultError, ReasonSetup, err.Error()
		}
		return rr
	}
	defer func() {
		if !b.opts.Keep {
			if err := tr.remove(); err != nil && rr.Error == "" {
				rr.Error = "removing the run tree: " + err.Error()
			}
		}
	}()
	if b.opts.Keep {
		rr.Tree = tr.dir
	}
	tmpEnv, removeTmp, err := runTmp()
	if err != nil {
		rr.Status, rr.Reason, rr.Error = event.ResultError, ReasonSetup, err.Error()
		return rr
	}
	defer removeTmp()
	t := harness.Task{Agent: s.Agent, Prompt: s.Task.Prompt, Model: s.Model, Cwd: tr.cwd}
	var check func() *CheckResult
	if s.Task.Check != "" {
		check = func() *CheckResult { return runCheckEnv(ctx, s.Task.Check, tr.cwd, b.opts.CheckTimeout, tmpEnv) }
	}
	b.drive(ctx, s, t, tr, &rr, tmpEnv, nil, check)
	return rr
}

// drive runs the agent of a run whose tree is ready: Setup, then the
// run's temporary directory (tmpEnv, runTmp's; nil in a sandbox), then
// adjust (when given: what the task itself says of the run), the agent,
// the tree's changes, and check (when given) once the agent ran.
func (b *bencher) drive(ctx context.Context, s Spec, t harness.Task, tr *tree, rr *RunReport,
	tmpEnv []string, adjust func(*harness.Task) error, check func() *CheckResult) {
	var obs harness.Observer
	var err error
	// The plan's, which its id hashes; before Setup, which may override.
	t.Permissions, t.MaxTurns = b.cond.permissions, b.cond.maxTurns
	if b.opts.Setup != nil {
		t, obs, err = b.opts.Setup(s, t)
	}
	// Set after Setup, which may replace Env and SetupEnv (the CLI's sets
	// --env), and under what it set (--mock's wiring) and the task's own
	// env tables. SetupEnv: a path of harness's own is no secret, and the
	// log shows it.
	t.SetupEnv = append(slices.Clone(tmpEnv), t.SetupEnv...)
	// The caller's env as Setup gave it: redacted from the check's output
	// even where the task's own env takes its place for the agent.
	given := slices.Clone(t.Env)
	if err == nil && adjust != nil {
		err = adjust(&t)
	}
	if err != nil {
		// The run ends before its agent starts: so does its observer
		// (--mock's scripted model and its throwaway HOME).
		if obs.Close != nil {
			obs.Close(nil)
		}
		rr.Status, rr.Reason, rr.Error = event.ResultError, ReasonSetup, err.Error()
		return
	}
	if t.Run == "" {
		t.Run = event.NewRunID()
	}
	rr.Run = t.Run
	redact := b.agent(ctx, s, t, obs, rr)
	if rr.Status == StatusSkipped || rr.Reason == ReasonSetup {
		return
	}
	// Measured even for an interrupted run: what it did is still a figure.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if fc, err := tr.changes(dctx); err == nil {
		rr.Files = fc
	} else if rr.Error == "" {
		rr.Error = "files changed: " + err.Error()
	}
	// A check is about the agent's work: none when the agent never ran.
	switch {
	case check == nil || rr.NotRun():
	case ctx.Err() != nil && rr.Status != event.ResultCancelled:
		// The agent ended on its own and the bench's cancel came before
		// its check: no verdict, so the run is not over (final).
		command := s.Task.Check
		if s.Task.Harbor != nil {
			command = verifierCommand
		}
		rr.Check = &CheckResult{Command: command, ExitCode: -1, Error: checkCancelled}
	case ctx.Err() == nil:
		b.progress(Progress{Spec: s, State: StateChecking, Status: rr.Status, Tools: rr.ToolCalls,
			Elapsed: time.Duration(rr.WallMS) * time.Millisecond})
		rr.Check = check()
		// The report keeps it, and serve shows it: what the log redacts,
		// the check's output (run in harness's own environment) must not
		// carry either.
		rr.Check.Output = redact.WithEnv(given).RedactString(rr.Check.Output)
	}
}

// agent starts and waits for the run, folding its events into rr. It
// returns the redactor of the run's session log (harness.Run.Redactor:
// the configuration's env too), which what the report shows of the run
// goes through; without a run, one of t's Env.
func (b *bencher) agent(ctx context.Context, s Spec, t harness.Task, obs harness.Observer, rr *RunReport) *logger.Redactor {
	redact := logger.DefaultRedactor().WithEnv(t.Env)
	f := newFigures()
	start := b.now()
	opts := harness.Options{
		Observers: []harness.Observer{obs}, Now: b.opts.Now,
		OnEvent: func(ev event.Event) {
			f.add(ev, b.now().Sub(start))
			if ev.Type == event.TypeToolStart { // counted by the run's tally (f.add)
				b.progress(Progress{Spec: s, State: StateRunning, Elapsed: b.now().Sub(start), Tools: f.tally.ToolCalls})
			}
		},
	}
	if ctx.Err() != nil {
		rr.Status = StatusSkipped
		if obs.Close != nil {
			obs.Close(nil)
		}
		return redact
	}
	b.progress(Progress{Spec: s, State: StateRunning}) // before any tool's progress
	settings := b.opts.Settings
	if settings == nil {
		settings = &harness.Settings{}
	}
	run, err := settings.Start(context.WithoutCancel(ctx), t, opts)
	if err != nil { // Start closed the observer (harness.Observer)
		rr.Status, rr.Reason, rr.Error = event.ResultError, ReasonSetup, err.Error()
		return redact
	}
	rr.Log, _ = run.SessionLog()
	b.register(ctx, s.Index, run)
	res, werr := run.Wait()
	b.unregister(s.Index)
	rr.WallMS = b.now().Sub(start).Milliseconds()
	f.fill(rr, res)
	// The fatal error's message is the agent's words, from the stream: the
	// report keeps it, and serve shows it, redacted as the log has it.
	redact = run.Redactor()
	rr.Detail = redact.RedactString(rr.Detail)
	if werr != nil && rr.Reason == "" {
		rr.Reason = werr.Error()
	}
	writeTrajectory(rr, t, redact)
	return redact
}
