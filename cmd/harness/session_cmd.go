package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/ansi"
	"github.com/agentharness/harness/linescan"
)

// stdinLine is a line of the session's stdin; over when it was longer
// than maxPrompt bytes (then text is nil: no command is that long).
type stdinLine struct {
	text []byte
	over bool
}

// readCommands sends each line of stdin to cmds, and closes it at the end
// of input. A line over maxPrompt bytes goes as over, and the lines after
// it are read as any: a scanner's "token too long" ended the input there.
func readCommands(e *env, cmds chan<- stdinLine) {
	defer close(cmds)
	err := linescan.Scan(e.Stdin, maxPrompt, func(line []byte, dropped int64) error {
		if dropped > 0 {
			cmds <- stdinLine{over: true}
		} else {
			cmds <- stdinLine{text: bytes.Clone(line)}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(e.Stderr, "harness: session: reading stdin: %v\n", err)
	}
}

// command carries out line n of stdin; done at an end command. A line
// that is no command is reported on stderr and skipped: the session goes
// on. On a terminal, a line that is not JSON is a prompt. held is a
// prompt the session has no room for yet (harness.ErrQueueFull): it is to
// be sent again once a turn has ended, before any line after it is read.
func (c *sessionCmd) command(e *env, sess *harness.Session, asks *askDenier, in stdinLine, n int, terminal bool) (done bool, held string) {
	if in.over {
		fmt.Fprintf(e.Stderr, "harness: session: line %d: over %d MiB, skipped\n", n, maxPrompt>>20)
		return false, ""
	}
	line := in.text
	if len(bytes.TrimSpace(line)) == 0 {
		return false, ""
	}
	var cmd sessionCommand
	if err := json.Unmarshal(line, &cmd); err != nil {
		if !terminal {
			fmt.Fprintf(e.Stderr, "harness: session: line %d: not a JSON command: %v\n", n, err)
			return false, ""
		}
		cmd = sessionCommand{Type: "prompt", Text: string(line)}
	}
	switch cmd.Type {
	case "prompt":
		// A blank prompt is the library's to refuse (harness.ErrBlankPrompt):
		// reported like any other refusal.
		if err := sess.Send(cmd.Text); errors.Is(err, harness.ErrQueueFull) {
			return false, cmd.Text
		} else if err != nil {
			fmt.Fprintf(e.Stderr, "harness: session: line %d: %v\n", n, err)
		}
	case "interrupt":
		sess.Interrupt()
	case "answer":
		if cmd.CallID == "" || cmd.Allow == nil {
			fmt.Fprintf(e.Stderr, "harness: session: line %d: an answer needs call_id and allow\n", n)
		} else if !sess.Answer(cmd.CallID, *cmd.Allow) {
			fmt.Fprintf(e.Stderr, "harness: session: line %d: no permission request %q is waiting\n", n, ansi.TermSafe(cmd.CallID))
		} else {
			asks.answered(cmd.CallID)
		}
	case "end":
		return true, ""
	default:
		fmt.Fprintf(e.Stderr, "harness: session: line %d: unknown command type %q (want prompt, interrupt, answer or end)\n", n, ansi.TermSafe(cmd.Type))
	}
	return false, ""
}

// sessionCmd holds a live session: one agent process, a turn per prompt
// read on stdin (docs/supervision.md, "Live sessions").
type sessionCmd struct {
	Agent       string  `short:"a" help:"Agent to run: ${liveagents} (or an alias), or an ACP agent of the configuration."`
	Model       string  `short:"m" help:"Model alias (see 'harness models list') or the agent's own model id."`
	Cwd         string  `help:"Directory the agent works in (default: the current one)." type:"existingdir"`
	Permissions *string `help:"full-access (default), read-only, or ask: each permission request is a permission_request event, answered by an answer command (denied after --ask-timeout)." enum:"full-access,read-only,ask," default:"" notempty:""`
	budgetFlags `embed:""`
	TurnTimeout *time.Duration `help:"Wall-clock limit of one turn: the agent is asked to end it, and the turn ends timeout (0 = off, the default)."`
	AskTimeout  time.Duration  `help:"How long a permission request waits for its answer before it is denied (0 = the default, 5m)." default:"5m"`
	Protocol    string         `help:"The agent's two-way protocol: acp (the Agent Client Protocol: ${acpcommands}), stream-json (Claude Code's own) or app-server (Codex's own). Default: the agent's own where harness speaks it, else acp." enum:"${liveprotocols}," default:""`
	Raw         *bool          `help:"Also emit the agent's native lines as native events."`
	NoLog       *bool          `help:"Do not write a session log."`
	binaryFlag  `embed:""`
	Env         []string `help:"Extra environment for the agent, KEY=VALUE (repeatable). Values are redacted from session logs." placeholder:"K=V" sep:"none"`
	Mock        string   `help:"Run against the built-in scripted model with this scenario or a scenario TOML file: no API key, no network." notempty:"name a scenario, or leave --mock out to run the agent's own model"`
	Resume      string   `help:"Continue the agent's session with this id (its session_start's session_id): Claude over stream-json, Codex over app-server, an ACP agent by session/resume or session/load."`
}

// Validate checks the budgets (this Validate hides the embedded one).
func (c *sessionCmd) Validate() error {
	if err := c.budgetFlags.Validate(); err != nil {
		return err
	}
	if c.TurnTimeout != nil && *c.TurnTimeout < 0 {
		return fmt.Errorf("--turn-timeout %s: a budget cannot be negative (0 turns it off)", *c.TurnTimeout)
	}
	if c.AskTimeout < 0 {
		// 0 is not off: a request then waits harness.DefaultAskDeadline.
		return fmt.Errorf("--ask-timeout %s: a deadline cannot be negative (0 = the default, %s)", c.AskTimeout, formatDuration(harness.DefaultAskDeadline))
	}
	return nil
}

// sessionCommand is one line of the session's stdin.
type sessionCommand struct {
	Type   string `json:"type"` // prompt, interrupt, answer, end
	Text   string `json:"text"`
	CallID string `json:"call_id"`
	Allow  *bool  `json:"allow"`
}

func (c *sessionCmd) Run(e *env) error {
	s, err := loadSettings(e, c.Cwd)
	if err != nil {
		return err
	}
	// Over the configuration when given, off as on (as run's).
	boolFlagOver(&s.cfg.Raw, c.Raw)
	boolFlagOver(&s.cfg.Log, negated(c.NoLog))
	lib := s.library(e, true)
	agent := c.Agent
	if agent == "" {
		agent = s.cfg.Agent
	}
	if agent == "" {
		return usageErrorf("session: no agent: give --agent (%s) or set agent in harness.toml", strings.Join(harness.LiveAgents(), ", "))
	}
	name, err := agentName(s, agent)
	if err != nil {
		return err
	}
	if err := checkEnv("session", c.Env); err != nil {
		return err
	}
	task := harness.Task{Agent: name, Model: c.Model, Cwd: c.Cwd, Permissions: deref(c.Permissions),
		Binary: c.Binary, Env: c.Env, Budgets: c.over(lib.Budgets()), Protocol: cmp.Or(c.Protocol, lib.SessionProtocol(name)), Resume: c.Resume}
	if c.Mock != "" {
		stop, err := attachMock(&task, c.Mock, true, e.Stderr)
		if err != nil {
			return err
		}
		defer stop()
	}
	// A reader of stdout that went away (| head) ends the session as an
	// interrupt does, quietly: the agent and its tools are cleaned up.
	// SIGPIPE is caught, so that the write fails (EPIPE) rather than the
	// signal killing harness with the run's processes left behind.
	outGone := make(chan struct{})
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	pipeOwned.Store(true)
	defer signal.Stop(pipe)
	out := &flushWriter{w: bufio.NewWriterSize(e.Stdout, 64<<10), onErr: func(error) { close(outGone) }}
	so := harness.SessionOptions{AskDeadline: c.AskTimeout, TurnTimeout: deref(c.TurnTimeout)}
	so.OnLine = func(line []byte) { out.Write(line) }
	so.Flush = out.Flush
	// A turn's end makes room for a prompt held (harness.ErrQueueFull).
	turnEnded := make(chan struct{}, 1)
	asks := newAskDenier(e)
	so.OnEvent = func(ev event.Event) {
		if ev.Type == event.TypeTurnEnd {
			select {
			case turnEnded <- struct{}{}:
			default:
			}
		}
		asks.observe(ev)
	}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sess, err := lib.StartSession(ctx, task, so)
	if ca := (*harness.CannotAskError)(nil); errors.As(err, &ca) {
		return withStatus(exitUsage, fmt.Errorf("--permissions ask: %s", ca.Why))
	}
	if err != nil {
		return withStatus(exitUsage, err)
	}
	over := make(chan struct{})
	go func() { sess.Wait(); close(over) }()
	cmds := make(chan stdinLine)
	go readCommands(e, cmds)
	terminal := false
	if f, ok := e.Stdin.(*os.File); ok {
		terminal = isTerminal(f)
	}
	n := 0
	var reported chan struct{} // the first signal's report of the tool calls in flight
	defer func() { awaitReport(reported) }()
	// held is a prompt the session had no room for: stdin is not read
	// again until a turn has ended and it is sent, so a writer faster
	// than the agent waits rather than loses prompts.
	var held string
	var ended <-chan stdinLine // stdin after an end command
loop:
	for {
		next := cmds
		if held != "" {
			next = nil
		}
		select {
		case <-sigs:
			sess.Stop() // the whole session ends, as a run's interrupt
			reported = reportInFlight(e, sess.InFlight())
			break loop
		case <-over:
			break loop // the agent ended it (died, a budget)
		case <-outGone:
			sess.Stop()
			break loop
		case <-turnEnded:
			if held == "" {
				continue
			}
			switch err := sess.Send(held); {
			case errors.Is(err, harness.ErrQueueFull):
				continue
			case err != nil:
				fmt.Fprintf(e.Stderr, "harness: session: line %d: %v\n", n, err)
			}
			held = ""
		case line, ok := <-next:
			if !ok {
				asks.inputEnded(sess) // end of input
				break loop
			}
			n++
			var done bool
			if done, held = c.command(e, sess, asks, line, n, terminal); done {
				asks.inputEnded(sess)
				ended = cmds
				break loop
			}
		}
	}
	defer asks.stop()
	after := skipAfterEnd(e, ended, n)
	werr := closeSession(sess, sigs, func() {
		if reported == nil {
			reported = reportInFlight(e, sess.InFlight())
		}
	})
	after()
	out.Flush()
	if err := out.Err(); errors.Is(err, syscall.EPIPE) {
		return withStatus(exitInterrupted, nil)
	} else if err != nil {
		return withStatus(exitAgentFailed, fmt.Errorf("session: writing the output: %w", err))
	}
	return exitFor(werr)
}

// skipAfterEnd reads the lines of stdin (cmds) after the end command at
// line n while the session ends: none is carried out, and the first that
// is not blank is reported on stderr, once. The function it returns stops
// the reading; a line already read by then (one stdin held) is reported
// too. A nil cmds (no end command) reads nothing.
func skipAfterEnd(e *env, cmds <-chan stdinLine, n int) (stop func()) {
	if cmds == nil {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	end := n
	told := false
	skip := func(in stdinLine) {
		n++
		if !told && (in.over || len(bytes.TrimSpace(in.text)) > 0) {
			told = true
			fmt.Fprintf(e.Stderr, "harness: session: line %d: after the end command (line %d): skipped, and so is any line after it\n", n, end)
		}
	}
	go func() {
		defer close(done)
		for {
			select {
			case in, ok := <-cmds:
				if !ok {
					return
				}
				skip(in)
			case <-quit:
				for !told { // the lines already read, until one is told
					select {
					case in, ok := <-cmds:
						if !ok {
							return
						}
						skip(in)
					default:
						return
					}
				}
				return
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// closeSession ends the session once the turns sent are answered
// (Session.Close), which takes as long as they do: a signal meanwhile
// still ends it at once, as one before the end of input does, and a
// second within 2 s of the first kills the agent at once, as for a run.
// stopped is called after each signal's Stop.
func closeSession(sess *harness.Session, sigs <-chan os.Signal, stopped func()) error {
	closed := make(chan error, 1)
	go func() {
		_, err := sess.Close()
		closed <- err
	}()
	for {
		select {
		case <-sigs:
			sess.Stop()
			stopped()
		case err := <-closed:
			return err
		}
	}
}

// askDenier denies the permission requests nobody can answer any more:
// once the input has ended (an end command, or EOF), no answer command
// can come, so the requests still waiting and those made later are
// denied at once rather than at their --ask-timeout each. The stream
// says so as for any denied request: the call ends denied.
type askDenier struct {
	e       *env
	mu      sync.Mutex
	pending []string      // call ids of the requests of the turn in progress
	ended   bool          // the input has ended: requests are denied
	queue   []string      // requests to deny, for the worker
	wake    chan struct{} // the worker has requests to deny
	quit    chan struct{}
	done    chan struct{}
}

func newAskDenier(e *env) *askDenier {
	return &askDenier{e: e, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// observe follows the requests: made (permission_request), and gone
// with their turn (turn_end: no protocol asks across turns). It runs
// under the session's lock, so it never answers itself: the worker does.
func (a *askDenier) observe(ev event.Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch v := ev.Body.(type) {
	case *event.PermissionRequest:
		if a.ended {
			a.queue = append(a.queue, v.CallID)
			a.poke()
		} else {
			a.pending = append(a.pending, v.CallID)
		}
	case *event.TurnEnd:
		a.pending = a.pending[:0]
	}
}

// answered forgets the request of callID, answered by the caller.
func (a *askDenier) answered(callID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pending = slices.DeleteFunc(a.pending, func(id string) bool { return id == callID })
}

func (a *askDenier) poke() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// inputEnded denies the requests waiting, and from now on every request
// made, from a goroutine of its own (stop ends it).
func (a *askDenier) inputEnded(sess *harness.Session) {
	a.mu.Lock()
	a.ended = true
	a.queue = append(a.queue, a.pending...)
	a.pending = nil
	a.poke()
	a.mu.Unlock()
	go func() {
		defer close(a.done)
		for {
			select {
			case <-a.quit:
				return
			case <-a.wake:
			}
			a.mu.Lock()
			ids := a.queue
			a.queue = nil
			a.mu.Unlock()
			for _, id := range ids {
				if sess.Answer(id, false) {
					fmt.Fprintf(a.e.Stderr, "harness: session: permission request %q denied: the input has ended, no answer can come\n", ansi.TermSafe(id))
				}
			}
		}
	}()
}

// stop ends the worker, if it was started.
func (a *askDenier) stop() {
	a.mu.Lock()
	started := a.ended
	a.mu.Unlock()
	if started {
		close(a.quit)
		<-a.done
	}
}
