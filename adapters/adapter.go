// Package adapters defines the contract between harness and one agent CLI:
// how to build its command line for a task, and how to turn its native
// output, line by line, into unified events. Each agent lives in its own
// subpackage (adapters/claude, adapters/codex, …); this package holds the
// interface and the helpers they share (error classes, diffs, truncation).
//
// Adapters know native formats and argv, never processes: they do not start,
// watch or kill anything.
package adapters

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/logger"
)

// Permission modes of a Task.
const (
	FullAccess = "full-access" // the agent may run tools and write files without asking
	ReadOnly   = "read-only"   // the agent may read but not write or run commands that change things
)

// Task is what to ask of an agent. The zero value of each optional field
// means "the agent's default".
type Task struct {
	Prompt             string
	Model              string // the agent's own model id, already resolved from an alias
	Cwd                string
	Permissions        string // FullAccess (when empty) or ReadOnly
	Resume             string // the agent's session id to continue
	MaxTurns           int
	SystemPrompt       string
	AppendSystemPrompt string
	ExtraArgs          []string // passed verbatim after the adapter's own arguments
	// NoPartial turns off partial-message streaming (deltas) where the CLI
	// needs a flag for it. Partial output is on by default.
	NoPartial bool
}

// PermissionArgs are the arguments of t's permission mode: full for
// FullAccess (or none given), readOnly for ReadOnly. Any other mode is an
// error that names agent.
func (t Task) PermissionArgs(agent string, full, readOnly []string) ([]string, error) {
	switch t.Permissions {
	case "", FullAccess:
		return full, nil
	case ReadOnly:
		return readOnly, nil
	}
	return nil, fmt.Errorf("%s: unknown permission mode %q", agent, t.Permissions)
}

// Command is how to start the agent for one Task.
type Command struct {
	// Argv is the command line; Argv[0] is the binary as given to Command.
	Argv []string
	// Env holds KEY=VALUE pairs added to (and overriding) the environment.
	Env []string
	// Stdin, when non-empty, is written to the agent's stdin, which is then
	// closed. When empty, stdin is /dev/null.
	Stdin string
	// PromptIndex is the index in Argv of the prompt text, or -1 when the
	// prompt is not on the command line. Logs show "<prompt>" there.
	PromptIndex int
	// Session marks an agent that speaks a session protocol over stdio
	// rather than a one-shot CLI: the harness keeps its stdin open and
	// the run's Parser, which must implement Session, writes there.
	// Stdin must be "" (the prompt goes in the session's requests).
	Session bool
	// PrivateTmp asks for a temporary directory of the run's own, made
	// under the user's and removed with the run (TMPDIR, TMP and TEMP
	// point at it), unless the environment the run is given sets TMPDIR
	// or the run is in a sandbox (Agent.PrivateTmp).
	PrivateTmp bool
}

// ArgPromptMax is the longest prompt an adapter puts on the command line.
// Linux caps one argument at 128 KiB (MAX_ARG_STRLEN: exec fails with
// E2BIG), so a longer prompt goes on the agent's stdin (Command.Stdin)
// where the CLI reads one, and is an error where it does not.
const ArgPromptMax = 100 << 10

// PromptLast is the Command of argv and env that ends with the prompt
// after "--", so that a prompt starting with "-" stays the prompt; a
// prompt longer than ArgPromptMax goes on stdin instead, argv ending with
// stdinArgs (what the CLI takes as "read the prompt from stdin", if
// anything).
func PromptLast(argv, env []string, prompt string, stdinArgs ...string) Command {
	if len(prompt) > ArgPromptMax {
		return Command{Argv: append(argv, stdinArgs...), Env: env, Stdin: prompt, PromptIndex: -1}
	}
	argv = append(argv, "--", prompt)
	return Command{Argv: argv, Env: env, PromptIndex: len(argv) - 1}
}

// RedactedArgv returns Argv with the prompt replaced by "<prompt>" and
// the values of secret flags (--api-key K, --token=T) by [REDACTED]
// (logger.RedactArgv): the command line as logs and events show it.
func (c Command) RedactedArgv() []string {
	out := logger.RedactArgv(c.Argv, c.PromptIndex)
	if c.PromptIndex >= 0 && c.PromptIndex < len(out) {
		out[c.PromptIndex] = "<prompt>"
	}
	return out
}

// Adapter is one agent CLI. Implementations are stateless and safe for
// concurrent use; per-run state lives in the Parser.
type Adapter interface {
	// Name is the canonical agent id: "claude", "codex", "cursor", ….
	Name() string
	// Binaries lists the executable names to look for, in order.
	Binaries() []string
	// Command builds the command line and environment for t, run with the
	// given binary path. The prompt is never interpolated into a shell
	// string, and a prompt that starts with "-" reaches the agent as a
	// prompt, not a flag. An invalid task (unknown permission mode, …) is an
	// error.
	Command(binary string, t Task) (Command, error)
	// NewParser returns a parser for one run.
	NewParser() Parser
}

// Parser turns one run's native stdout, line by line, into event bodies. It
// keeps per-run state (open tool calls, message ids already counted for
// usage, …) and is not safe for concurrent use.
//
// Parse is called once per line, in order. The line has no trailing newline
// and is only valid during the call. Parse appends the bodies derived from
// the line to dst and returns the extended slice; zero bodies is valid. known
// is false for a line the parser did not understand — not JSON, or JSON of a
// type it does not know — which the caller counts as unparsed; such a line is
// never an error and never a panic, whatever its bytes.
//
// The agent's terminal event (Claude's result, Codex's turn.completed, …)
// yields an *event.Result body carrying the agent's own report: status,
// final text, session id, turns, usage totals, cost. Errors the agent reports
// yield *event.Error bodies (code agent_error, with a class where the text
// makes it clear).
//
// Flush is called once after the last line; it returns what the parser still
// held back (for example a message assembled from deltas).
type Parser interface {
	Parse(dst []event.Body, line []byte) (out []event.Body, known bool)
	Flush(dst []event.Body) []event.Body
}

// Session is the Parser of an agent that speaks a session protocol over
// stdio (its Command has Session set): the second transport, beside the
// one-shot CLI whose stdin is the prompt and whose stdout is the whole
// conversation. Here the conversation goes both ways: the harness sends
// requests (open a session, the prompt) and answers the agent's own
// requests (a permission to write, to run a command), and the agent
// answers and notifies on its stdout, a message a line.
//
// The harness runs a Session exactly as it runs any Parser — Parse once
// per stdout line, in order, on one goroutine; Flush once after the last
// line; the same watchdogs, budgets and session log — and in addition:
//
//   - Begin is called once, after the agent started and before the first
//     Parse, with the agent's stdin and the task (its prompt, its
//     permission mode). It writes the opening requests and
//     may keep stdin for later writes from Parse (never from another
//     goroutine: Begin, Parse and Done are never called concurrently).
//     Writes never block (the harness queues them) and fail once the
//     agent is gone, or once it has left 4 MiB of them unread (an agent
//     that does not read its stdin: the Session should end the session).
//     An error ends the run as an interrupt would.
//   - Parse answers the agent's requests by writing to stdin before it
//     returns; its bodies are the events the line means, as for a CLI.
//     The turn's end yields an *event.Result, which starts the linger
//     budget as a CLI's terminal event does.
//   - Done is asked after each Parse; once it reports true, the harness
//     closes stdin: the session is over, and the agent is expected to
//     exit (if it does not, linger, then the kill, end it).
//
// Two optional interfaces give a Session what a protocol with its own
// setup and its own cancel needs (ACP has both); the harness uses them
// wherever the Session implements them:
//
//   - SetupBounded: the opening exchange waits for the agent's answers,
//     and a stuck agent (a missing login) says nothing a Parse would see.
//     Before Begin the harness gives the run's setup budget and a
//     function to report a missed deadline from the Session's own timer.
//   - Canceler: an interrupt first asks the agent, over the protocol, to
//     end its turn; signals follow only if it has not ended 2 s later,
//     and a run that ends so is interrupted (status cancelled) without a
//     signal.
//
// The harness decides nothing on the agent's behalf: which requests to
// grant (per the task's permission mode) is the Session's protocol
// knowledge, stated in its adapter.
type Session interface {
	Parser
	Begin(stdin io.Writer, t Task) error
	Done() bool
}

// SetupBounded is a Session whose setup steps have a deadline (ACP's
// initialize and session/new). BoundSetup is called once, before Begin:
// budget bounds each step (zero: the Session's default). When a step
// misses it, the Session calls expired once, from its timer's goroutine
// (never from Parse), with the bodies that say so — a fatal error and the
// *event.Result — and reports Done from then on: the harness emits them,
// closes stdin and gives the agent the linger budget to exit. A
// Conversation whose agent does not read an answer or a prompt (Unread)
// returns such bodies from Answer or Prompt instead, never through
// expired: those run on the caller's goroutine, whose panic is the
// caller's, not the harness's to contain.
type SetupBounded interface {
	BoundSetup(budget time.Duration, expired func(bodies ...event.Body))
}

// Canceler is a Session that can ask the agent to end its turn (ACP's
// session/cancel). Cancel may be called from any goroutine, concurrently
// with Parse; it writes the request and reports whether it did (false
// when no turn is in flight: the harness then signals at once). The
// agent's answer ends the turn as usual, through Parse.
type Canceler interface {
	Cancel() bool
}

// CancelAcknowledger is a Canceler whose agent acknowledges a cancel
// before it has ended the turn (Claude's control_response to an
// interrupt): an agent that did is not ignoring it, only slow to wind
// down, and a live session gives it a few more graces before it stops it.
// CancelAcknowledged is called with the harness's lock held, as a
// Conversation's methods are.
type CancelAcknowledger interface {
	Canceler
	CancelAcknowledged() bool
}

// ErrQueueFull is a Conversation's Prompt while MaxQueued prompts wait
// for the turn in progress: the session goes on, and a prompt sent once a
// turn has ended is taken. The bound keeps a caller that sends faster
// than the agent answers from growing the queue without end (a prompt
// may be 16 MiB).
var ErrQueueFull = errors.New("too many prompts waiting for the turn in progress")

// MaxQueued bounds the prompts waiting for the turn in progress.
const MaxQueued = 64

// Conversation is a Session that holds many turns on one agent process (a
// live session: ACP's several session/prompt on one session). The harness
// calls Converse once, before Begin; Begin then opens the session without
// a prompt (Task.Prompt is ignored), and every method of the Conversation
// is called with the harness's own lock held, never concurrently with
// Begin or Parse (Cancel may still come from any goroutine).
//
//   - Prompt queues a turn's prompt; it is sent at once when the agent is
//     free (the bodies returned: its *event.TurnStart), else when the turn
//     in progress ends (Parse returns the turn's *event.TurnEnd, then the
//     next *event.TurnStart). A protocol whose agent says when it takes a
//     prompt up (Claude Code's command_lifecycle) starts the turn with the
//     line that says so, from Parse; a turn the agent begins by itself
//     (event.OriginAgent) comes from Parse too. A turn's end never yields
//     an *event.Result; a failure of the turn is the turn's (its error is
//     not fatal). A prompt the agent does not read (Unread) ends the
//     session: Prompt returns an error with the bodies that say so (a
//     fatal error and the *event.Result), and Done reports true; the
//     harness emits them and ends the session as for a missed setup
//     deadline (SetupBounded).
//   - Answer answers a permission request the Session reported with an
//     *event.PermissionRequest (ask mode: Converse's ask); answered is
//     false when no request of that call id is pending. An answer the
//     agent does not read ends the session as a prompt does: ended are
//     the bodies that say so.
//   - Busy reports whether a turn is in flight, or a prompt sent waits
//     for the agent to take it up: the idle watchdog runs only then
//     (setup steps have their own deadline, SetupBounded).
//   - End says no prompt will follow: Done reports true once the queue is
//     empty and the last turn has ended.
type Conversation interface {
	Session
	Converse(ask bool)
	Prompt(text string) ([]event.Body, error)
	Answer(callID string, allow bool) (answered bool, ended []event.Body)
	Busy() bool
	End()
}

// Replayed is implemented by a Session whose live mapping checks what the
// agent says against the disk (ACP's edit diffs, AgentPatch): Replay,
// called before Begin, makes it map as a capture does while it is driven
// over a captured session's lines (sessions reparse), where the disk is
// not the session's.
type Replayed interface {
	Replay()
}

// WallClocked is implemented by a parser that times tool calls (and, where
// it reports one, the run) from the agent's own timestamps, which is all a
// capture has and what it does by default. A live run calls UseWallClock
// before the first line: the harness sees the lines as they happen, and its
// wall clock is the truth there (the Stream fills in durations left zero).
type WallClocked interface {
	UseWallClock()
}

// NativeSpanned is implemented by a parser of an agent whose lines carry
// timestamps. NativeSpan is the span, in ms, of the timestamps of the
// lines it understood so far: from the first to the last (the earliest to
// the latest, where they come out of order); ok is false when it read
// none. harness parse reports it as the run's duration where the agent's
// terminal event reports none, or the capture was cut before it: the
// duration then comes from the capture, not from how long the parse took.
// It is asked after the last line, never concurrently with Parse.
type NativeSpanned interface {
	NativeSpan() (ms int64, ok bool)
}

// LinesKept is implemented by a parser that copies each line it is given
// so that it may keep pieces of it (jsonscan.Lines). Normalize calls
// LinesStay before the first line when its lines are views of a mapped
// file, which stay valid and unchanged: the parser then keeps pieces of
// the lines themselves, without the copy, and hands them out in bodies,
// as strings and as read-only byte slices (jsonscan.Lines.Bytes).
type LinesKept interface {
	LinesStay()
}

// LineTruncated is the warning for a native line cut at kept bytes.
func LineTruncated(kept int, dropped int64) *event.Warning {
	return &event.Warning{Code: event.WarnLineTruncated,
		Message: fmt.Sprintf("a native line of %d bytes was cut to %d; the rest was dropped", int64(kept)+dropped, kept),
		Bytes:   int64(kept) + dropped}
}

// Unread reports whether err, from a write to a session agent's stdin,
// says the agent does not read it (the queue in front of it is full),
// rather than that it is gone (closed, EPIPE): its session then ends
// with a protocol error, as ACP's does.
func Unread(err error) bool {
	return err != nil && !errors.Is(err, os.ErrClosed) && !errors.Is(err, syscall.EPIPE)
}

// WriteLine writes msg to a session agent's stdin as one JSON line, as
// the two-way protocols (ACP, Claude's stream-json) frame their messages;
// a nil w (a captured session, never begun) takes nothing.
func WriteLine(w io.Writer, msg any) error {
	if w == nil {
		return nil
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
