package harness

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/agentharness/harness/acp"
	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/logger"
	"github.com/agentharness/harness/registry"
)

// Settings are what a caller's configuration says about its runs: the
// loaded configuration (harness.toml, the user's config, HARNESS_*
// variables), the model registry, where the pinned agents are installed,
// where session logs go. Settings.Start is the one way a configured caller
// (harness run, bench, mcp) turns a task into a run. The zero value is
// usable: the spec's defaults, PATH only, no session log. Settings are
// read-only once in use and safe for concurrent use.
type Settings struct {
	// Config is the loaded configuration; nil means config.Defaults().
	Config *config.Config
	// Models resolves model aliases and prices usage the agents report
	// without a cost; nil: neither.
	Models *registry.Models
	// SearchDirs are searched for agent binaries before PATH.
	SearchDirs []string
	// Environ is the environment agents start from; os.Environ() when nil.
	Environ []string
	// LogDir, when set, gives every run a session log there.
	LogDir string
	// Version is recorded in session logs.
	Version string
	// Telemetry, when set, is asked for an observer of each run Start
	// starts (the OpenTelemetry export of package otlp) and for
	// KEY=VALUE pairs the agent gets (its TRACEPARENT). ctx is Start's:
	// it may carry the caller's trace (ContextWithTraceparent).
	Telemetry func(ctx context.Context, run RunInfo) (Observer, []string)
	// TelemetryArgs, when set, is given the agent's own arguments of each
	// run (Task.ExtraArgs, after the configuration's) and returns them as
	// the telemetry Telemetry turns on needs them: the OpenTelemetry
	// export keeps Claude Code's content off over its settings files with
	// a --settings of its own (otlp.AgentArgs). It is asked as the command
	// is built, by Prepare as by Start, so that what a dry run shows is
	// what runs; run.Run is not known yet then. An error is the task's: a
	// *TaskError, and nothing starts.
	TelemetryArgs func(run RunInfo, args []string) ([]string, error)
}

// RunInfo is what Settings.Telemetry and TelemetryArgs are told of a run
// before it starts.
type RunInfo struct {
	Run, Agent, Model, Protocol string
	// Env is the task's Env: values the caller gave as secrets.
	Env []string
	// Cwd is the agent's working directory, absolute; under a sandbox,
	// the host's directory it runs in.
	Cwd string
}

type traceparentKey struct{}

// ContextWithTraceparent returns ctx carrying a W3C traceparent header
// value (a serve request's, an MCP or ACP request's _meta): the runs
// started with it are traced as that span's children.
func ContextWithTraceparent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return context.WithValue(ctx, traceparentKey{}, traceparent)
}

// Traceparent returns the traceparent ctx carries, or "".
func Traceparent(ctx context.Context) string {
	s, _ := ctx.Value(traceparentKey{}).(string)
	return s
}

var defaultConfig = sync.OnceValue(func() *config.Config {
	c := config.Defaults()
	return &c
})

func (s *Settings) config() *config.Config {
	if s.Config == nil {
		return defaultConfig()
	}
	return s.Config
}

// Budgets returns the configured budgets: idle, idle warning, hard,
// linger, kill grace, and the tool budget of each kind.
func (s *Settings) Budgets() Budgets {
	cfg := s.config()
	return Budgets{Idle: cfg.IdleTimeout.D(), IdleWarning: cfg.IdleWarning.D(), Hard: cfg.Timeout.D(),
		Linger: cfg.Linger.D(), KillGrace: cfg.KillGrace.D(),
		Tool: func(k event.Kind) time.Duration { return cfg.ToolBudget(string(k)).D() }}
}

// ResolveModel returns the agent's own id for a model alias, or model
// itself when it is none.
func (s *Settings) ResolveModel(model, agent string) string {
	if s.Models != nil && model != "" {
		if id, ok := s.Models.Resolve(model, agent); ok {
			return id
		}
	}
	return model
}

// EstimateCost prices usage from the model registry, for agents that
// report no cost (Options.EstimateCost).
func (s *Settings) EstimateCost(model string, u event.Usage) (float64, bool) {
	if s.Models == nil || model == "" {
		return 0, false
	}
	return s.Models.Estimate(model, u)
}

// RunProtocol is the protocol a one-prompt run of agent (a name or an
// alias; "" the configured agent) is made over when its task names none:
// the configuration's [agents.NAME] protocol, "" for the CLI's. A caller
// that wires a task by its protocol before Start completes it (--mock's
// model) sets it from here.
func (s *Settings) RunProtocol(agent string) string {
	cfg := s.config()
	agent = cmp.Or(agent, cfg.Agent)
	if a, err := Lookup(agent); err == nil {
		agent = a.Name()
	}
	return cfg.Agents[agent].Protocol
}

// SessionProtocol is the protocol of a live session of agent (an id or an
// alias; "" for the configured agent) when the task names none: the
// agent's configured protocol when it holds a live session, else its
// default one when that does (a registered agent whose parser is an
// adapters.Conversation: ""), else the agent's own two-way protocol, else
// ACP (LiveProtocol).
func (s *Settings) SessionProtocol(agent string) string {
	cfg := s.config()
	agent = cmp.Or(agent, cfg.Agent)
	a, err := Lookup(agent)
	if err == nil {
		agent = a.Name()
	}
	if p := cfg.Agents[agent].Protocol; p != "" && p != ProtocolCLI {
		return p
	}
	if err == nil {
		if _, live := a.NewParser().(adapters.Conversation); live {
			return ""
		}
	}
	return LiveProtocol(agent)
}

// complete fills what t leaves to the configuration: the agent, model
// (aliases resolved), permissions, the agent's extra arguments, binary and
// environment, PTY, native events, budgets, where to look for binaries.
// What t sets wins; the agent's config args and env go before t's. PTY
// and Raw are on when t or the configuration turns them on: a Task's false
// is "not set", so a caller whose own setting turns them off (harness run
// --pty=false) says so in Config, which it owns.
func (s *Settings) complete(t Task) (Task, error) {
	cfg := s.config()
	t.Agent = cmp.Or(t.Agent, cfg.Agent)
	a, err := Adapter(t.Agent)
	if err == nil {
		t.Agent = a.Name()
	}
	ac := cfg.Agents[t.Agent]
	t.Protocol = cmp.Or(t.Protocol, ac.Protocol)
	takesCommand := TakesCommand(t.Protocol)
	if takesCommand && t.Command == nil {
		t.Command = ac.Command
	}
	if err != nil && (!takesCommand || len(t.Command) == 0) {
		return t, &TaskError{err} // neither ours nor an agent given by its command
	}
	global := cfg.Model
	if b, err := Lookup(t.Agent); err == nil && t.Protocol == ProtocolACP && !acp.TakesModel(&b) {
		// The global model is every agent's default, not a request of
		// this one: over ACP, an agent that takes no model there (OpenCode,
		// Cursor: their own configuration's) runs without it rather than
		// be refused. A model the task or [agents.NAME] names is refused.
		global = ""
	}
	t.Model = s.ResolveModel(cmp.Or(t.Model, global, ac.Model), t.Agent)
	t.Permissions = cmp.Or(t.Permissions, cfg.Permissions, FullAccess)
	t.ExtraArgs = append(slices.Clone(ac.Args), t.ExtraArgs...)
	if t.Binary == "" && ac.Binary != "" {
		t.Binary, t.binaryFrom = ac.Binary, "binary of [agents."+t.Agent+"] in the configuration"
	}
	if t.SearchDirs == nil {
		t.SearchDirs = s.SearchDirs
	}
	t.Env = append(envPairs(ac.Env), t.Env...)
	if t.BaseEnv == nil {
		t.BaseEnv = s.Environ
	}
	t.PTY = t.PTY || cfg.PTY
	t.Raw = t.Raw || cfg.Raw
	if t.Budgets == nil {
		b := s.Budgets()
		t.Budgets = &b
	}
	if s.TelemetryArgs != nil {
		args, err := s.TelemetryArgs(RunInfo{Run: t.Run, Agent: t.Agent, Model: t.Model,
			Protocol: loggedProtocol(t.Protocol), Env: t.Env, Cwd: absCwd(t.Cwd)}, t.ExtraArgs)
		if err != nil {
			return t, &TaskError{err}
		}
		t.ExtraArgs = args
	}
	return t, nil
}

// absCwd is the absolute directory a task's Cwd names, as Prepare
// resolves it ("": the process's).
func absCwd(cwd string) string {
	if cwd == "" {
		cwd, _ = os.Getwd()
		return cwd
	}
	abs, _ := filepath.Abs(cwd)
	return abs
}

// envPairs turns a config env table into sorted KEY=VALUE pairs.
func envPairs(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return out
}

// Prepare completes t from the settings and resolves it as the package's
// Prepare does: what Start would run.
func (s *Settings) Prepare(t Task) (*Command, error) {
	t, err := s.complete(t)
	if err != nil {
		return nil, err
	}
	return Prepare(t)
}

// Start completes t from the settings, resolves it once (Prepare), opens
// its session log when LogDir is set, and starts it: the run of 'harness
// run', of each bench run and of each MCP run_agent. o.EstimateCost
// defaults to the settings'. Errors are those of Start; a session log
// that cannot be written does not stop the run (Run.SessionLog says why).
func (s *Settings) Start(ctx context.Context, t Task, o Options) (*Run, error) {
	return s.start(ctx, t, o, nil)
}

// start is Start, of a live session when live is set.
func (s *Settings) start(ctx context.Context, t Task, o Options, live *Session) (*Run, error) {
	t, err := s.complete(t)
	var c *Command
	switch {
	case err != nil:
	case live != nil:
		c, err = Prepare(t) // a session's first prompt is sent once it is open
	default:
		c, err = prepareRun(t)
	}
	if err != nil {
		closeObservers(o.Observers, nil)
		return nil, err
	}
	c.live = live
	if c.task.Run == "" {
		c.task.Run = event.NewRunID()
	}
	if o.EstimateCost == nil {
		o.EstimateCost = s.EstimateCost
	}
	if s.Telemetry != nil {
		t := c.task
		ob, env := s.Telemetry(ctx, RunInfo{Run: t.Run, Agent: c.Agent, Model: t.Model, Protocol: loggedProtocol(t.Protocol), Env: t.Env, Cwd: c.Cwd})
		// Onto a copy: appended in place, it went into the caller's array
		// when that had room, and a second run's observer took the place
		// of the first's (their Options shared).
		o.Observers = append(slices.Clip(o.Observers), ob)
		c.Env = append(c.Env, env...) // last: exec takes the last of a duplicated key
		c.AddedEnv = append(c.AddedEnv, env...)
	}
	log := &sessionLog{}
	if s.LogDir != "" {
		log.open(s.LogDir, c, s.Version)
		// The log first: an observer that follows the log file (harness
		// serve) finds a line in the file at the Flush that follows it.
		o.Observers = append([]Observer{log.observer()}, o.Observers...)
	}
	r := c.Start(ctx, o)
	r.log = log
	return r, nil
}

// sessionLog is the library's observer that writes a run's session log
// (logger): the event stream, the native lines, and the final meta.
type sessionLog struct {
	sess *logger.Session
	// err is why there is no log, or why it is incomplete: set by Close,
	// on Wait's goroutine, and read by SessionLog on any, hence mu.
	mu  sync.Mutex
	err error
	// agentVersion is the session_start's, for the final meta: the
	// agent tells it only once running (its first lines).
	agentVersion string
}

func (l *sessionLog) open(dir string, c *Command, version string) {
	t := c.task
	perm := t.Permissions // what a reparse's client needs to make the run's requests
	if c.live != nil && c.live.ask {
		perm = Ask
	}
	l.sess, l.err = logger.Open(dir, t.Run, logger.Meta{
		Run: t.Run, Agent: c.Agent, Model: t.Model, PromptPreview: t.Prompt, Cwd: c.Cwd,
		Argv: c.RedactedArgv(), Start: time.Now(), Status: logger.StatusRunning, HarnessVersion: version,
		Protocol: loggedProtocol(t.Protocol), Permissions: perm, Live: c.live != nil, Resume: t.Resume,
	}, logger.WithRedactor(c.redact), logger.WithBufferedEvents())
}

func (l *sessionLog) observer() Observer {
	if l.sess == nil {
		return Observer{}
	}
	return Observer{
		OnEvent: func(ev event.Event) {
			if ss, ok := ev.Body.(*event.SessionStart); ok && ss.AgentVersion != "" {
				l.agentVersion = ss.AgentVersion
			}
		},
		OnLine:   func(line []byte) { l.sess.WriteEvent(line) },
		OnNative: func(stream string, line []byte) { l.sess.WriteNative(stream, line) },
		// The log's lines reach the disk when the harness's own output
		// does: a burst costs one write, not one per event.
		Flush:      func() { l.sess.Flush() },
		selfLocked: true, // logger.Session's writes take its own lock
		Close: func(res *event.Result) {
			m := closeMeta(res)
			m.AgentVersion = l.agentVersion
			if err := l.sess.Close(m); err != nil {
				l.mu.Lock()
				l.err = fmt.Errorf("session log: %w", err)
				l.mu.Unlock()
			}
		},
	}
}

// closeMeta is the final meta of a run from its result.
func closeMeta(r *event.Result) logger.Meta {
	if r == nil {
		return logger.Meta{Status: "unknown"}
	}
	u := r.Usage
	return logger.Meta{Status: r.Status, ExitCode: r.ExitCode, Signal: r.Signal, Usage: &u,
		CostUSD: r.CostUSD, CostEstimated: r.CostEstimated, SessionID: r.SessionID}
}

// FlushSessionLog writes the lines the session log holds in memory to its
// files, so that a reader of the log sees every event the run has emitted
// so far (the log is otherwise written when the agent's output pauses).
// It may be called from any goroutine; after the run it does nothing.
func (r *Run) FlushSessionLog() {
	if r.log != nil && r.log.sess != nil {
		_ = r.log.sess.Flush()
	}
}

// SessionLog returns the path of the run's session log ("" when it has
// none) and why it is missing (from Start on) or incomplete (once Wait
// closed it). It may be called from any goroutine, while Wait runs too.
func (r *Run) SessionLog() (path string, err error) {
	if r.log == nil {
		return "", nil
	}
	if r.log.sess != nil {
		path = r.log.sess.Path()
	}
	r.log.mu.Lock()
	err = r.log.err
	r.log.mu.Unlock()
	if err != nil && r.log.sess == nil {
		err = fmt.Errorf("no session log: %w", err)
	}
	return path, err
}
