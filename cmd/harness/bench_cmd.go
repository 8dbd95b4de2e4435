package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/ansi"
	"github.com/agentharness/harness/internal/plural"
	"github.com/agentharness/harness/internal/syncio"
)

// benchCmd runs agents side by side on the same tasks and reports how
// they did. Agents, budgets, permissions and binaries are resolved as for
// 'harness run'; every run is supervised the same way and, unless
// --no-log, gets its own session log.
//
// Exit status: 0 when every run succeeded and passed its check (or
// --exit-zero), 1 when some did not (the report says which), 130 when
// cancelled (the partial report is still written), 2 for bad input.
// Sub-commands (compare, merge, k8s-job, prune) are in bench_*_cmd.go.
type benchCmd struct {
	Agents       []string      `help:"Agents to compare, comma-separated (${agents}, or aliases)." sep:","`
	Models       []string      `help:"Models to run every agent with, comma-separated (default: each agent's own)." sep:","`
	Prompt       string        `short:"p" help:"The task, one prompt for every agent."`
	PromptFile   string        `help:"Read the task from this file." type:"existingfile"`
	Tasks        string        `help:"A directory of tasks: NAME.toml files, NAME/ folders (prompt.md, tree/, check.sh) or Harbor tasks (instruction.md, task.toml, tests/test.sh); or one Harbor task." type:"existingdir"`
	Repeat       int           `help:"Runs per agent, model and task." default:"1"`
	Parallel     *int          `help:"Runs at once (default: bench.parallel when configured, else the number of cores)."`
	Workdir      string        `help:"Starting tree of every run: a repository of its own checked out at HEAD when it is a repository's top level, else a copy (default: the current directory for -p; with --tasks, for tasks without a tree, else an empty one)." type:"existingdir"`
	Check        string        `help:"Verifier run with sh -c in each run's tree after the agent ends; its exit status is pass/fail. A task's own check wins."`
	CheckTimeout time.Duration `help:"Time limit of one check." default:"10m"`
	Keep         bool          `help:"Keep every run's tree for inspection (its path is in the report)."`
	Report       string        `help:"Report format: table, markdown, json or csv." enum:"table,markdown,json,csv" default:"table"`
	Output       string        `short:"o" help:"Write the report to this file instead of stdout." type:"path"`
	Events       string        `help:"Write the merged NDJSON stream of all runs to this file." type:"path"`
	Progress     bool          `help:"Show live progress on stderr even when it is not a terminal."`
	NoProgress   bool          `help:"Never show live progress."`
	Permissions  *string       `help:"full-access (default) or read-only." enum:"full-access,read-only," default:"" notempty:""`
	budgetFlags  `embed:""`
	PTY          *bool    `help:"Run the agents on a pseudo-terminal."`
	MaxTurns     int      `help:"Limit the agents' turns (where supported)."`
	Binary       []string `help:"Path of the agent's executable, or AGENT=PATH pairs, comma-separated or repeated." sep:","`
	Env          []string `help:"Extra environment for the agents, KEY=VALUE (repeatable; the value may hold commas). Values are redacted from session logs." placeholder:"K=V" sep:"none"`
	NoLog        *bool    `help:"Do not write session logs."`
	Mock         string   `help:"Run every agent against the built-in scripted model with this scenario (see 'harness run --mock')." notempty:"name a scenario, or leave --mock out to run the agent's own model"`
	Isolate      string   `help:"Sandbox of each run of a Harbor task: none, bwrap, podman or docker (docs/bench.md)." enum:"none,bwrap,podman,docker" default:"none"`

	benchScaleFlags `embed:""`
	otlpFlags       `embed:""`

	Compare benchCompareCmd `cmd:"" help:"Compare two bench reports (or results directories): the regression gate. Exit 1 when NEW is worse, 2 when not comparable."`
	Merge   benchMergeCmd   `cmd:"" help:"Merge the shards of a plan (results directories or JSON reports) into one report."`
	K8sJob  benchK8sJobCmd  `cmd:"" name:"k8s-job" help:"Print a Kubernetes Indexed Job that runs this bench's plan as --shards shards."`
	Prune   benchPruneCmd   `cmd:"" help:"Remove the container images built for Harbor tasks (but those of --tasks as they are now)."`
}

// Run runs the bench. Kong runs every Run up the command path, so after
// a sub-command (which reads bench's flags: a pure branch command would
// change the CLI) it runs this one too, which then does nothing.
func (c *benchCmd) Run(e *env, ctx *kong.Context) error {
	if ctx.Selected().Target.Addr().Interface() != c {
		return nil
	}
	plan, err := c.plan(e)
	if err != nil {
		return err
	}
	shard, err := c.shard()
	if err != nil {
		return err
	}
	if c.Parallel != nil && *c.Parallel < 1 {
		return usageErrorf("bench: --parallel %d: want 1 or more", *c.Parallel)
	}
	if c.Repeat < 1 {
		return usageErrorf("bench: --repeat %d: want 1 or more", c.Repeat)
	}
	if c.CheckTimeout <= 0 {
		return usageErrorf("bench: --check-timeout %s: want a positive duration", c.CheckTimeout)
	}
	if c.Output != "" && c.Events != "" && oneFile(c.Output, c.Events) {
		return usageErrorf("bench: -o and --events are one file (%s): give each its own", c.Events)
	}
	s, err := loadSettings(e, c.Workdir)
	if err != nil {
		return err
	}
	// The configuration's permissions when --permissions is not given:
	// the plan carries the mode its runs have (and its id hashes it).
	plan.Permissions = cmp.Or(plan.Permissions, s.cfg.Permissions)
	binaries, err := c.binaries(plan.Agents)
	if err != nil {
		return err
	}
	if err := checkEnv("bench", c.Env); err != nil {
		return err
	}
	if c.Mock != "" {
		if err := c.preflightMock(plan); err != nil {
			return err
		}
	}
	// The report's and the events' files are made (emptied) only once
	// bench.Run has accepted the plan and its --results (Accepted): a
	// bench refused leaves them as they were.
	var (
		out      io.Writer
		closeOut = func() {}
		events   *syncio.Writer // whole lines from concurrent runs
	)
	defer func() { closeOut() }()
	openOutputs := func() error {
		w, closeReport, err := c.reportWriter(e)
		if err != nil {
			return err
		}
		out, closeOut = w, closeReport
		if c.Events != "" {
			f, err := createPrivate(c.Events)
			if err != nil {
				return usageErrorf("bench: --events: %v", err)
			}
			events = &syncio.Writer{W: f}
			closeOut = func() { closeReport(); f.Close() }
		}
		return nil
	}

	// *bool flags, over the configuration when given, off as on (as
	// run's): --pty=false wins over pty = true, --no-log=false over log =
	// false. The library ors a Task's PTY with the configuration's, so the
	// runs take it from there.
	boolFlagOver(&s.cfg.PTY, c.PTY)
	boolFlagOver(&s.cfg.Log, negated(c.NoLog))
	lib := s.library(e, true)
	budgets := c.over(lib.Budgets())
	stopOTLP, err := c.otlpFlags.start(e, s, lib)
	if err != nil {
		return err
	}
	defer stopOTLP()
	// What the flags say of every run; the library completes the rest
	// from the settings, as for 'harness run'.
	setup := func(sp bench.Spec, t harness.Task) (harness.Task, harness.Observer, error) {
		// Permissions and MaxTurns are the plan's, set by bench.
		// Appended: what bench set of the task's environment stays.
		t.Binary, t.Env, t.Budgets = binaries[t.Agent], append(t.Env, c.Env...), budgets
		var obs harness.Observer
		if events != nil {
			obs.OnLine = func(line []byte) { events.Write(line) }
		}
		if c.Mock != "" {
			// The configuration's protocol, set here: --mock wires the model by it (pointAt).
			t.Protocol = cmp.Or(t.Protocol, lib.RunProtocol(t.Agent))
			stop, err := attachMock(&t, c.Mock, false, nil)
			if err != nil {
				return t, obs, err
			}
			obs.Close = func(*event.Result) { stop() }
		}
		return t, obs, nil
	}
	prog := c.progress(e)
	defer prog.stop()
	intr := make(chan struct{}, 1)
	stopSignals := interruptOnSignal(intr)
	rep, err := bench.Run(context.Background(), plan, bench.Options{
		Parallel: c.parallel(s), Keep: c.Keep, CheckTimeout: c.CheckTimeout,
		Settings: lib, Setup: setup, Progress: prog.update, Interrupt: intr,
		Shard: shard, Results: c.Results, Seed: c.Seed,
		KeepTimeout: c.Timeout != nil, Trace: c.otlpFlags.benchTrace(len(plan.Specs())),
		Accepted: openOutputs,
		// No run reads the report's nor the events' file (every run's
		// stream), wherever they lie.
		Hide: slices.DeleteFunc([]string{c.Output, c.Events}, func(p string) bool { return p == "" }),
	})
	stopSignals()
	prog.stop()
	if err != nil {
		return withStatus(exitUsage, err)
	}
	c.store(e, rep)
	if err := writeReport(out, rep, c.Report); err != nil {
		return withStatus(exitAgentFailed, fmt.Errorf("bench: writing the report: %w", err))
	}
	if c.ExitZero && !rep.Cancelled {
		return nil
	}
	return benchStatus(rep)
}

// AfterApply refuses --seed 0, for bench and each of its sub-commands:
// a seed of 0 is the unset one everywhere (a report's 0 is the default
// 1; a merge's, its first report's), so it would be silently another
// seed. It also does otlpFlags' AfterApply, which this one hides.
func (c *benchCmd) AfterApply(ctx *kong.Context) error {
	if err := c.otlpFlags.AfterApply(ctx); err != nil {
		return err
	}
	for _, p := range ctx.Path {
		if p.Flag != nil && p.Flag.Name == "seed" && c.Seed == 0 {
			return usageErrorf("bench: --seed 0: want 1 or more (0 is no seed: the default, 1)")
		}
	}
	return nil
}

// refuseRunFlags refuses the flags of bench, given on the command line,
// that its sub-command sub does not read (all but keep): they shape a
// bench's runs, and sub runs none, so they would do nothing.
func refuseRunFlags(ctx *kong.Context, sub string, keep ...string) error {
	parent := ctx.Selected().Parent
	var set []string
	for _, p := range ctx.Path {
		if p.Flag == nil || !slices.Contains(parent.Flags, p.Flag) || slices.Contains(keep, p.Flag.Name) {
			continue
		}
		if name := "--" + p.Flag.Name; !slices.Contains(set, name) {
			set = append(set, name)
		}
	}
	if len(set) > 0 {
		return usageErrorf("bench: %s: %s: flags of a bench run; %s runs nothing", sub, strings.Join(set, ", "), sub)
	}
	return nil
}

// writeReport writes the report; the table and markdown, read on a
// terminal, quote what agents said (errors, model names), so they go
// through ansi.TermSafe. json and csv are data and stay as they are.
func writeReport(w io.Writer, rep *bench.Report, format string) error {
	if format != "table" && format != "markdown" {
		return rep.Write(w, format)
	}
	var b strings.Builder
	if err := rep.Write(&b, format); err != nil {
		return err
	}
	_, err := io.WriteString(w, ansi.TermSafe(b.String()))
	return err
}

// plan builds the bench plan from the flags, refusing one too large to
// run (bench.Plan.CheckSize).
func (c *benchCmd) plan(e *env) (bench.Plan, error) {
	var agents []string
	for _, a := range c.Agents {
		if a = strings.TrimSpace(a); a != "" {
			agents = append(agents, a)
		}
	}
	if len(agents) == 0 {
		return bench.Plan{}, usageErrorf("bench: no agents: give --agents claude,codex,…")
	}
	for i, name := range agents {
		a, err := harness.Adapter(name)
		if err != nil {
			return bench.Plan{}, withStatus(exitUsage, fmt.Errorf("bench: %w", err))
		}
		if slices.Contains(agents[:i], a.Name()) {
			return bench.Plan{}, usageErrorf("bench: agent %s given twice", a.Name())
		}
		agents[i] = a.Name()
	}
	if c.MaxTurns < 0 {
		return bench.Plan{}, usageErrorf("bench: --max-turns %d: want 0 (no limit) or more", c.MaxTurns)
	}
	p := bench.Plan{Agents: agents, Repeat: c.Repeat, Check: c.Check, Isolate: c.Isolate, Mock: c.Mock,
		Permissions: deref(c.Permissions), MaxTurns: c.MaxTurns}
	for _, m := range c.Models {
		if m = strings.TrimSpace(m); m != "" {
			if slices.Contains(p.Models, m) {
				return p, usageErrorf("bench: model %s given twice", m)
			}
			p.Models = append(p.Models, m)
		}
	}
	workdir := c.Workdir
	if workdir == "" {
		workdir, _ = os.Getwd()
	}
	given := 0
	for _, v := range []string{c.Prompt, c.PromptFile, c.Tasks} {
		if v != "" {
			given++
		}
	}
	switch {
	case given > 1:
		return p, usageErrorf("bench: give one of -p, --prompt-file or --tasks")
	case given == 0:
		return p, usageErrorf("bench: no task: give -p PROMPT, --prompt-file FILE or --tasks DIR")
	case c.Tasks != "":
		tasks, err := bench.LoadTasks(c.Tasks)
		if err != nil {
			return p, withStatus(exitUsage, err)
		}
		for i := range tasks {
			if tasks[i].Tree == "" && c.Workdir != "" {
				tasks[i].Tree = c.Workdir
			}
		}
		p.Tasks = tasks
	default:
		prompt, err := readPrompt(e, "bench", c.Prompt, c.PromptFile)
		if err != nil {
			return p, err
		}
		p.Tasks = []bench.Task{{Prompt: prompt, Tree: workdir}}
	}
	// Before anything expands the plan (its specs, a trace's run count):
	// --repeat 100000000 would take gigabytes first.
	if err := p.CheckSize(); err != nil {
		return p, withStatus(exitUsage, err)
	}
	return p, nil
}

// binaries parses --binary: one path for every agent, or AGENT=PATH
// pairs, one per agent (a bare path then applies to the agents without
// a pair).
func (c *benchCmd) binaries(agents []string) (map[string]string, error) {
	out := map[string]string{}
	bare := ""
	for _, b := range c.Binary {
		b = strings.TrimSpace(b)
		if b == "" {
			continue
		}
		name, path, ok := strings.Cut(b, "=")
		if !ok {
			if bare != "" {
				return nil, usageErrorf("bench: --binary %q: give one path, or AGENT=PATH pairs", b)
			}
			bare = b
			continue
		}
		a, err := harness.Adapter(name)
		if err != nil {
			return nil, withStatus(exitUsage, fmt.Errorf("bench: --binary %q: %w", b, err))
		}
		if !slices.Contains(agents, a.Name()) {
			return nil, usageErrorf("bench: --binary %q: %s is not one of --agents", b, a.Name())
		}
		if path == "" {
			return nil, usageErrorf("bench: --binary %q: no path", b)
		}
		if _, twice := out[a.Name()]; twice {
			// As a second bare path is: which one was meant is not known.
			return nil, usageErrorf("bench: --binary %q: a second path for %s", b, a.Name())
		}
		out[a.Name()] = path
	}
	if bare != "" {
		for _, a := range agents {
			if out[a] == "" {
				out[a] = bare
			}
		}
	}
	return out, nil
}

// parallel resolves the number of runs at once: the flag, else
// bench.parallel (0, its default, meaning the number of cores).
func (c *benchCmd) parallel(s *settings) int {
	if c.Parallel != nil {
		return *c.Parallel
	}
	if s.cfg.Bench.Parallel > 0 {
		return s.cfg.Bench.Parallel
	}
	return runtime.NumCPU()
}

// preflightMock rejects a --mock scenario, or an agent that cannot run on
// the scripted model, before any run starts: one usage error rather than
// one failed run per agent.
func (c *benchCmd) preflightMock(p bench.Plan) error {
	for _, agent := range p.Agents {
		t := harness.Task{Agent: agent, Prompt: p.Tasks[0].Prompt}
		stop, err := attachMock(&t, c.Mock, false, nil)
		if err != nil {
			return withStatus(exitUsage, fmt.Errorf("bench: --mock %s: %s: %w", c.Mock, agent, err))
		}
		stop()
	}
	return nil
}

// oneFile reports whether the paths a and b (absolute, as kong's path
// flags are) are one regular file, or will be: the same path, or two
// names of one file. A device (/dev/null) may take two outputs.
func oneFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	switch {
	case errA == nil && errB == nil:
		return sa.Mode().IsRegular() && os.SameFile(sa, sb)
	case a == b:
		return errors.Is(errA, os.ErrNotExist)
	}
	return false
}

func (c *benchCmd) reportWriter(e *env) (io.Writer, func(), error) {
	if c.Output == "" {
		return e.Stdout, func() {}, nil
	}
	f, err := os.Create(c.Output)
	if err != nil {
		return nil, nil, usageErrorf("bench: -o: %v", err)
	}
	return f, func() { f.Close() }, nil
}

// benchStatus maps the report to the exit status; the reasons are in
// the report, so the line on stderr only counts.
func benchStatus(r *bench.Report) error {
	if r.Cancelled {
		return withStatus(exitInterrupted, errors.New("bench: cancelled; the report is partial"))
	}
	failed, notRun := 0, 0
	for _, run := range r.Runs {
		switch {
		case run.NotRun():
			notRun++
		case !run.Succeeded() || run.Check != nil && !run.Check.Passed:
			failed++
		}
	}
	runs := plural.Count(int64(len(r.Runs)), "run")
	switch {
	case notRun > 0:
		return withStatus(exitAgentFailed, fmt.Errorf("bench: %d of %s failed or did not pass their check, %d did not run", failed, runs, notRun))
	case failed > 0:
		return withStatus(exitAgentFailed, fmt.Errorf("bench: %d of %s failed or did not pass their check", failed, runs))
	}
	return nil
}

// interruptOnSignal turns SIGINT, SIGTERM and SIGHUP into bench
// interrupts: the first skips the queued runs and interrupts those in
// progress, a second within 2 s kills them at once (as 'harness run').
func interruptOnSignal(intr chan<- struct{}) (stop func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-ch:
				select {
				case intr <- struct{}{}:
				default: // one is pending already
				}
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { signal.Stop(ch); close(done) }) }
}

// progressView shows the bench's progress on stderr: on a terminal, one
// line per run redrawn in place (cursor up, clear line) every half second
// and at each change; elsewhere (--progress on a pipe, or more runs than
// fit on a screen) one line per change of state. A nil update means off.
type progressView struct {
	mu      sync.Mutex
	w       io.Writer
	redraw  bool
	runs    []progressRun
	drawn   int
	done    chan struct{}
	stopped bool
}

type progressRun struct {
	p     bench.Progress
	since time.Time // when it started running
}

// maxRedrawLines is the most runs redrawn in place; more would scroll.
const maxRedrawLines = 30

func (c *benchCmd) progress(e *env) *progressView {
	v := &progressView{w: e.Stderr, done: make(chan struct{})}
	f, ok := e.Stderr.(*os.File)
	tty := ok && isTerminal(f)
	switch {
	case c.NoProgress || !c.Progress && !tty:
		v.stopped = true
		return v
	case tty:
		v.redraw = true
		go v.tick()
	}
	return v
}

func (v *progressView) tick() {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-v.done:
			return
		case <-t.C:
			v.mu.Lock()
			if !v.stopped {
				v.draw()
			}
			v.mu.Unlock()
		}
	}
}

// update is the bench's Progress callback.
func (v *progressView) update(p bench.Progress) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.stopped {
		return
	}
	for len(v.runs) <= p.Spec.Index {
		v.runs = append(v.runs, progressRun{})
	}
	r := &v.runs[p.Spec.Index]
	changed := r.p.State != p.State
	if p.State == bench.StateRunning && r.since.IsZero() {
		r.since = time.Now()
	}
	r.p = p
	if v.redraw && len(v.runs) <= maxRedrawLines {
		v.draw()
		return
	}
	if changed && p.State != bench.StateQueued {
		fmt.Fprintln(v.w, "bench: "+progressLine(*r))
	}
}

func (v *progressView) draw() {
	if len(v.runs) > maxRedrawLines {
		return
	}
	var b strings.Builder
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", v.drawn)
	}
	drawn := 0
	for _, r := range v.runs {
		if r.p.State == "" {
			continue // not in this shard
		}
		b.WriteString("\r\x1b[2K" + progressLine(r) + "\n")
		drawn++
	}
	v.drawn = drawn
	io.WriteString(v.w, b.String())
}

func progressLine(r progressRun) string {
	p := r.p
	name := fmt.Sprintf("#%d %s", p.Spec.Index+1, p.Spec.Agent)
	if p.Spec.Model != "" {
		name += " " + p.Spec.Model
	}
	if p.Spec.Task.Name != "" {
		name += " [" + p.Spec.Task.Name + "]"
	}
	state := string(p.State)
	elapsed := p.Elapsed
	if p.State == bench.StateRunning && !r.since.IsZero() {
		elapsed = time.Since(r.since)
	}
	if p.State == bench.StateDone {
		state = p.Status
		if p.Passed != nil {
			state += map[bool]string{true: ", check passed", false: ", check failed"}[*p.Passed]
		}
	}
	line := fmt.Sprintf("%-28s %-24s", name, state)
	if p.State == bench.StateRunning || p.State == bench.StateChecking || p.State == bench.StateDone {
		line += fmt.Sprintf(" %6.1fs  tools %d", elapsed.Seconds(), p.Tools)
	}
	return strings.TrimRight(line, " ")
}

// stop ends the view, drawing the final state once.
func (v *progressView) stop() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.stopped {
		return
	}
	v.stopped = true
	close(v.done)
	if v.redraw {
		v.draw()
	}
}
