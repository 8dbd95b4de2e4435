package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/ansi"
	"github.com/agentharness/harness/otlp"
)

// runCmd runs one agent. Settings left unset on the command line come from
// HARNESS_* variables, then harness.toml, then the user's config, then the
// defaults.
type runCmd struct {
	Agent              string  `short:"a" help:"Agent to run: ${agents} (or an alias)."`
	Model              string  `short:"m" help:"Model alias (see 'harness models list') or the agent's own model id."`
	Prompt             string  `short:"p" help:"The task. Also --prompt-file, or stdin when it is piped (at most 16 MiB; over 100 KiB it reaches claude, codex, cursor and opencode on their stdin, gemini up to its 8 MiB)."`
	PromptFile         string  `help:"Read the task from this file (at most 16 MiB)." type:"existingfile"`
	Cwd                string  `help:"Directory the agent works in (default: the current one)." type:"existingdir"`
	Permissions        *string `help:"full-access (default: a headless run has nobody to approve a tool) or read-only." enum:"full-access,read-only," default:"" notempty:""`
	budgetFlags        `embed:""`
	otlpFlags          `embed:""`
	PTY                *bool  `help:"Run the agent on a pseudo-terminal."`
	Format             string `short:"f" help:"Output: ndjson (the event stream), text (a readable transcript) or json (one document at the end)." enum:"ndjson,text,json," default:""`
	Output             string `short:"o" help:"Also write the NDJSON stream to this file." type:"path"`
	Raw                *bool  `help:"Also emit the agent's native lines as native events."`
	NoLog              *bool  `help:"Do not write a session log."`
	Resume             string `help:"Continue the agent's session with this id."`
	MaxTurns           int    `help:"Limit the agent's turns (where the agent supports it)."`
	SystemPrompt       string `help:"Replace the agent's system prompt (where supported)."`
	AppendSystemPrompt string `help:"Append to the agent's system prompt (where supported)."`
	binaryFlag         `embed:""`
	Env                []string `help:"Extra environment for the agent, KEY=VALUE (repeatable; the value may hold commas). Values are redacted from session logs." placeholder:"K=V" sep:"none"`
	DryRun             bool     `help:"Print the resolved binary, argv, environment keys and cwd (and the --isolate the argv would run in); run nothing."`
	Protocol           string   `help:"How harness drives the agent: cli (its headless mode, the default), acp (the Agent Client Protocol: ${acpcommands}), stream-json (Claude Code's own) or app-server (Codex's own)." enum:"${protocols}," default:""`
	Mock               string   `help:"Run against the built-in scripted model with this scenario (${mockscenarios}) or a scenario TOML file: no API key, no network." notempty:"name a scenario, or leave --mock out to run the agent's own model"`
	Isolate            string   `help:"Run the agent isolated: none, bwrap (the host read-only but the working directory, a private HOME and /tmp), podman or docker (in a container of --image, the working directory bound at its path). See docs/bench.md." enum:"none,bwrap,podman,docker" default:"none"`
	Image              string   `help:"The image of --isolate podman or docker."`
	Extra              []string `arg:"" optional:"" passthrough:"partial" help:"Extra arguments for the agent, after -- (only there: an unknown flag before -- is an error)."`
}

// Validate refuses agent arguments not behind "--": kong's partial
// passthrough already refuses unknown flags, and a bare word before "--"
// would otherwise reach the agent as one of its arguments.
func (c *runCmd) Validate() error {
	if err := c.budgetFlags.Validate(); err != nil { // this Validate hides the embedded one
		return err
	}
	if len(c.Extra) > 0 && c.Extra[0] != "--" {
		return fmt.Errorf("unexpected argument %q: the task goes in -p, the agent's own arguments after --", c.Extra[0])
	}
	if c.Image != "" && c.Isolate != "podman" && c.Isolate != "docker" {
		// Not honoured elsewhere: said, not dropped.
		return fmt.Errorf("--image is for --isolate podman or docker")
	}
	return nil
}

func (c *runCmd) Run(e *env) error {
	s, err := loadSettings(e, c.Cwd)
	if err != nil {
		return err
	}
	// *bool flags, over the configuration when given: --pty=false wins
	// over pty = true as --pty over false (harness.toml.example).
	boolFlagOver(&s.cfg.PTY, c.PTY)
	boolFlagOver(&s.cfg.Raw, c.Raw)
	boolFlagOver(&s.cfg.Log, negated(c.NoLog))
	lib := s.library(e, true)
	task, err := c.task(e, s, lib)
	if err != nil {
		return err
	}
	var otlpCfg *otlp.Config // a dry run's export, whose variables it lists
	if !c.DryRun {
		stop, err := c.otlpFlags.start(e, s, lib)
		if err != nil {
			return err
		}
		defer stop()
	} else if cfg, ok, err := c.otlpFlags.agentArgs(e, s, lib); err != nil {
		return err // the arguments --otlp gives the agent show as they would run
	} else if ok {
		otlpCfg = &cfg
	}
	if c.Mock != "" {
		stop, err := attachMock(&task, c.Mock, !c.DryRun, e.Stderr)
		if err != nil {
			return err
		}
		defer stop()
	}
	if c.Isolate != "none" && c.Isolate != "" && !c.DryRun {
		stop, err := c.isolate(lib, &task)
		if err != nil {
			return err
		}
		defer stop()
	}
	if c.DryRun {
		return c.dryRun(e, lib, task, otlpCfg)
	}
	return execute(e, lib, task, runOutput{format: cmp.Or(c.Format, s.cfg.Format, "ndjson"), file: c.Output})
}

// task builds the harness task from the flags; the library completes it
// from the settings.
func (c *runCmd) task(e *env, s *settings, lib *harness.Settings) (harness.Task, error) {
	agent := cmp.Or(c.Agent, s.cfg.Agent)
	if agent == "" {
		return harness.Task{}, usageErrorf("run: no agent: give --agent (%s) or set agent in harness.toml", strings.Join(harness.AgentNames(), ", "))
	}
	name, err := agentName(s, agent)
	if err != nil {
		return harness.Task{}, err
	}
	prompt, err := readPrompt(e, "run", c.Prompt, c.PromptFile)
	if err != nil {
		return harness.Task{}, err
	}
	if err := checkEnv("run", c.Env); err != nil {
		return harness.Task{}, err
	}
	// No PTY or Raw: they come from lib's configuration, which the flags
	// are over (Run); a Task's false could not turn off its true.
	return harness.Task{
		Agent: name, Prompt: prompt, Model: c.Model, Cwd: c.Cwd, Permissions: deref(c.Permissions),
		Resume: c.Resume, MaxTurns: c.MaxTurns, SystemPrompt: c.SystemPrompt, AppendSystemPrompt: c.AppendSystemPrompt,
		ExtraArgs: extraArgs(c.Extra), Binary: c.Binary, Env: c.Env,
		// The configuration's protocol, set here: --mock wires the model by it (pointAt).
		Budgets: c.over(lib.Budgets()), Protocol: cmp.Or(c.Protocol, lib.RunProtocol(name)),
	}, nil
}

// checkEnv rejects an --env that is not KEY=VALUE. It names the flag by
// its position, never its text: a malformed one is most often the bare
// secret (an --env "sk-…" that lost its KEY=), as the configuration's env
// tables' errors name only the key.
func checkEnv(cmd string, env []string) error {
	for i, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return usageErrorf("%s: --env #%d: want KEY=VALUE (its text is not shown: it may be a secret)", cmd, i+1)
		}
	}
	return nil
}

// agentName is the canonical id of agent, or the name of an agent the
// configuration defines by its command ([agents.NAME] protocol = "acp",
// command: a protocol that takes one).
func agentName(s *settings, agent string) (string, error) {
	a, err := harness.Adapter(agent)
	if err == nil {
		return a.Name(), nil
	}
	if ac, ok := s.cfg.Agents[agent]; ok && harness.TakesCommand(ac.Protocol) && len(ac.Command) > 0 {
		return agent, nil
	}
	return "", withStatus(exitUsage, err)
}

// maxPrompt caps a prompt: more is a mistake (--prompt-file /dev/zero)
// that would otherwise grow without bound.
const maxPrompt = 16 << 20

// readPrompt takes the prompt from -p, --prompt-file or piped stdin, at
// most maxPrompt bytes of it (reading one more to know).
func readPrompt(e *env, cmd, prompt, file string) (string, error) {
	switch {
	case prompt != "" && file != "":
		return "", usageErrorf("%s: give --prompt or --prompt-file, not both", cmd)
	case prompt != "":
		if strings.TrimSpace(prompt) == "" {
			// As a blank stdin is: nothing for the agent to do.
			return "", usageErrorf("%s: no prompt: -p is blank", cmd)
		}
		return prompt, nil
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return "", usageErrorf("%s: %v", cmd, err)
		}
		defer f.Close()
		p, err := readPromptFrom(f, cmd, "--prompt-file "+file)
		if err == nil && strings.TrimSpace(p) == "" {
			return "", usageErrorf("%s: no prompt: --prompt-file %s is blank", cmd, file)
		}
		return p, err
	}
	if f, ok := e.Stdin.(*os.File); ok && isTerminal(f) {
		return "", usageErrorf("%s: no prompt: give -p, --prompt-file, or pipe it on stdin", cmd)
	}
	p, err := readPromptFrom(e.Stdin, cmd, "stdin")
	if err == nil && strings.TrimSpace(p) == "" {
		return "", usageErrorf("%s: no prompt: give -p, --prompt-file, or pipe it on stdin", cmd)
	}
	return p, err
}

func readPromptFrom(r io.Reader, cmd, from string) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxPrompt+1))
	if err != nil {
		return "", usageErrorf("%s: reading the prompt from %s: %v", cmd, from, err)
	}
	if len(b) > maxPrompt {
		return "", usageErrorf("%s: the prompt from %s is over %d MiB", cmd, from, maxPrompt>>20)
	}
	return string(b), nil
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// dryRun prints what would run, as one JSON object. An isolated run's
// argv is what runs inside the isolation, which it names (it is checked
// as the run would check it, but not made).
// With the export on (otlp), its env_keys also hold what each run is
// given at its start: TRACEPARENT, and the agent's own exporter's
// variables where harness turns it on (otlp.AgentEnv).
func (c *runCmd) dryRun(e *env, lib *harness.Settings, t harness.Task, otlpCfg *otlp.Config) error {
	cmd, err := lib.Prepare(t)
	if err != nil {
		return withStatus(exitUsage, err)
	}
	isolated := c.Isolate != "none" && c.Isolate != ""
	if isolated {
		if err := c.checkIsolate(); err != nil {
			return err
		}
	}
	envKeys := make([]string, 0, len(cmd.AddedEnv))
	for _, kv := range cmd.AddedEnv {
		k, _, _ := strings.Cut(kv, "=")
		envKeys = append(envKeys, k)
	}
	if otlpCfg != nil {
		envKeys = append(envKeys, "TRACEPARENT")
		if otlp.AgentExports(cmd.Agent, t.Protocol, *otlpCfg) {
			for _, kv := range otlp.AgentEnv(cmd.Agent, *otlpCfg) {
				k, _, _ := strings.Cut(kv, "=")
				envKeys = append(envKeys, k)
			}
		}
	}
	sort.Strings(envKeys)
	envKeys = slices.Compact(envKeys)
	out := map[string]any{
		"agent": cmd.Agent, "binary": cmd.Argv[0], "argv": cmd.ShownArgv(), "env_keys": envKeys,
		"cwd": cmd.Cwd, "stdin": cmd.Stdin != "", "installed": cmd.NotInstalled == nil,
	}
	if cmd.NotInstalled != nil {
		out["not_installed"] = cmd.NotInstalled.Error()
	}
	if isolated {
		out["isolate"] = c.Isolate
		if c.Image != "" {
			out["image"] = c.Image
		}
	}
	return writeJSON(e, out)
}

type runOutput struct {
	format string
	file   string
}

// execute starts the run, streams its output and maps its end to an exit
// status.
func execute(e *env, lib *harness.Settings, t harness.Task, o runOutput) error {
	// A task Start would refuse (a usage error) is refused before -o is
	// opened: a refused run must leave an existing file as it was. (Start's
	// one check beyond Prepare's, a blank prompt, readPrompt made.)
	if _, err := lib.Prepare(t); err != nil {
		return withStatus(exitUsage, err)
	}
	sink, err := newRunSink(e, o)
	if err != nil {
		return err
	}
	defer sink.close()
	opts := sink.options()
	// Signals are caught before the agent exists, so an early Ctrl-C cannot
	// end the harness and leave the agent unwatched.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	pipeOwned.Store(true)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run, err := lib.Start(ctx, t, opts)
	sink.started <- run
	if err != nil {
		return withStatus(exitUsage, err)
	}
	_, logErr := run.SessionLog()
	if logErr != nil {
		fmt.Fprintf(e.Stderr, "harness: warning: %v\n", logErr)
	}
	stopSignals := forwardSignals(e, run, sigs)
	res, werr := run.Wait()
	stopSignals()
	if _, err := run.SessionLog(); err != nil && logErr == nil {
		fmt.Fprintf(e.Stderr, "harness: warning: %v\n", err)
	}
	if err := sink.finish(run, res); err != nil {
		return err
	}
	return exitFor(werr)
}

// runSink is where a run's stream goes: stdout in the format asked for,
// and the -o file.
//
// When stdout cannot be written — whoever reads it went away (| head),
// the disk is full, it was closed — the run is stopped as an interrupt
// would: the agent and its tools are cleaned up, and the session log
// keeps the whole stream. A reader that left ends the run quietly (130,
// as the interrupt it is); any other failure exits 1 with its line.
type runSink struct {
	e      *env
	format string
	// Output is buffered and written out whenever the library says no
	// further event is imminent (Options.Flush): every event leaves as
	// soon as it exists, and a burst of lines costs one write.
	out *flushWriter
	// tee and teeOut are the -o file, nil without one. A file that cannot
	// be written does not stop the run (stdout still has the stream); the
	// run exits 1 with its line.
	tee        *os.File
	teeOut     *flushWriter
	jsonEvents []json.RawMessage
	stdoutGone atomic.Bool
	stdoutErr  error             // set once, before stdoutGone
	started    chan *harness.Run // the run to interrupt when stdout is gone
}

func newRunSink(e *env, o runOutput) (*runSink, error) {
	s := &runSink{e: e, format: o.format, started: make(chan *harness.Run, 1)}
	if o.file != "" {
		f, err := createPrivate(o.file)
		if err != nil {
			return nil, usageErrorf("run: %v", err)
		}
		s.tee = f
		s.teeOut = &flushWriter{w: bufio.NewWriterSize(f, 64<<10)}
	}
	s.out = &flushWriter{w: bufio.NewWriterSize(e.Stdout, 64<<10), onErr: s.stdoutFailed}
	return s, nil
}

// close closes the -o file (again, after finish: its error is finish's).
func (s *runSink) close() {
	if s.tee != nil {
		s.tee.Close()
	}
}

// stdoutFailed stops the run once stdout cannot be written.
func (s *runSink) stdoutFailed(err error) {
	if s.stdoutGone.Load() {
		return
	}
	if !errors.Is(err, syscall.EPIPE) {
		s.stdoutErr = err
	}
	s.stdoutGone.Store(true)
	go func() {
		if r := <-s.started; r != nil {
			r.Interrupt()
		}
	}()
}

// options are the run's callbacks writing to the sink.
func (s *runSink) options() harness.Options {
	var opts harness.Options
	opts.Flush = s.flush
	opts.OnLine = s.line
	if s.format == "text" {
		opts.OnEvent = (&textRenderer{w: s.out, color: colorOK(s.e, s.e.Stdout)}).Render
	}
	return opts
}

func (s *runSink) flush() {
	s.out.Flush()
	if s.teeOut != nil {
		s.teeOut.Flush()
	}
}

func (s *runSink) line(line []byte) {
	if s.teeOut != nil {
		s.teeOut.Write(line)
	}
	switch s.format {
	case "ndjson":
		if !s.stdoutGone.Load() {
			s.out.Write(line)
		}
	case "json":
		s.jsonEvents = append(s.jsonEvents, json.RawMessage(append([]byte(nil), line[:len(line)-1]...)))
	}
}

// finish writes what is left once the run has ended (the json document)
// and returns the error of an output that failed.
func (s *runSink) finish(run *harness.Run, res *event.Result) error {
	s.flush()
	if s.format == "json" && !s.stdoutGone.Load() {
		doc := map[string]any{"run": run.RunID(), "events": s.jsonEvents, "result": res}
		enc := json.NewEncoder(s.e.Stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(doc); err != nil {
			// The run is over: nothing is left to stop, only to report.
			if !errors.Is(err, syscall.EPIPE) {
				s.stdoutErr = err
			}
			s.stdoutGone.Store(true)
		}
	}
	// stdoutErr is read after stdoutGone, which its writer sets after it
	// (or, for json, on this goroutine).
	gone := s.stdoutGone.Load()
	if gone && s.stdoutErr != nil {
		return withStatus(exitAgentFailed, fmt.Errorf("run: writing the output: %w", s.stdoutErr))
	}
	if s.tee != nil {
		if err := s.teeOut.Err(); err != nil {
			return withStatus(exitAgentFailed, fmt.Errorf("run: -o: %w", err))
		}
		err := s.tee.Close()
		s.tee = nil
		if err != nil {
			return withStatus(exitAgentFailed, fmt.Errorf("run: -o: %w", err))
		}
	}
	if gone {
		// The reader left (| head): whatever the run's own end, what it
		// printed was not all read, so the run ends as the interrupt it
		// is (130), quietly, in every format; -f json finds out only
		// here, after the run.
		return withStatus(exitInterrupted, nil)
	}
	return nil
}

// createPrivate creates (or truncates) a file only the user can read: the
// stream holds prompts, code and tool output. An existing regular file is
// made 0600 before it is truncated (the mode given to OpenFile is only a
// new file's), and is left whole when that fails. Anything else (/dev/null,
// a FIFO) keeps its mode: it is not the user's file to change.
func createPrivate(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Mode().IsRegular() {
		if fi.Mode().Perm() != 0o600 {
			err = f.Chmod(0o600)
		}
		if err == nil {
			err = f.Truncate(0)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// outputTo is where a command writes its -o: stdout when path is "",
// else the file (createPrivate), which closeOut closes.
func outputTo(e *env, path string) (w io.Writer, closeOut func(), err error) {
	if path == "" {
		return e.Stdout, func() {}, nil
	}
	f, err := createPrivate(path)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
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
// 2 s kills at once. stop returns once the report is written, or a
// second later: a stalled stderr must not keep harness from exiting.
//
// The interrupt goes first, and the report is written by a goroutine of
// its own: stderr may be stalled as stdout may (a reader that does not
// read, a terminal paused with ^S), and neither the interrupt nor the next
// signal may wait for it.
func forwardSignals(e *env, run *harness.Run, ch <-chan os.Signal) (stop func()) {
	done, loopDone := make(chan struct{}), make(chan struct{})
	var reported chan struct{} // closed once the report is written; set by the loop
	go func() {
		defer close(loopDone)
		first := true
		for {
			select {
			case <-done:
				return
			case sig := <-ch:
				if sig == syscall.SIGPIPE {
					continue // a closed stdout is handled where it is written
				}
				run.Interrupt()
				if first {
					first = false
					reported = reportInFlight(e, run.InFlight())
				}
			}
		}
	}()
	return func() {
		close(done)
		<-loopDone
		awaitReport(reported)
	}
}

// reportInFlight writes a line per tool call in flight at an interrupt on
// stderr, from a goroutine of its own (stderr may be stalled); the channel
// is closed once they are written.
func reportInFlight(e *env, calls []event.OpenCall) chan struct{} {
	now, written := time.Now(), make(chan struct{})
	go func() {
		defer close(written)
		for _, c := range calls {
			fmt.Fprintln(e.Stderr, inFlightLine(c, now))
		}
	}()
	return written
}

// awaitReport waits for reportInFlight's lines, a second at most.
func awaitReport(reported chan struct{}) {
	if reported == nil {
		return
	}
	select {
	case <-reported:
	case <-time.After(time.Second):
	}
}

// inFlightLine is the stderr line for a tool call still running at an
// interrupt. Its names and input are the agent's: ansi.TermSafe keeps them from
// driving the terminal.
func inFlightLine(c event.OpenCall, now time.Time) string {
	s := c.Start
	line := fmt.Sprintf("tool still running at interrupt: %s (call=%s, kind=%s, elapsed=%.1fs)",
		s.Name, s.CallID, s.Kind, now.Sub(c.Since).Seconds())
	if in := inputSummary(s); in != "" {
		line += " [" + in + "]"
	}
	return ansi.TermSafe(line)
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

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
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
