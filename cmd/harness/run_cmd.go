package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/logger"
)

// runCmd runs one agent. Settings left unset on the command line come from
// HARNESS_* variables, then harness.toml, then the user's config, then the
// defaults.
type runCmd struct {
	Agent              string         `short:"a" help:"Agent to run: claude, codex, cursor, opencode, gemini (or an alias)."`
	Model              string         `short:"m" help:"Model alias (see 'harness models list') or the agent's own model id."`
	Prompt             string         `short:"p" help:"The task. Also --prompt-file, or stdin when it is piped (at most 16 MiB; over 100 KiB it reaches claude, codex, cursor and opencode on their stdin, gemini up to its 8 MiB)."`
	PromptFile         string         `help:"Read the task from this file (at most 16 MiB)." type:"existingfile"`
	Cwd                string         `help:"Directory the agent works in (default: the current one)." type:"existingdir"`
	Permissions        *string        `help:"full-access (default: a headless run has nobody to approve a tool) or read-only." enum:"full-access,read-only," default:""`
	IdleTimeout        *time.Duration `help:"End the run after this long without output and no tool in flight (0 = off; default 5m)."`
	Timeout            *time.Duration `help:"Wall-clock limit of the run (0 = off; default 60m)."`
	ToolTimeout        *time.Duration `help:"Budget of one tool call, for every kind (default by kind: mcp 2m, read/search/todo 1m, others 5m)."`
	Linger             *time.Duration `help:"How long the agent may stay after its final event before it is ended (default 3s)."`
	KillGrace          *time.Duration `help:"Time between SIGTERM and SIGKILL (default 5s)."`
	PTY                bool           `help:"Run the agent on a pseudo-terminal."`
	Format             string         `short:"f" help:"Output: ndjson (the event stream), text (a readable transcript) or json (one document at the end)." enum:"ndjson,text,json," default:""`
	Output             string         `short:"o" help:"Also write the NDJSON stream to this file." type:"path"`
	Raw                bool           `help:"Also emit the agent's native lines as native events."`
	NoLog              bool           `help:"Do not write a session log."`
	Resume             string         `help:"Continue the agent's session with this id."`
	MaxTurns           int            `help:"Limit the agent's turns (where the agent supports it)."`
	SystemPrompt       string         `help:"Replace the agent's system prompt (where supported)."`
	AppendSystemPrompt string         `help:"Append to the agent's system prompt (where supported)."`
	Binary             string         `help:"Path of the agent's executable."`
	Env                []string       `help:"Extra environment for the agent, KEY=VALUE (repeatable; the value may hold commas). Values are redacted from session logs." placeholder:"K=V" sep:"none"`
	DryRun             bool           `help:"Print the resolved binary, argv, environment keys and cwd; run nothing."`
	Protocol           string         `help:"How harness drives the agent: cli (its headless mode, the default) or acp (the Agent Client Protocol: claude-agent-acp, codex-acp, gemini --acp, opencode acp)." enum:"cli,acp," default:""`
	Mock               string         `help:"Run against the built-in scripted model with this scenario (text, tool, edit, multi, hang, error, overloaded, slow) or a scenario TOML file: no API key, no network."`
	Extra              []string       `arg:"" optional:"" passthrough:"partial" help:"Extra arguments for the agent, after -- (only there: an unknown flag before -- is an error)."`
}

// Validate refuses agent arguments not behind "--": kong's partial
// passthrough already refuses unknown flags, and a bare word before "--"
// would otherwise reach the agent as one of its arguments.
func (c *runCmd) Validate() error {
	if len(c.Extra) > 0 && c.Extra[0] != "--" {
		return fmt.Errorf("run: unexpected argument %q: the task goes in -p, the agent's own arguments after --", c.Extra[0])
	}
	return nil
}

func (c *runCmd) Run(e *env) error {
	if err := c.checkDurations(); err != nil {
		return err
	}
	s, err := loadSettings(e, c.Cwd)
	if err != nil {
		return err
	}
	task, err := c.task(e, s)
	if err != nil {
		return err
	}
	if c.Mock != "" {
		stop, err := attachMock(e, &task, c.Mock, s)
		if err != nil {
			return err
		}
		defer stop()
	}
	if c.DryRun {
		return dryRun(e, task)
	}
	return execute(e, task, s, runOutput{format: firstSet(c.Format, s.cfg.Format, "ndjson"), file: c.Output, log: !c.NoLog && s.cfg.Log})
}

// task builds the harness task from flags over settings.
func (c *runCmd) task(e *env, s *settings) (harness.Task, error) {
	agent := firstSet(c.Agent, s.cfg.Agent)
	if agent == "" {
		return harness.Task{}, usageErrorf("run: no agent: give --agent (claude, codex, cursor, opencode, gemini) or set agent in harness.toml")
	}
	name, err := agentName(s, agent)
	if err != nil {
		return harness.Task{}, err
	}
	prompt, err := readPrompt(e, c.Prompt, c.PromptFile)
	if err != nil {
		return harness.Task{}, err
	}
	for _, kv := range c.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return harness.Task{}, usageErrorf("run: --env %q: want KEY=VALUE", kv)
		}
	}
	ac := s.cfg.Agents[name]
	model := firstSet(c.Model, s.cfg.Model, ac.Model)
	if model != "" && s.models != nil {
		if id, ok := s.models.Resolve(model, name); ok {
			model = id
		}
	}
	t := harness.Task{
		Agent: name,
		Task: adapters.Task{
			Prompt: prompt, Model: model, Cwd: c.Cwd,
			Permissions: firstSet(deref(c.Permissions), s.cfg.Permissions, adapters.FullAccess),
			Resume:      c.Resume, MaxTurns: c.MaxTurns,
			SystemPrompt: c.SystemPrompt, AppendSystemPrompt: c.AppendSystemPrompt,
			ExtraArgs: append(append([]string(nil), ac.Args...), extraArgs(c.Extra)...),
		},
		Binary:     firstSet(c.Binary, ac.Binary),
		SearchDirs: agentDirs(e),
		Env:        append(envPairs(ac.Env), c.Env...),
		BaseEnv:    agentEnviron(),
		PTY:        c.PTY || s.cfg.PTY,
		Raw:        c.Raw || s.cfg.Raw,
		Budgets:    s.budgets(c),
		Protocol:   firstSet(c.Protocol, ac.Protocol),
	}
	if t.Protocol == harness.ProtocolACP {
		t.Command = ac.Command
	}
	return t, nil
}

// agentName is the canonical id of agent, or the name of an ACP agent the
// configuration defines ([agents.NAME] protocol = "acp", command).
func agentName(s *settings, agent string) (string, error) {
	a, err := harness.Adapter(agent)
	if err == nil {
		return a.Name(), nil
	}
	if ac, ok := s.cfg.Agents[agent]; ok && ac.Protocol == harness.ProtocolACP && len(ac.Command) > 0 {
		return agent, nil
	}
	return "", withStatus(exitUsage, err)
}

// maxPrompt caps a prompt: more is a mistake (--prompt-file /dev/zero)
// that would otherwise grow without bound.
const maxPrompt = 16 << 20

// readPrompt takes the prompt from -p, --prompt-file or piped stdin, at
// most maxPrompt bytes of it (reading one more to know).
func readPrompt(e *env, prompt, file string) (string, error) {
	switch {
	case prompt != "" && file != "":
		return "", usageErrorf("run: give --prompt or --prompt-file, not both")
	case prompt != "":
		return prompt, nil
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return "", usageErrorf("run: %v", err)
		}
		defer f.Close()
		return readPromptFrom(f, "--prompt-file "+file)
	}
	if f, ok := e.Stdin.(*os.File); ok && isTerminal(f) {
		return "", usageErrorf("run: no prompt: give -p, --prompt-file, or pipe it on stdin")
	}
	p, err := readPromptFrom(e.Stdin, "stdin")
	if err == nil && strings.TrimSpace(p) == "" {
		return "", usageErrorf("run: no prompt: give -p, --prompt-file, or pipe it on stdin")
	}
	return p, err
}

func readPromptFrom(r io.Reader, from string) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxPrompt+1))
	if err != nil {
		return "", usageErrorf("run: reading the prompt from %s: %v", from, err)
	}
	if len(b) > maxPrompt {
		return "", usageErrorf("run: the prompt from %s is over %d MiB", from, maxPrompt>>20)
	}
	return string(b), nil
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// dryRun prints what would run, as one JSON object.
func dryRun(e *env, t harness.Task) error {
	a, cmd, _, err := harness.Prepare(t)
	var te *harness.TaskError
	if errors.As(err, &te) {
		return withStatus(exitUsage, err)
	}
	keys := map[string]bool{}
	for _, kv := range append(append([]string(nil), cmd.Env...), t.Env...) {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	envKeys := make([]string, 0, len(keys))
	for k := range keys {
		envKeys = append(envKeys, k)
	}
	sort.Strings(envKeys)
	cwd := t.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	out := map[string]any{
		"agent": a.Name(), "binary": cmd.Argv[0], "argv": cmd.Argv, "env_keys": envKeys,
		"cwd": cwd, "stdin": cmd.Stdin != "", "installed": err == nil,
	}
	if err != nil {
		out["not_installed"] = err.Error()
	}
	enc := json.NewEncoder(e.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

type runOutput struct {
	format string
	file   string
	log    bool
}

// execute starts the run, streams its output and maps its end to an exit
// status.
func execute(e *env, t harness.Task, s *settings, o runOutput) error {
	var tee *os.File
	if o.file != "" {
		f, err := createPrivate(o.file)
		if err != nil {
			return usageErrorf("run: %v", err)
		}
		defer f.Close()
		tee = f
	}
	var sess *logger.Session
	opts := harness.Options{EstimateCost: s.estimate}
	// When stdout cannot be written — whoever reads it went away (| head),
	// the disk is full, it was closed — the run is stopped as an interrupt
	// would: the agent and its tools are cleaned up, and the session log
	// keeps the whole stream. A reader that left ends the run quietly (130,
	// as the interrupt it is); any other failure exits 1 with its line.
	var stdoutGone atomic.Bool
	var stdoutErr error // set once, before stdoutGone
	started := make(chan *harness.Run, 1)
	onWriteErr := func(err error) {
		if stdoutGone.Load() {
			return
		}
		if !errors.Is(err, syscall.EPIPE) {
			stdoutErr = err
		}
		stdoutGone.Store(true)
		go func() {
			if r := <-started; r != nil {
				r.Interrupt()
			}
		}()
	}
	// Output is buffered and written out whenever the library says no
	// further event is imminent (Options.Flush): every event leaves as
	// soon as it exists, and a burst of lines costs one write.
	out := &flushWriter{w: bufio.NewWriterSize(e.Stdout, 64<<10), onErr: onWriteErr}
	var teeOut *flushWriter
	if tee != nil {
		// A file that cannot be written does not stop the run (stdout
		// still has the stream); the run exits 1 with its line.
		teeOut = &flushWriter{w: bufio.NewWriterSize(tee, 64<<10)}
	}
	opts.Flush = func() {
		out.Flush()
		if teeOut != nil {
			teeOut.Flush()
		}
	}
	var jsonEvents []json.RawMessage
	text := &textRenderer{w: out, color: colorOK(e, e.Stdout)}
	opts.OnLine = func(line []byte) {
		if sess != nil {
			sess.WriteEvent(line)
		}
		if teeOut != nil {
			teeOut.Write(line)
		}
		switch o.format {
		case "ndjson":
			if !stdoutGone.Load() {
				out.Write(line)
			}
		case "json":
			jsonEvents = append(jsonEvents, json.RawMessage(append([]byte(nil), line[:len(line)-1]...)))
		}
	}
	if o.format == "text" {
		opts.OnEvent = text.Render
	}
	if t.Run == "" {
		t.Run = event.NewRunID()
	}
	if o.log {
		var err error
		sess, err = openLog(e, s, t)
		if err != nil {
			fmt.Fprintf(e.Stderr, "harness: warning: no session log: %v\n", err)
		} else {
			opts.OnNative = func(stream string, line []byte) { sess.WriteNative(stream, line) }
		}
	}
	// Signals are caught before the agent exists, so an early Ctrl-C cannot
	// end the harness and leave the agent unwatched.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run, err := harness.Start(ctx, t, opts)
	started <- run
	if err != nil {
		if sess != nil {
			sess.Close(logger.Meta{Status: event.ResultError})
		}
		return withStatus(exitUsage, err)
	}
	stopSignals := forwardSignals(e, run, sigs)
	res, werr := run.Wait()
	stopSignals()
	if sess != nil {
		if err := sess.Close(closeMeta(res)); err != nil {
			fmt.Fprintf(e.Stderr, "harness: warning: session log: %v\n", err)
		}
	}
	opts.Flush()
	if o.format == "json" && !stdoutGone.Load() {
		doc := map[string]any{"run": run.RunID(), "events": jsonEvents, "result": res}
		enc := json.NewEncoder(e.Stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(doc); err != nil && !errors.Is(err, syscall.EPIPE) {
			stdoutErr = err
		}
	}
	// stdoutErr is read after stdoutGone, which its writer sets after it
	// (or, for json, on this goroutine).
	if gone := stdoutGone.Load(); (gone || o.format == "json") && stdoutErr != nil {
		return withStatus(exitAgentFailed, fmt.Errorf("run: writing the output: %w", stdoutErr))
	}
	if tee != nil {
		if err := teeOut.Err(); err != nil {
			return withStatus(exitAgentFailed, fmt.Errorf("run: -o: %w", err))
		}
		if err := tee.Close(); err != nil {
			return withStatus(exitAgentFailed, fmt.Errorf("run: -o: %w", err))
		}
	}
	return exitFor(werr)
}

// createPrivate creates (or truncates) a file only the user can read: the
// stream holds prompts, code and tool output.
func createPrivate(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
}

// exitFor maps the run's end to the spec's exit status. The stream already
// said why, so only a missing agent gets a line on stderr.
func exitFor(err error) error {
	var nf *harness.NotInstalledError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &nf):
		return withStatus(exitNotFound, err)
	case errors.Is(err, harness.ErrIdleTimeout), errors.Is(err, harness.ErrHardTimeout):
		return withStatus(exitTimeout, nil)
	case errors.Is(err, harness.ErrInterrupted):
		return withStatus(exitInterrupted, nil)
	case errors.Is(err, harness.ErrAgentFailed):
		return withStatus(exitAgentFailed, nil)
	}
	return withStatus(exitAgentFailed, err)
}

// forwardSignals turns SIGINT, SIGTERM and SIGHUP into an interrupt of the
// run, reporting each tool call in flight on stderr; a second SIGINT within
// 2 s kills at once.
func forwardSignals(e *env, run *harness.Run, ch <-chan os.Signal) (stop func()) {
	done := make(chan struct{})
	go func() {
		first := true
		for {
			select {
			case <-done:
				return
			case sig := <-ch:
				if sig == syscall.SIGPIPE {
					continue // a closed stdout is handled where it is written
				}
				if first {
					for _, c := range run.InFlight() {
						fmt.Fprintln(e.Stderr, inFlightLine(c, time.Now()))
					}
					first = false
				}
				run.Interrupt()
			}
		}
	}()
	return func() { close(done) }
}

// inFlightLine is the stderr line for a tool call still running at an
// interrupt. Its names and input are the agent's: termSafe keeps them from
// driving the terminal.
func inFlightLine(c event.OpenCall, now time.Time) string {
	s := c.Start
	line := fmt.Sprintf("tool still running at interrupt: %s (call=%s, kind=%s, elapsed=%.1fs)",
		s.Name, s.CallID, s.Kind, now.Sub(c.Since).Seconds())
	if in := inputSummary(s); in != "" {
		line += " [" + in + "]"
	}
	return termSafe(line)
}

// inputSummary cuts a tool's input for one line: shell commands at 300
// characters, edit old-text at 80.
func inputSummary(s event.ToolStart) string {
	if s.Command != "" {
		return "command=" + oneLineCut(s.Command, 300)
	}
	var in map[string]any
	_ = json.Unmarshal(s.Input, &in)
	var parts []string
	if s.Path != "" {
		parts = append(parts, "path="+s.Path)
	}
	for _, k := range []string{"old_string", "oldText", "old_str", "oldString"} {
		if v, ok := in[k].(string); ok {
			parts = append(parts, k+"="+oneLineCut(v, 80))
		}
	}
	return strings.Join(parts, " ")
}

func colorOK(e *env, w io.Writer) bool {
	if e.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

func firstSet(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// envPairs turns a config env table into sorted KEY=VALUE pairs.
func envPairs(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// extraArgs drops the "--" that kong's passthrough keeps in front of the
// agent's own arguments.
func extraArgs(args []string) []string {
	if len(args) > 0 && args[0] == "--" {
		return args[1:]
	}
	return args
}

// flushWriter is a buffered writer shared by the event sink and the
// flushes the library asks for; onErr learns of a failed write.
type flushWriter struct {
	mu    sync.Mutex
	w     *bufio.Writer
	onErr func(error)
	err   error
}

func (f *flushWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.w.Write(p)
	f.fail(err)
	return n, err
}

// Flush writes out what is buffered.
func (f *flushWriter) Flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil && f.w.Buffered() > 0 {
		f.fail(f.w.Flush())
	}
}

// Err returns the first write error.
func (f *flushWriter) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *flushWriter) fail(err error) {
	if err != nil && f.err == nil {
		f.err = err
		if f.onErr != nil {
			f.onErr(err)
		}
	}
}
