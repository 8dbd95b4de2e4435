// Package harness runs one coding-agent CLI headless under supervision and
// delivers its output as the unified event stream of docs/events.md. It is
// the composition layer: it ties an adapter (argv, env, native parsing), the
// process supervisor (spawn, watchdogs, kill) and the session log together.
// The harness command is a client of this package.
//
// A run:
//
//	run, err := harness.Start(ctx, harness.Task{Agent: "claude", Task: adapters.Task{Prompt: "fix the test"}},
//		harness.Options{OnEvent: func(ev event.Event) { fmt.Println(ev.Type) }})
//	if err != nil { … }           // bad task: unknown agent, invalid option
//	res, err := run.Wait()       // res is the result event; err says why it was not a success
//
// Start never blocks on the agent; Wait returns when the agent and every
// process it started are gone. Nothing is printed: events go to callbacks.
package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentharness/harness/acp"
	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
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
	// Setup bounds each setup step of a session protocol (ACP initialize,
	// session/new); 0: acp.DefaultSetupTimeout.
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

// Task is one agent run to start.
type Task struct {
	Agent string // id or alias
	adapters.Task
	Binary     string   // the agent's executable; searched for when empty
	SearchDirs []string // extra directories searched before PATH (e.g. the pinned installs)
	Env        []string // KEY=VALUE added last, over the adapter's own
	BaseEnv    []string // the environment to start from; os.Environ() when nil
	PTY        bool
	Raw        bool // emit native events
	MaxLine    int  // stdout line cap; 0 = 16 MiB
	Budgets    Budgets
	Run        string // run id; a fresh one when empty
	// Protocol is how the agent is driven: "" (or "cli") its headless CLI
	// mode, "acp" the Agent Client Protocol (docs/acp.md).
	Protocol string
	// Command starts an ACP agent harness has no adapter for (Agent is
	// then any name); Command[0] is the binary.
	Command []string
}

// Protocols of a Task.
const (
	ProtocolCLI = "cli"
	ProtocolACP = "acp"
)

// Options are the callbacks of a run. Callbacks are called one at a time,
// in stream order, and must not block for long: the agent's output waits.
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
}

// Run is a started agent run.
type Run struct {
	task    Task
	opts    Options
	adapter adapters.Adapter
	cmd     adapters.Command
	stream  *event.Stream
	proc    *process.Proc
	ready   chan struct{}
	line    []byte
	enc     event.Appender
	encMu   sync.Mutex // guards line and enc
	model   string
	startAt time.Time
	files   *fileDiffs // used by the stdout goroutine only

	waitOnce sync.Once
	result   *event.Result
	err      error
	spawnErr error
	flush    func()

	acp       *acp.Client // the ACP session, when Protocol is acp
	cancelled atomic.Bool // session/cancel was sent on Interrupt

	isReady atomic.Bool
	feeding atomic.Bool  // a stdout chunk is being turned into events (set by the stdout goroutine)
	chunkAt atomic.Int64 // Unix ns at which that chunk arrived
}

// Typed reasons a run did not succeed, returned by Wait (wrapped).
var (
	ErrIdleTimeout = process.ErrIdleTimeout
	ErrHardTimeout = process.ErrHardTimeout
	ErrInterrupted = process.ErrInterrupted
	// ErrAgentFailed: the agent reported an error or exited non-zero.
	ErrAgentFailed = errors.New("harness: the agent failed")
)

// NotInstalledError reports an agent binary that was not found.
type NotInstalledError struct {
	Agent string
	Tried []string
}

func (e *NotInstalledError) Error() string {
	return fmt.Sprintf("%s is not installed: tried %s", e.Agent, strings.Join(e.Tried, ", "))
}

// TaskError reports a task that cannot be run as given (exit status 2).
type TaskError struct{ Err error }

func (e *TaskError) Error() string { return e.Err.Error() }
func (e *TaskError) Unwrap() error { return e.Err }

// Prepare resolves the agent, its binary and its command line without
// starting anything (what --dry-run prints). A missing binary is a
// *NotInstalledError; the returned Command then uses the first candidate
// name.
func Prepare(t Task) (adapters.Adapter, adapters.Command, []string, error) {
	a, err := protocolAdapter(t)
	if err != nil {
		return nil, adapters.Command{}, nil, &TaskError{err}
	}
	if t.Permissions == "" {
		t.Permissions = adapters.FullAccess
	}
	if t.Permissions != adapters.FullAccess && t.Permissions != adapters.ReadOnly {
		return nil, adapters.Command{}, nil, &TaskError{fmt.Errorf("permissions %q: want %s or %s", t.Permissions, adapters.FullAccess, adapters.ReadOnly)}
	}
	env := t.BaseEnv
	if env == nil {
		env = os.Environ()
	}
	bin, lookErr := FindBinary(a, t.Binary, t.SearchDirs, env)
	cmd, err := a.Command(bin, t.Task)
	if err != nil {
		return nil, adapters.Command{}, nil, &TaskError{fmt.Errorf("%s: %w", a.Name(), err)}
	}
	// Some agents (OpenCode) take their project directory from $PWD rather
	// than from the process's working directory.
	var pwd []string
	if t.Cwd != "" {
		if abs, err := filepath.Abs(t.Cwd); err == nil {
			pwd = []string{"PWD=" + abs}
		}
	}
	full := mergeEnv(env, cmd.Env, pwd, t.Env)
	return a, cmd, full, lookErr
}

// Start validates the task and starts the agent. A task that cannot be
// run (unknown agent, invalid option, bad cwd) is an error and nothing is
// emitted. A binary that is not installed or fails to spawn still yields a
// Run whose stream ends with the error; Wait reports it.
func Start(ctx context.Context, t Task, o Options) (*Run, error) {
	a, cmd, env, lookErr := Prepare(t)
	var te *TaskError
	if errors.As(lookErr, &te) {
		return nil, lookErr
	}
	if t.Cwd != "" {
		if st, err := os.Stat(t.Cwd); err != nil || !st.IsDir() {
			return nil, &TaskError{fmt.Errorf("cwd %q is not a directory", t.Cwd)}
		}
	}
	if t.Permissions == "" {
		t.Permissions = adapters.FullAccess
	}
	r := &Run{task: t, opts: o, adapter: a, cmd: cmd, ready: make(chan struct{}), model: t.Model}
	r.startAt = r.now()
	cwd := t.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	r.files = newFileDiffs(cwd)
	r.stream = event.NewStream(event.StreamConfig{
		Run: t.Run, Now: r.streamNow, Raw: t.Raw, Sink: r.sink,
		Start: event.SessionStart{Agent: a.Name(), Model: t.Model, Cwd: cwd, PTY: t.PTY, Argv: cmd.RedactedArgv()},
	})
	if lookErr != nil {
		close(r.ready)
		r.spawnErr = lookErr
		return r, nil
	}
	parser := a.NewParser()
	if w, ok := parser.(adapters.WallClocked); ok {
		w.UseWallClock()
	}
	if aa, ok := a.(*acp.Adapter); ok {
		r.acp = aa.Session(t.Task, acp.Options{SetupTimeout: t.Budgets.Setup,
			Emit: func(b ...event.Body) { r.stream.Emit(b...); r.flushOut() },
			Done: func() { r.waitReady(); r.proc.AgentDone() },
		})
		parser = r.acp
	}
	var bodies []event.Body
	proc, err := process.Start(ctx, process.Options{
		Argv: cmd.Argv, Env: env, Dir: t.Cwd, Stdin: cmd.Stdin, StdinPipe: r.acp != nil, PTY: t.PTY, MaxLine: t.MaxLine,
		Idle: t.Budgets.Idle, IdleWarning: t.Budgets.IdleWarning, Hard: t.Budgets.Hard,
		Linger: t.Budgets.Linger, KillGrace: t.Budgets.KillGrace, ToolBudget: t.Budgets.Tool,
		OnStdout: func(line []byte, dropped int64) {
			r.waitReady()
			if !r.feeding.Load() {
				// The clock is read once per chunk of output, not per
				// event: a chunk's lines all arrived at that moment.
				r.chunkAt.Store(r.now().UnixNano())
				r.feeding.Store(true)
				r.files.arrived(time.Now())
			}
			if o.OnNative != nil {
				o.OnNative(event.StreamStdout, line)
			}
			if dropped > 0 {
				r.stream.Emit(adapters.LineTruncated(len(line), dropped))
			}
			bodies = r.feed(parser, bodies, line)
		},
		OnStderr: func(line []byte) {
			r.waitReady()
			if o.OnNative != nil {
				o.OnNative(event.StreamStderr, line)
			}
			if t.Raw {
				r.stream.Line(event.StreamStderr, line, false, nil)
				r.flushOut()
			}
		},
		OnWarning: func(w *event.Warning) {
			r.stream.Emit(w)
			r.flushOut()
		},
		BeforeStdoutRead: func() {
			if r.feeding.Load() {
				r.feeding.Store(false)
			}
			r.flushOut()
		},
		// The parser is flushed after the last stdout line and before the
		// outcome is turned into events, by Wait.
	})
	if err != nil {
		close(r.ready)
		r.spawnErr = err
		return r, nil
	}
	r.proc = proc
	r.stream.SetPID(proc.PID())
	r.isReady.Store(true)
	close(r.ready)
	if r.acp != nil {
		_ = r.acp.Start(proc.Stdin()) // a write error shows as the agent's exit
	}
	r.flush = func() {
		r.feeding.Store(false) // stdout is done, its last chunk too
		r.stream.Emit(parser.Flush(nil)...)
	}
	return r, nil
}

// feed parses one stdout line, puts the disk's diff on the file tools that
// end there, and tells the supervisor what the line means for the
// watchdogs: tool calls opening and closing, the agent being done.
func (r *Run) feed(p adapters.Parser, buf []event.Body, line []byte) []event.Body {
	out, known := p.Parse(buf[:0], line)
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
		}
	}
	r.files.observe(out)
	r.stream.Line(event.StreamStdout, line, !known, out)
	// The stream has given each call its unique id by now.
	for _, b := range out {
		switch v := b.(type) {
		case *event.ToolStart:
			r.proc.ToolStartedNamed(v.CallID, v.Name, v.Kind)
		case *event.ToolEnd:
			r.proc.ToolEnded(v.CallID)
		case *event.Result:
			r.proc.AgentDone()
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

// flushOut tells the writer that no further event is imminent.
func (r *Run) flushOut() {
	if r.opts.Flush != nil {
		r.opts.Flush()
	}
}

func (r *Run) estimate(u *event.Usage) {
	if u.CostUSD != 0 || u.IsZero() || r.opts.EstimateCost == nil {
		return
	}
	if usd, ok := r.opts.EstimateCost(r.model, *u); ok {
		u.CostUSD, u.CostEstimated = usd, true
	}
}

func (r *Run) sink(ev event.Event) {
	if r.opts.OnEvent != nil {
		r.opts.OnEvent(ev)
	}
	if r.opts.OnLine != nil {
		r.encMu.Lock()
		defer r.encMu.Unlock()
		var err error
		r.line, err = r.enc.Append(r.line[:0], ev)
		if err == nil {
			r.opts.OnLine(append(r.line, '\n'))
		}
	}
}

// now reads the run's clock.
func (r *Run) now() time.Time {
	if r.opts.Now != nil {
		return r.opts.Now()
	}
	return time.Now()
}

// RunID returns the run id stamped on every event.
func (r *Run) RunID() string { return r.stream.Run() }

// Command returns the command line the run started.
func (r *Run) Command() adapters.Command { return r.cmd }

// InFlight returns the tool calls still open, oldest first.
func (r *Run) InFlight() []event.OpenCall { return r.stream.OpenCalls() }

// Interrupt asks the agent to stop: SIGINT to its group, then SIGTERM, then
// SIGKILL after the grace. A second call within 2 s kills at once.
//
// Over ACP, the first call sends session/cancel and lets the agent answer
// its prompt (cancelled) for acpCancelGrace before any signal.
func (r *Run) Interrupt() {
	if r.proc == nil {
		return
	}
	if r.acp != nil && r.cancelled.CompareAndSwap(false, true) {
		if r.acp.Cancel() {
			time.AfterFunc(acpCancelGrace, r.proc.Interrupt)
			return
		}
		r.cancelled.Store(false) // no prompt in flight: signals at once
	}
	r.proc.Interrupt()
}

// acpCancelGrace is how long an ACP agent has to answer session/cancel.
const acpCancelGrace = 2 * time.Second

// protocolAdapter is the adapter of t's agent for t's protocol.
func protocolAdapter(t Task) (adapters.Adapter, error) {
	switch t.Protocol {
	case "", ProtocolCLI:
		return Adapter(t.Agent)
	case ProtocolACP:
	default:
		return nil, fmt.Errorf("protocol %q: want %s or %s", t.Protocol, ProtocolCLI, ProtocolACP)
	}
	base, err := Adapter(t.Agent)
	switch {
	case err != nil && len(t.Command) > 0:
		return acp.Custom(t.Agent, t.Command)
	case err != nil:
		return nil, err
	case len(t.Command) > 0:
		// A known agent with another ACP command keeps its environment.
		return acp.WithCommand(base, t.Command)
	}
	a, ok := acp.Builtin(base)
	if !ok {
		return nil, fmt.Errorf("%s has no ACP mode; give its ACP command (command = [...] in [agents.%s])", base.Name(), base.Name())
	}
	return a, nil
}
