// Package harness runs one coding-agent CLI headless under supervision and
// delivers its output as the unified event stream of docs/events.md. It is
// the composition layer: it ties an adapter (argv, env, native parsing), the
// process supervisor (spawn, watchdogs, kill) and the session log together.
// The harness command (run, bench, mcp) is a thin client of this package.
//
// A run:
//
//	run, err := harness.Start(ctx, harness.Task{Agent: "claude", Prompt: "fix the test"},
//		harness.Options{OnEvent: func(ev event.Event) { fmt.Println(ev.Type) }})
//	if err != nil { … }           // bad task: unknown agent, invalid option
//	res, err := run.Wait()       // res is the result event; err says why it was not a success
//
// A configured caller starts its runs with Settings.Start instead: the
// configuration fills what the task leaves unset (model aliases, budgets,
// binaries, environment) and each run gets its session log.
//
// Start never blocks on the agent; Wait returns when the agent and every
// process it started are gone. Nothing is printed: events go to callbacks.
package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/filediff"
	"github.com/agentharness/harness/internal/privtmp"
	"github.com/agentharness/harness/logger"
	"github.com/agentharness/harness/process"
)

// Budgets bound a run in time (docs/supervision.md). A zero duration turns a
// budget off, except KillGrace, where zero means SIGKILL at once.
type Budgets struct {
	Idle        time.Duration
	IdleWarning time.Duration // how long before Idle fires the idle warning is sent
	Hard        time.Duration
	Linger      time.Duration // after the agent's terminal event
	KillGrace   time.Duration // between SIGTERM and SIGKILL
	// Setup bounds each setup step of a session protocol that has them
	// (adapters.SetupBounded: ACP's initialize, session/new); 0: the
	// session's own default (ACP: 60 s).
	Setup time.Duration
	// Tool is the budget of a tool call by kind; nil means the spec's
	// defaults (mcp 120 s, read/search/todo 60 s, others 300 s).
	Tool func(kind event.Kind) time.Duration
}

// DefaultBudgets returns the spec's default budgets.
func DefaultBudgets() Budgets {
	return Budgets{Idle: 5 * time.Minute, IdleWarning: 30 * time.Second, Hard: 60 * time.Minute,
		Linger: 3 * time.Second, KillGrace: 5 * time.Second}
}

// Permission modes of a Task.
const (
	FullAccess = adapters.FullAccess // the agent may run tools and write files without asking (the default)
	ReadOnly   = adapters.ReadOnly   // the agent may read but not write or run commands that change things
)

// Task is one agent run to start. Only Agent and Prompt are needed; the
// zero value of every other field means the default: the agent's own for
// what it decides (model, turns, system prompt), else the Settings' (see
// Settings.Start) or, when started with Start alone, the spec's.
type Task struct {
	Agent              string // id or alias
	Prompt             string
	Model              string // a model alias (resolved by Settings) or the agent's own id
	Cwd                string // the directory the agent works in; the current one when empty
	Permissions        string // FullAccess (when empty) or ReadOnly
	Resume             string // the agent's session id to continue
	MaxTurns           int
	SystemPrompt       string
	AppendSystemPrompt string
	ExtraArgs          []string // passed verbatim after the adapter's own arguments
	NoPartial          bool     // no partial-message streaming (deltas) where a flag turns it on

	Binary     string   // the agent's executable; searched for when empty
	SearchDirs []string // extra directories searched before PATH (e.g. the pinned installs)
	// Env is KEY=VALUE pairs added last, over the adapter's own; redacted
	// from session logs by value. They are passed as given, even a name
	// config.HarnessSecret matches: the caller hands them to the agent.
	Env []string
	// SetupEnv is KEY=VALUE pairs the caller's own tooling adds (the
	// scripted model's wiring: its URL, dummy keys, a throwaway HOME),
	// applied like Env and under it. Its values are not the user's: they
	// are not redacted from session logs by value.
	SetupEnv []string
	BaseEnv  []string // the environment to start from; os.Environ() when nil. harness's own secrets (config.HarnessSecret) are always removed
	PTY      bool
	Raw      bool     // emit native events
	MaxLine  int      // stdout line cap; 0 = 16 MiB
	Budgets  *Budgets // nil: the Settings' budgets, or DefaultBudgets
	Run      string   // run id; a fresh one when empty
	// Protocol is how the agent is driven: "" (or "cli") its headless CLI
	// mode, "acp" the Agent Client Protocol (docs/acp.md).
	Protocol string
	// Command starts an agent of Protocol other than cli that harness has
	// no adapter for (Agent is then any name), or a known agent with
	// another command; Command[0] is the binary.
	Command []string
	// Sandbox, when set, runs the agent inside an isolation (bench
	// --isolate bwrap): Cwd stays the directory on the host.
	Sandbox *Sandbox

	binaryFrom string // where Binary came from, when not the task's own: a not-installed error names it
}

// Sandbox is how an agent is started inside an isolation: Prefix (the
// sandbox's own command line, ending where the agent's begins) is put
// before the agent's argv, and the agent is told that it works in Cwd,
// the path at which the sandbox shows it Task.Cwd (its adapter's working
// directory flag and PWD get Cwd).
type Sandbox struct {
	Cwd    string
	Prefix []string
	// Wrap, when set, is given the agent's whole environment (KEY=VALUE)
	// and returns the prefix instead of Prefix: a container's exec names
	// the variables it carries in (bench --isolate podman).
	Wrap func(env []string) []string
}

// adapterTask is what the adapter needs of t to build its command line.
// TestAdapterTaskCarriesEveryField fails when a field of either Task is
// not carried here nor listed there as staying behind.
func (t Task) adapterTask() adapters.Task {
	return adapters.Task{Prompt: t.Prompt, Model: t.Model, Cwd: t.Cwd, Permissions: t.Permissions,
		Resume: t.Resume, MaxTurns: t.MaxTurns, SystemPrompt: t.SystemPrompt,
		AppendSystemPrompt: t.AppendSystemPrompt, ExtraArgs: t.ExtraArgs, NoPartial: t.NoPartial}
}

// Options are the callbacks of a run. Callbacks are called one at a time,
// in stream order, and must not block for long: the agent's output waits.
// The supervision does not: a run whose callbacks block (a stdout nobody
// reads) is still ended at its budgets and interrupted at once, and the
// events wait for the callbacks, none lost (docs/supervision.md).
type Options struct {
	// OnEvent receives every event.
	OnEvent func(event.Event)
	// OnLine receives every event encoded as one NDJSON line (with its
	// newline), for writers; the slice is only valid during the call.
	OnLine func(line []byte)
	// OnNative receives every native line the agent printed (stream is
	// event.StreamStdout or event.StreamStderr), for session logs.
	OnNative func(stream string, line []byte)
	// Flush, if set, is called whenever no further event is imminent:
	// before the harness waits for the agent's next output, after events
	// it emits on its own (watchdog warnings, the end of the run). A
	// writer may buffer what OnLine gives it and write it out here: every
	// event still reaches it as soon as it exists, and a burst of lines
	// costs one write instead of one per event.
	Flush func()
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// EstimateCost prices a usage increment the agent reported without a
	// cost, for model; ok false when the model has no known price.
	EstimateCost func(model string, u event.Usage) (usd float64, ok bool)
	// Observers watch the run besides the callbacks above (a session log,
	// a merged event file), called after them, in order.
	Observers []Observer
}

// Observer watches one run: a session log, a file of every run's events.
// Any field may be nil. The callbacks are called as those of Options are;
// Close is called once whatever the outcome: by Wait, with the result,
// once the run is over, or by Start, with nil, when the task cannot run.
type Observer struct {
	// OnEvent receives every event, as Options.OnEvent does (a trace
	// exporter reads the events, not their lines).
	OnEvent  func(event.Event)
	OnLine   func(line []byte)
	OnNative func(stream string, line []byte)
	// Flush is called as Options.Flush is: what OnLine and OnNative were
	// given may be buffered until then (the session log is).
	Flush func()
	Close func(res *event.Result)

	// selfLocked: OnNative locks for itself (the session log's), and is
	// called outside the stream's lock, so that a stalled sink does not
	// hold up the agent's stderr.
	selfLocked bool
}

// Run is a started agent run.
type Run struct {
	task    Task
	opts    Options
	stream  *event.Stream
	proc    *process.Proc
	ready   chan struct{}
	line    []byte // line and enc are the sink's, which the Stream calls under its lock
	enc     event.Appender
	model   string
	startAt time.Time
	files   *filediff.Diffs // used by the stdout goroutine only

	waitOnce sync.Once
	result   *event.Result
	err      error
	// outcome is the end's outcome as far as it is known, for
	// endAfterPanic; silenced: a callback panicked at the run's end, and
	// no callback is called any more; closed is how many observers were
	// closed (a Close that panicked counts).
	outcome  *event.Outcome
	silenced atomic.Bool
	closed   int
	spawnErr error
	flush    func()
	log      *sessionLog // set by Settings.Start
	redact   *logger.Redactor

	live      *Session          // a live session's handle (session.go); nil for a run
	canceler  adapters.Canceler // the session's, when it has one
	cancelled atomic.Bool       // the session was asked to end its turn on Interrupt
	// agentFailed: the agent's parser gave a fatal error. failedFirst: it
	// had when the run was interrupted (Interrupt, the context's end): the
	// interrupt is then a detail of that failure (wait). Atomics: an
	// interrupt must not wait for the stream's lock, which a stalled
	// consumer holds.
	agentFailed atomic.Bool
	failedFirst atomic.Bool
	// interrupted: the run was interrupted (Interrupt, the context's end).
	// A fatal error the agent reports after it is its answer to the
	// interrupt, and the run's one fatal error is the interrupt's (feed).
	interrupted atomic.Bool
	stopNoting  func() bool // ends the watch of the context for failedFirst
	// cancelAsked is when (unix ns) it was asked: a second Interrupt
	// within 2 s of it kills.
	cancelAsked atomic.Int64

	isReady atomic.Bool
	feeding atomic.Bool  // a stdout chunk is being turned into events (set by the stdout goroutine)
	chunkAt atomic.Int64 // Unix ns at which that chunk arrived

	tmp *privtmp.Dir // the agent's own temporary directory; nil for none
	// removeTmp removes tmp, once: at the run's end, by Wait or by a
	// goroutine that waits for the process, so that a run nobody waits
	// for leaves no directory nor lock behind.
	removeTmp func()
}

// Typed reasons a run did not succeed, returned by Wait (wrapped).
var (
	ErrIdleTimeout = process.ErrIdleTimeout
	ErrHardTimeout = process.ErrHardTimeout
	ErrInterrupted = process.ErrInterrupted
	// ErrAgentFailed: the agent reported an error or exited non-zero.
	ErrAgentFailed = errors.New("harness: the agent failed")
)

// NotInstalledError reports an agent binary that was not found: Name is
// the first name looked for, Tried every path looked at.
type NotInstalledError = process.NotFoundError

// TaskError reports a task that cannot be run as given (exit status 2).
type TaskError struct{ Err error }

func (e *TaskError) Error() string { return e.Err.Error() }
func (e *TaskError) Unwrap() error { return e.Err }

// Command is a task resolved for starting: what --dry-run prints.
type Command struct {
	Agent  string   // canonical id
	Binary string   // the executable found; the first candidate name when NotInstalled is set
	Argv   []string // Argv[0] is Binary
	// AddedEnv holds the KEY=VALUE pairs the adapter and the task add to
	// the base environment; Env is the whole environment of the agent.
	AddedEnv []string
	Env      []string
	Stdin    string // written to the agent's stdin, then closed; "" is /dev/null
	Cwd      string // absolute
	// NotInstalled is set when no binary was found: the run would end at
	// once with a not_installed error.
	NotInstalled *NotInstalledError
	// Session is set for an agent that speaks a session protocol over
	// stdio (adapters.Session): its stdin stays open for the harness.
	Session     bool
	promptIndex int
	adapter     adapters.Adapter
	task        Task
	live        *Session // set by StartSession: the run is a live session
	// privateTmp: the run makes the agent a temporary directory of its
	// own (adapters.Command.PrivateTmp) when it starts.
	privateTmp bool
	redact     *logger.Redactor // the run's (Run.Redactor)
}

// RedactedArgv returns Argv with the prompt replaced by "<prompt>" and
// the values of secret flags (--api-key K, --token=T) by [REDACTED], for
// logs and the session_start event. Argv itself, what the agent gets, is
// not changed.
func (c *Command) RedactedArgv() []string {
	return adapters.Command{Argv: c.Argv, PromptIndex: c.promptIndex}.RedactedArgv()
}

// ShownArgv returns Argv with the values of secret flags replaced by
// [REDACTED] but the prompt kept: what --dry-run prints, which shows how
// the prompt is passed, and, as it shows env names without values, no
// secret of the configuration's args.
func (c *Command) ShownArgv() []string {
	return logger.RedactArgv(c.Argv, c.promptIndex)
}

// Prepare resolves the agent, its binary (once: the one lookup of a run)
// and its command line without starting anything. A task that cannot run
// as given is a *TaskError; a missing binary is not an error here (see
// Command.NotInstalled).
func Prepare(t Task) (*Command, error) {
	a, err := protocolAdapter(t)
	if err != nil {
		return nil, &TaskError{err}
	}
	t.Agent = a.Name()
	t.Permissions = cmp.Or(t.Permissions, FullAccess)
	if t.Permissions != FullAccess && t.Permissions != ReadOnly {
		return nil, &TaskError{fmt.Errorf("permissions %q: want %s or %s", t.Permissions, FullAccess, ReadOnly)}
	}
	if t.Budgets == nil {
		b := DefaultBudgets()
		t.Budgets = &b
	}
	if err := t.Budgets.validate(); err != nil {
		return nil, &TaskError{err}
	}
	if t.Resume != "" && strings.TrimSpace(t.Resume) == "" {
		// No agent's session id is blank: the agent would fail the run
		// after it started.
		return nil, &TaskError{fmt.Errorf("resume %q: a session id is not blank", t.Resume)}
	}
	if strings.HasPrefix(t.Resume, "-") {
		// Codex, Cursor and OpenCode take the id as an argument of its
		// own, where "--dangerously-bypass-approvals-and-sandbox" would be
		// a flag; no agent's session id starts so.
		return nil, &TaskError{fmt.Errorf("resume %q: a session id does not start with '-'", t.Resume)}
	}
	if strings.HasPrefix(t.Model, "-") {
		// Codex and OpenCode take the model as an argument of its own: yargs
		// reads "-m --dangerously-skip-permissions" as two flags, turning a
		// read-only run into a full-access one; no model id starts so.
		return nil, &TaskError{fmt.Errorf("model %q: a model id does not start with '-'", t.Model)}
	}
	cwd := t.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	} else {
		if st, err := os.Stat(t.Cwd); err != nil || !st.IsDir() {
			return nil, &TaskError{fmt.Errorf("cwd %q is not a directory", t.Cwd)}
		}
		// One harness cannot enter would fail the agent's spawn (its
		// chdir), after the session log and session_start. access(2)
		// checks the real ids, which are harness's own (it is not set-id);
		// Faccessat's AT_EACCESS is emulated where the kernel lacks
		// faccessat2, wrongly for root (a directory of mode 0000).
		if err := unix.Access(t.Cwd, unix.X_OK); err != nil {
			return nil, &TaskError{fmt.Errorf("cwd %q cannot be entered: %w", t.Cwd, err)}
		}
		cwd, _ = filepath.Abs(cwd)
	}
	base := t.BaseEnv
	if base == nil {
		base = os.Environ()
	}
	base = config.AgentEnviron(base)
	bin, lookErr := findBinary(a, t.Binary, t.binaryFrom, t.SearchDirs, base)
	at := t.adapterTask()
	if t.Sandbox != nil {
		at.Cwd = t.Sandbox.Cwd
	}
	ac, err := a.Command(bin, at)
	if err != nil {
		if !strings.HasPrefix(err.Error(), a.Name()+": ") { // most adapters name themselves
			err = fmt.Errorf("%s: %w", a.Name(), err)
		}
		return nil, &TaskError{err}
	}
	// Some agents (OpenCode) take their project directory from $PWD rather
	// than from the process's working directory.
	var pwd []string
	switch {
	case t.Sandbox != nil:
		pwd = []string{"PWD=" + t.Sandbox.Cwd}
	case t.Cwd != "":
		pwd = []string{"PWD=" + cwd}
	}
	env := mergeEnv(base, pinnedPath(bin, t.SearchDirs, base), ac.Env, pwd, t.SetupEnv, t.Env)
	if t.Sandbox != nil {
		prefix := t.Sandbox.Prefix
		if t.Sandbox.Wrap != nil {
			prefix = t.Sandbox.Wrap(env)
		}
		ac.Argv = append(slices.Clone(prefix), ac.Argv...)
		if ac.PromptIndex >= 0 {
			ac.PromptIndex += len(prefix)
		}
	}
	if err := execable(ac, env); err != nil {
		return nil, &TaskError{err}
	}
	c := &Command{Agent: a.Name(), Binary: bin, Argv: ac.Argv, AddedEnv: mergeEnv(nil, ac.Env, t.SetupEnv, t.Env),
		Env: env, Stdin: ac.Stdin, Cwd: cwd, Session: ac.Session,
		promptIndex: ac.PromptIndex, adapter: a, task: t,
		// What the caller handed the agent in Task.Env (--env, config env
		// tables) is redacted by value, whatever its name, wherever it shows.
		redact: logger.DefaultRedactor().WithEnv(t.Env)}
	// A TMPDIR the caller gives (bench's per-run one, a user's choice) is
	// the agent's; a sandbox's /tmp goes with it.
	c.privateTmp = ac.PrivateTmp && t.Sandbox == nil && !setsVar("TMPDIR", ac.Env, t.SetupEnv, t.Env)
	errors.As(lookErr, &c.NotInstalled)
	return c, nil
}

// prepareRun is Prepare of a one-prompt run, which needs its prompt: no
// front door sends a blank one (BlankPrompt). A live session's is
// prepared without one (StartSession), so Prepare itself takes it.
func prepareRun(t Task) (*Command, error) {
	if BlankPrompt(t.Prompt) {
		return nil, &TaskError{ErrBlankPrompt}
	}
	return Prepare(t)
}

// maxExecString is the longest argument or environment entry execve
// takes on Linux (MAX_ARG_STRLEN, its NUL included).
const maxExecString = 32*4096 - 1

// execable refuses a command line or environment the agent could not be
// started with, naming the part at fault: a NUL byte would end it early
// (execve says only "invalid argument", of harness's own binary when a
// reaper starts the agent), one over maxExecString fails the exec
// ("argument list too long"). A long prompt goes on stdin already.
func execable(ac adapters.Command, env []string) error {
	for i, a := range ac.Argv {
		what := fmt.Sprintf("argument %d of the agent's command line", i)
		if i == ac.PromptIndex {
			what = "the prompt"
		}
		switch {
		case strings.IndexByte(a, 0) >= 0:
			return fmt.Errorf("%s holds a NUL byte", what)
		case len(a) > maxExecString:
			return fmt.Errorf("%s is %d bytes: over the %d the system takes in one argument", what, len(a), maxExecString)
		}
	}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.IndexByte(kv, 0) >= 0:
			return fmt.Errorf("environment variable %s holds a NUL byte", k)
		case len(kv) > maxExecString:
			return fmt.Errorf("environment variable %s is %d bytes: over the %d the system takes in one variable", k, len(kv), maxExecString)
		}
	}
	return nil
}

// setsVar reports whether one of the KEY=VALUE lists sets key.
func setsVar(key string, lists ...[]string) bool {
	for _, l := range lists {
		for _, kv := range l {
			if k, _, _ := strings.Cut(kv, "="); k == key {
				return true
			}
		}
	}
	return false
}

// Start validates the task and starts the agent, with the spec's default
// budgets when t has none and no session log: Settings.Start is the run
// of a configured caller. A task that cannot be run (unknown agent,
// invalid option, bad cwd, a blank prompt: ErrBlankPrompt, a negative
// budget: *BudgetError) is a *TaskError and nothing is emitted. A
// binary that is not installed or fails to spawn still yields a Run whose
// stream ends with the error; Wait reports it.
func Start(ctx context.Context, t Task, o Options) (*Run, error) {
	c, err := prepareRun(t)
	if err != nil {
		closeObservers(o.Observers, nil)
		return nil, err
	}
	return c.Start(ctx, o), nil
}

// Start starts the prepared command: the agent under the supervisor of
// process, its output turned into events.
func (c *Command) Start(ctx context.Context, o Options) *Run {
	t := c.task
	r := &Run{task: t, opts: o, ready: make(chan struct{}), model: t.Model, live: c.live, redact: c.redact}
	r.removeTmp = sync.OnceFunc(func() { _ = r.tmp.Remove() })
	if r.live != nil {
		r.live.run = r
	}
	r.startAt = r.now()
	r.files = filediff.New(c.Cwd)
	r.stream = event.NewStream(event.StreamConfig{
		Run: t.Run, Now: r.streamNow, Raw: t.Raw, Sink: r.sink, Price: r.estimate,
		Start:   event.SessionStart{Agent: c.Agent, Model: t.Model, Cwd: c.Cwd, PTY: t.PTY, Argv: c.RedactedArgv()},
		Secrets: c.redact.Values(),
	})
	if c.NotInstalled != nil {
		return r.spawnFailed(c.NotInstalled)
	}
	parser := c.adapter.NewParser()
	if w, ok := parser.(adapters.WallClocked); ok {
		w.UseWallClock()
	}
	var session adapters.Session
	if c.Session {
		var ok bool
		if session, ok = parser.(adapters.Session); !ok {
			return r.spawnFailed(fmt.Errorf("harness: %s: a session agent's parser must implement adapters.Session", c.Agent))
		}
	}
	opts := r.processOptions(c, parser, session)
	if c.privateTmp {
		r.tmp, opts.Env = makePrivateTmp(opts.Env)
	}
	proc, err := process.Start(ctx, opts)
	if err != nil {
		return r.spawnFailed(err)
	}
	r.proc = proc
	r.stopNoting = context.AfterFunc(ctx, r.noteInterrupt)
	if r.tmp != nil {
		go func() {
			proc.Wait()
			r.removeTmp()
		}()
	}
	r.stream.SetPID(proc.PID())
	if session != nil {
		r.beginSession(c, session)
	}
	r.isReady.Store(true)
	close(r.ready)
	r.flush = func() {
		r.feeding.Store(false) // stdout is done, its last chunk too
		r.stream.Emit(parser.Flush(nil)...)
	}
	return r
}

// spawnFailed ends r before it had a process: Wait reports err.
func (r *Run) spawnFailed(err error) *Run {
	r.removeTmp() // no agent will use it: gone whether Wait is called or not
	close(r.ready)
	r.spawnErr = err
	return r
}

// processOptions are c's process with the run's budgets, and callbacks
// that turn its output into events (through parser and, for a session
// agent, session) and tell the watchdogs what they mean.
func (r *Run) processOptions(c *Command, parser adapters.Parser, session adapters.Session) process.Options {
	t, b := r.task, r.task.Budgets
	var bodies []event.Body
	// Without a native callback of the caller's, stderr takes no lock but
	// Raw's: a consumer that stalls the stream holds up no stderr it does
	// not want (the session log's, which locks for itself, is called
	// outside the stream's lock: docs/supervision.md, both pipes drained).
	wantNative := r.opts.OnNative != nil || slices.ContainsFunc(r.opts.Observers, func(ob Observer) bool { return ob.OnNative != nil && !ob.selfLocked })
	return process.Options{
		Argv: c.Argv, Env: c.Env, Dir: t.Cwd, Stdin: c.Stdin, KeepStdin: c.Session, PTY: t.PTY, MaxLine: t.MaxLine,
		Idle: b.Idle, IdleWarning: b.IdleWarning, Hard: b.Hard,
		Linger: b.Linger, KillGrace: b.KillGrace, ToolBudget: b.Tool,
		OnStdout: func(line []byte, dropped int64) {
			r.waitReady()
			// Under the stream's lock, as every callback of the caller's
			// (the clock too): the stderr goroutine calls them as well.
			r.stream.Between(func() {
				if !r.feeding.Load() {
					// The clock is read once per chunk of output, not per
					// event: a chunk's lines all arrived at that moment.
					r.chunkAt.Store(r.now().UnixNano())
					r.feeding.Store(true)
					r.files.Arrived(time.Now())
				}
				r.native(event.StreamStdout, line, false)
			})
			r.native(event.StreamStdout, line, true)
			if dropped > 0 {
				r.stream.Emit(adapters.LineTruncated(len(line), dropped))
			}
			if r.live != nil {
				bodies = r.live.feed(parser, bodies, line)
			} else {
				bodies = r.feed(parser, bodies, line)
			}
			if session != nil && session.Done() {
				r.proc.Stdin().Close() // the session is over: the agent exits
			}
		},
		OnStderr: func(line []byte) {
			r.waitReady()
			if wantNative {
				r.stream.Between(func() { r.native(event.StreamStderr, line, false) })
			}
			r.native(event.StreamStderr, line, true)
			if t.Raw {
				r.stream.Line(event.StreamStderr, line, false, nil)
				r.flushOut()
			}
		},
		OnWarning: func(w *event.Warning) {
			r.stream.Emit(w)
			r.flushOut()
		},
		BeforeStdoutRead: func(wait bool) {
			if r.feeding.Load() {
				r.feeding.Store(false)
			}
			if wait {
				r.flushOut()
			}
		},
		// The parser is flushed after the last stdout line and before the
		// outcome is turned into events, by Wait.
	}
}

// beginSession opens the session of an agent driven over stdin, before
// the first line is parsed (OnStdout waits for ready).
func (r *Run) beginSession(c *Command, session adapters.Session) {
	if s, ok := session.(adapters.SetupBounded); ok {
		s.BoundSetup(r.task.Budgets.Setup, r.endSession)
	}
	r.canceler, _ = session.(adapters.Canceler)
	if r.live != nil && !r.live.attach(session) {
		r.stream.Emit(&event.Error{Code: event.ErrSpawnFailed, Message: c.Agent + ": its protocol holds one prompt a session, not a live session"})
		r.proc.Interrupt()
	}
	if err := session.Begin(r.proc.Stdin(), r.task.adapterTask()); err != nil {
		r.stream.Emit(&event.Error{Code: event.ErrSpawnFailed, Message: "opening the agent's session: " + err.Error()})
		r.proc.Interrupt()
	}
}

// endSession ends a session whose setup step missed its deadline
// (adapters.SetupBounded), from the session's timer: bodies say so, and
// the agent, its stdin closed, has the linger budget to exit.
func (r *Run) endSession(bodies ...event.Body) {
	defer process.ContainPanic() // on the adapter's timer
	r.waitReady()
	r.endWith(bodies)
}

// endWith ends a session with bodies: the agent, its stdin closed, has
// the linger budget to exit, even when a callback panics at them.
func (r *Run) endWith(bodies []event.Body) {
	defer func() {
		r.proc.Stdin().Close()
		r.proc.AgentDone()
	}()
	r.stream.Emit(bodies...)
	r.flushOut()
}

// native hands a native line to the callbacks that want it: the caller's
// (selfLocked false) under the stream's lock (Stream.Between), as the sink
// is, so that they are called one at a time though stdout and stderr are
// read apart; harness's own that lock for themselves (selfLocked: the
// session log) outside it.
func (r *Run) native(stream string, line []byte, selfLocked bool) {
	if r.silenced.Load() {
		return
	}
	if r.opts.OnNative != nil && !selfLocked {
		r.opts.OnNative(stream, line)
	}
	for i := range r.opts.Observers {
		if ob := &r.opts.Observers[i]; ob.OnNative != nil && ob.selfLocked == selfLocked {
			ob.OnNative(stream, line)
		}
	}
}

func closeObservers(obs []Observer, res *event.Result) {
	for _, ob := range obs {
		if ob.Close != nil {
			ob.Close(res)
		}
	}
}

// closeObservers closes the run's observers not closed yet, with res:
// after one whose Close panicked (endAfterPanic), those after it.
func (r *Run) closeObservers(res *event.Result) {
	for r.closed < len(r.opts.Observers) {
		r.closeNext(res)
	}
}

// closeNext closes the next observer not closed yet, with res.
func (r *Run) closeNext(res *event.Result) {
	ob := r.opts.Observers[r.closed]
	r.closed++ // first: a Close that panics is not called again
	if ob.Close != nil {
		ob.Close(res)
	}
}

// feed parses one stdout line, puts the disk's diff on the file tools that
// end there, and tells the supervisor what the line means for the
// watchdogs: tool calls opening and closing, the agent being done.
func (r *Run) feed(p adapters.Parser, buf []event.Body, line []byte) []event.Body {
	out, known := p.Parse(buf[:0], line)
	if r.live != nil {
		out = r.live.before(out) // turns and permission requests: only a live session's parser makes them
	}
	for _, b := range out {
		switch v := b.(type) {
		case *event.SessionStart:
			if v.Model != "" {
				r.model = v.Model
			}
		case *event.Usage:
			r.estimate(v)
		case *event.Result:
			r.estimate(&v.Usage)
		case *event.Error:
			switch {
			case !v.Fatal:
			case r.live == nil && r.interrupted.Load() && !r.agentFailed.Load():
				// The agent failing because it was interrupted (an error
				// result for Ctrl-C): a detail of the interrupt, whose fatal
				// error ends the run (wait).
				v.Fatal, v.Partial = false, nil
			default:
				r.agentFailed.Store(true)
			}
		}
	}
	r.files.Observe(out)
	r.stream.Line(event.StreamStdout, line, !known, out)
	// The stream has given each call its unique id by now.
	for _, b := range out {
		switch v := b.(type) {
		case *event.ToolStart:
			r.proc.ToolStarted(v.CallID, v.Name, v.Kind)
		case *event.ToolEnd:
			r.proc.ToolEnded(v.CallID)
		case *event.Result:
			r.proc.AgentDone()
		case *event.TurnStart, *event.TurnEnd:
			r.live.after(v)
		}
	}
	clear(out)
	return out[:0]
}

// waitReady waits until Start has the process (its pid is in the stream).
func (r *Run) waitReady() {
	if !r.isReady.Load() {
		<-r.ready
	}
}

// streamNow is the stream's clock: while a stdout chunk is being turned
// into events, the time it arrived; otherwise the run's clock.
func (r *Run) streamNow() time.Time {
	if r.feeding.Load() {
		return time.Unix(0, r.chunkAt.Load())
	}
	return r.now()
}

// flushOut tells the writer that no further event is imminent. It runs
// between events, never beside OnLine or OnEvent: callbacks are called one
// at a time, and a Flush of a writer that OnLine fills (a bufio.Writer,
// unlocked) ran beside it when a warning's goroutine flushed.
func (r *Run) flushOut() { r.stream.Between(r.flushNow) }

func (r *Run) flushNow() {
	if r.silenced.Load() {
		return
	}
	if r.opts.Flush != nil {
		r.opts.Flush()
	}
	for _, ob := range r.opts.Observers {
		if ob.Flush != nil {
			ob.Flush()
		}
	}
}

func (r *Run) estimate(u *event.Usage) {
	if u.CostUSD != 0 || u.IsZero() || r.opts.EstimateCost == nil || r.silenced.Load() {
		return
	}
	if usd, ok := r.opts.EstimateCost(r.model, *u); ok {
		u.CostUSD, u.CostEstimated = usd, true
	}
}

func (r *Run) sink(ev event.Event) {
	if r.silenced.Load() {
		return
	}
	if r.opts.OnEvent != nil {
		r.opts.OnEvent(ev)
	}
	// Observers by index: ranging by value copies each one's five funcs
	// at every event (and native line) of the run.
	for i := range r.opts.Observers {
		if ob := &r.opts.Observers[i]; ob.OnEvent != nil {
			ob.OnEvent(ev)
		}
	}
	if r.opts.OnLine == nil && !r.lineObservers() {
		return
	}
	var err error
	r.line, err = r.enc.Append(r.line[:0], ev)
	if err != nil {
		return
	}
	// Kept with its newline: appended to a copy, a line that filled the
	// buffer would be copied afresh at every event of its size.
	r.line = append(r.line, '\n')
	line := r.line
	if r.opts.OnLine != nil {
		r.opts.OnLine(line)
	}
	for i := range r.opts.Observers {
		if ob := &r.opts.Observers[i]; ob.OnLine != nil {
			ob.OnLine(line)
		}
	}
}

func (r *Run) lineObservers() bool {
	for _, ob := range r.opts.Observers {
		if ob.OnLine != nil {
			return true
		}
	}
	return false
}

// now reads the run's clock.
func (r *Run) now() time.Time {
	if r.opts.Now != nil {
		return r.opts.Now()
	}
	return time.Now()
}

// Redactor returns the redactor of the run's session log, whether the
// run has one or not: it knows the secret variables of harness's
// environment and the values of the task's Env, those the configuration
// adds (Settings.Start) among them. What a caller shows of the run beyond
// its log and stream (bench's report, an MCP answer) goes through it, to
// be redacted as the log is.
func (r *Run) Redactor() *logger.Redactor { return r.redact }

// RunID returns the run id stamped on every event.
func (r *Run) RunID() string { return r.stream.Run() }

// InFlight returns the tool calls still open, oldest first. It never
// waits for the run's output: an interrupt reports them at once, also
// while a callback blocks (a stdout nobody reads).
func (r *Run) InFlight() []event.OpenCall { return r.stream.OpenCalls() }

// Interrupt asks the agent to stop: SIGINT to its group, then SIGTERM, then
// SIGKILL after the grace. A second call within 2 s kills at once.
//
// A session agent that can be asked to end its turn (adapters.Canceler:
// ACP's session/cancel) is asked first, and signalled only if it has not
// ended cancelGrace later.
func (r *Run) Interrupt() {
	if r.proc == nil {
		return
	}
	r.noteInterrupt()
	if r.canceler != nil {
		if r.cancelled.CompareAndSwap(false, true) {
			if r.canceler.Cancel() {
				r.cancelAsked.Store(time.Now().UnixNano())
				time.AfterFunc(cancelGrace, r.proc.Interrupt)
				return
			}
			r.cancelled.Store(false) // no turn in flight: signals at once
		} else if at := r.cancelAsked.Load(); at != 0 && time.Since(time.Unix(0, at)) < 2*time.Second {
			// The second interrupt while the agent is asked to end its
			// turn: as a run's second, it kills at once (signalled, the
			// agent would have had the whole kill grace again).
			r.proc.Kill()
			return
		}
	}
	r.proc.Interrupt()
}

// noteInterrupt notes whether the agent had reported its failure when the
// run was interrupted (failedFirst).
func (r *Run) noteInterrupt() {
	if r.agentFailed.Load() {
		r.failedFirst.Store(true)
	}
	r.interrupted.Store(true)
}

// afterFunc is time.AfterFunc for a timer that may emit events: a
// callback of the caller's that panics there ends every run first
// (process.ContainPanic).
func afterFunc(d time.Duration, fn func()) *time.Timer {
	return time.AfterFunc(d, func() {
		defer process.ContainPanic()
		fn()
	})
}

// cancelGrace is how long a session agent has to end its turn when asked.
const cancelGrace = 2 * time.Second
