// Package acpserver is the ACP agent harness plays ('harness acp',
// docs/acp.md): it speaks the Agent Client Protocol to an editor over a
// reader and a writer, runs each session/prompt as one supervised run in
// the session's cwd through the start function it is given, continuing
// the agent's session of the session's prompt before (conversation), and
// streams the run's events back as session/updates (text, reasoning, tool
// calls with their diffs), answering the prompt with the run's outcome.
// The session's stdio MCP servers go to the agents whose command line
// takes them (mcp.go).
//
// It owns the ACP side only: which agent runs, with what budgets and
// configuration, is the caller's (Options.Task, Options.Start). It reads
// its input line by line before the SDK does (input.go): a line that is
// not one JSON-RPC message, or is over maxLine, is answered, not handed
// on; notifications are taken there (session/cancel; $/cancel_request
// goes on to the SDK, which ends the request's context); and a second
// prompt on a busy session is refused without touching the running one.
// When the client goes away or the caller's context ends, every run
// still going is interrupted and waited for, and every request read is
// answered (a prompt's run interrupted answers cancelled) before Serve
// returns: no run outlives Serve, no answer is lost when the caller
// exits then, and a client that no longer reads its output does not hold
// it (output.go).
// The package never prints; the SDK's diagnostics go to Options.Logger.
package acpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
)

// Options configure Serve.
type Options struct {
	// Start starts the run of one prompt: the CLI's is
	// harness.Settings.Start (configuration, session log, budgets).
	Start func(context.Context, harness.Task, harness.Options) (*harness.Run, error)
	// Task is the task of a prompt sent in a session whose cwd is cwd:
	// the agent and everything else the caller decides, with Cwd and
	// Prompt set.
	Task func(cwd, prompt string) harness.Task
	// Version is harness's version, in initialize's agentInfo.
	Version string
	// Logger gets the SDK's diagnostics and the oversize lines that are
	// not requests; nil discards them.
	Logger *slog.Logger
}

// Serve speaks ACP as an agent on r and w until the client closes r or
// ctx ends, then interrupts the runs still going and returns once they
// are over and the answers of the requests read are written (each
// write then bounded by the write grace, see output).
func Serve(ctx context.Context, r io.Reader, w io.Writer, o Options) {
	newServer(o).serve(ctx, r, w, o.Logger)
}

func newServer(o Options) *server {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &server{sessions: map[string]*session{}, start: o.Start, task: o.Task, version: o.Version, writeGrace: writeGrace, log: log}
}

func (srv *server) serve(ctx context.Context, r io.Reader, w io.Writer, logger *slog.Logger) {
	if logger == nil {
		logger = srv.log
	}
	// Nothing is read until the connection is set up: the SDK's reader
	// starts at once, and its logger and srv.conn are written after.
	out := newOutput(w, srv.writeGrace)
	in := newInput(r, out, srv, logger)
	conn := acpsdk.NewAgentSideConnection(srv, out, in)
	conn.SetLogger(logger)
	srv.conn = conn
	close(in.gate)
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	// The client went away or the caller was told to stop: no run
	// outlives the server, every request read is answered before Serve
	// returns (the caller exits then), and nothing waits forever on a
	// client that no longer reads.
	out.end()
	srv.stopAll()
	srv.runs.Wait()
	out.drain()
}

// server is the ACP agent harness plays; safe for concurrent use.
type server struct {
	conn    *acpsdk.AgentSideConnection
	task    func(cwd, prompt string) harness.Task
	start   func(context.Context, harness.Task, harness.Options) (*harness.Run, error)
	version string
	log     *slog.Logger // Options.Logger
	// writeGrace bounds a write to the output blocked once the input
	// ended (output).
	writeGrace time.Duration

	runs sync.WaitGroup // the prompts' runs in flight

	mu       sync.Mutex
	sessions map[string]*session
	stopped  bool // stopAll was called: no run starts
}

// session is one ACP session: a cwd, its MCP servers, the agent's
// session its prompts continue, and the run of its prompt in flight, if
// any.
type session struct {
	cwd string
	mcp mcpPlan // the client's MCP servers, as the session's agent takes them
	mu  sync.Mutex
	// resume is the agent's own session id of this ACP session's
	// conversation (Task.Resume of the next prompt): an ACP session is one
	// conversation, and each prompt is a run of its own. "" until a run
	// reported one.
	resume string
	busy   bool // a prompt was read (input) and has not been answered
	// cancel: a session/cancel came while busy and before run was set;
	// Prompt interrupts the run as soon as it has one. The cancel, read
	// right after the prompt, is taken before the SDK has even handed the
	// prompt to Prompt, and was lost.
	cancel bool
	run    *harness.Run
}

// claim marks the session's prompt as running when it is not, and
// reports whether it was not (an unknown session: true, Prompt refuses
// it). Prompt, which the claimed request reaches, gives it back.
func (a *server) claim(id acpsdk.SessionId) bool {
	s := a.lookup(id)
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy {
		return false
	}
	s.busy = true
	return true
}

func (a *server) Initialize(context.Context, acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	return acpsdk.InitializeResponse{ProtocolVersion: acpsdk.ProtocolVersionNumber,
		AgentInfo:   &acpsdk.Implementation{Name: "harness", Version: a.version},
		AuthMethods: []acpsdk.AuthMethod{}}, nil
}

func (a *server) Authenticate(context.Context, acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	return acpsdk.AuthenticateResponse{}, nil
}

func (a *server) NewSession(_ context.Context, p acpsdk.NewSessionRequest) (_ acpsdk.NewSessionResponse, err error) {
	defer a.contain(acpsdk.AgentMethodSessionNew, &err)
	if !filepath.IsAbs(p.Cwd) {
		return acpsdk.NewSessionResponse{}, acpsdk.NewInvalidParams(map[string]string{"cwd": "must be an absolute path"})
	}
	if st, err := os.Stat(p.Cwd); err != nil || !st.IsDir() {
		return acpsdk.NewSessionResponse{}, acpsdk.NewInvalidParams(map[string]string{"cwd": "is not a directory"})
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := "hs_" + hex.EncodeToString(b[:])
	// The agent runs are the task's: its MCP servers are the ones the
	// task's agent takes.
	var plan mcpPlan
	if len(p.McpServers) > 0 && a.task != nil {
		plan = planMCP(a.task(p.Cwd, ""), p.McpServers, a.log)
	}
	a.mu.Lock()
	a.sessions[id] = &session{cwd: p.Cwd, mcp: plan}
	a.mu.Unlock()
	return acpsdk.NewSessionResponse{SessionId: acpsdk.SessionId(id)}, nil
}

// contain, deferred by a method the SDK calls on a goroutine of its own,
// answers the request with an internal error when the method panics (in
// harness's code, or in Options.Task or Options.Start): a panic there
// ended the server without interrupting its runs, so what an agent
// started lived on. The server and its sessions go on; the trace goes
// to Options.Logger.
func (a *server) contain(method string, err *error) {
	if v := recover(); v != nil {
		a.log.Error("acp: a handler panicked", "method", method, "panic", v, "stack", string(debug.Stack()))
		*err = acpsdk.NewInternalError(map[string]string{"error": fmt.Sprintf("%s panicked: %v", method, v)})
	}
}

func (a *server) lookup(id acpsdk.SessionId) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[string(id)]
}

// Cancel interrupts the session's run, or the run of the prompt read
// and not yet started, as soon as it is; its prompt then answers
// cancelled. A session with no prompt has nothing to cancel.
func (a *server) Cancel(_ context.Context, p acpsdk.CancelNotification) error {
	if s := a.lookup(p.SessionId); s != nil {
		s.mu.Lock()
		switch {
		case s.run != nil:
			s.run.Interrupt()
		case s.busy:
			s.cancel = true
		}
		s.mu.Unlock()
	}
	return nil
}

// stopAll interrupts every run still going when the client went away,
// and those of the prompts read and not yet started as they start; no
// other run starts. Then runs.Wait waits for every run there will be.
func (a *server) stopAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stopped = true
	for _, s := range a.sessions {
		s.mu.Lock()
		switch {
		case s.run != nil:
			s.run.Interrupt()
		case s.busy:
			s.cancel = true
		}
		s.mu.Unlock()
	}
}

// track counts a run about to start in runs, unless the server is
// stopping (false).
func (a *server) track() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return false
	}
	a.runs.Add(1)
	return true
}

// Prompt runs the agent on the prompt, under supervision, and streams its
// events back; it returns when the run is over — the watchdog's end too.
// The run continues the agent's session of the session's last run
// (conversation), so that the prompt has what came before.
func (a *server) Prompt(ctx context.Context, p acpsdk.PromptRequest) (_ acpsdk.PromptResponse, err error) {
	defer a.contain(acpsdk.AgentMethodSessionPrompt, &err)
	s := a.lookup(p.SessionId)
	if s == nil {
		return acpsdk.PromptResponse{}, acpsdk.NewInvalidParams(map[string]string{"sessionId": "unknown session"})
	}
	defer func() {
		s.mu.Lock()
		s.busy, s.cancel = false, false // claimed by input when it read the request
		s.mu.Unlock()
	}()
	var text []string
	for _, b := range p.Prompt {
		switch {
		case b.Text != nil:
			text = append(text, b.Text.Text)
		case b.ResourceLink != nil:
			text = append(text, b.ResourceLink.Uri)
		}
	}
	if !a.track() {
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil // the client went away
	}
	defer a.runs.Done()
	t := a.task(s.cwd, strings.Join(text, "\n"))
	res, fw, err := a.conversation(ctx, s, p, t)
	if errors.Is(err, errBusy) {
		return acpsdk.PromptResponse{}, acpsdk.NewInvalidRequest(map[string]string{"sessionId": err.Error()})
	}
	if err != nil {
		return acpsdk.PromptResponse{}, acpsdk.NewInvalidParams(map[string]string{"task": err.Error()})
	}
	return fw.response(res), nil
}

// conversation runs t in s's conversation: it continues the agent's
// session of the last run, and falls back to a new one, saying so to the
// client first, where the agent cannot continue it: a task the agent
// refuses to resume (an ACP agent that offers neither session/resume nor
// session/load), or a resumed run that failed having said nothing but
// why (Claude's "No conversation found": the prompt before was cancelled
// before the agent kept any of it). A
// resumed run that failed without a word (saidWhy) is not run again: the
// prompt may have done its work, and the new conversation would do it a
// second time; its answer says how it failed. The run that continued,
// or began, the conversation gives the next prompt its session; a
// fallback that failed too does not replace the session it could not
// continue.
func (a *server) conversation(ctx context.Context, s *session, p acpsdk.PromptRequest, t harness.Task) (*event.Result, *forwarder, error) {
	s.mu.Lock()
	t.Resume = s.resume
	s.mu.Unlock()
	res, fw, err := a.run(ctx, s, p, t, "")
	if t.Resume != "" && ctx.Err() == nil {
		var why string
		switch {
		case err != nil:
			why = err.Error()
		case res != nil && res.Status == event.ResultError && !fw.said && saidWhy(fw.fatal):
			why = fw.fatal.Code + ": " + fw.fatal.Message
		}
		if why != "" {
			t.Resume = ""
			note := fmt.Sprintf("[harness] %s could not continue this session's conversation (%s): this prompt starts a new one.\n\n",
				t.Agent, strings.TrimSpace(why))
			res, fw, err = a.run(ctx, s, p, t, note)
			if err == nil && res != nil && res.Status != event.ResultSuccess {
				return res, fw, nil // the next prompt tries the session it could not continue again
			}
		}
	}
	if err == nil && res != nil && res.SessionID != "" {
		s.mu.Lock()
		s.resume = res.SessionID
		s.mu.Unlock()
	}
	return res, fw, err
}

// saidWhy reports whether fatal, a failed run's fatal error, carries the
// agent's own reason: an error it reported (Claude's "No conversation
// found", an ACP agent's error answer to session/resume), or an exit with
// something on stderr (Codex's "no rollout found", Gemini's "Error
// resuming session", OpenCode's "Session not found"); or harness's
// refusal of the task as configured (bad_config: an ACP agent that can
// continue no session), which ends a run before its prompt. A run that
// ended with none of these (an exit status alone, or no fatal error at
// all) failed for a reason nobody knows, resuming or not.
func saidWhy(fatal *event.Error) bool {
	if fatal == nil {
		return false
	}
	return fatal.Code == event.ErrAgentError || fatal.Code == event.ErrBadConfig ||
		fatal.Partial != nil && strings.TrimSpace(fatal.Partial.StderrTail) != ""
}

// errBusy: a prompt's run is already going in the session. input refuses
// such a prompt before it reaches Prompt.
var errBusy = errors.New("a prompt is already running in this session")

// run starts t, as the run of s's prompt p, and waits for its end; note,
// when set, goes to the client before the run's events. The error is
// Start's: a task that cannot run.
func (a *server) run(ctx context.Context, s *session, p acpsdk.PromptRequest, t harness.Task, note string) (*event.Result, *forwarder, error) {
	fw := &forwarder{conn: a.conn, sid: p.SessionId, cwd: s.cwd, ctx: context.WithoutCancel(ctx), note: note}
	mcp, err := s.mcp.apply(&t)
	if err != nil {
		return nil, nil, err
	}
	defer mcp.remove()
	run, err := a.begin(ctx, s, p, t, fw)
	if err != nil {
		return nil, nil, err
	}
	// The session is free again however Wait returns: a panic of the
	// run's last callbacks (contained by Prompt) left it busy for ever.
	defer func() {
		s.mu.Lock()
		s.run = nil
		s.mu.Unlock()
	}()
	stop := context.AfterFunc(ctx, run.Interrupt) // the client went away or cancelled the request
	defer stop()
	res, _ := run.Wait()
	return res, fw, nil
}

// begin starts t as the run of s's prompt p, unless s has one running
// (errBusy); the session stays locked meanwhile, and is let go however
// Start returns (a panic of it is contained).
func (a *server) begin(ctx context.Context, s *session, p acpsdk.PromptRequest, t harness.Task, fw *forwarder) (*harness.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run != nil {
		return nil, errBusy
	}
	// A client's trace context in _meta (W3C traceparent) is the parent
	// of the run's span when runs are traced.
	tp, _ := p.Meta["traceparent"].(string)
	run, err := a.start(harness.ContextWithTraceparent(context.WithoutCancel(ctx), tp), t, harness.Options{OnEvent: fw.event})
	if err != nil {
		return nil, err
	}
	s.run = run
	if s.cancel {
		run.Interrupt() // cancelled before it started
	}
	return run, nil
}

func (a *server) SetSessionMode(context.Context, acpsdk.SetSessionModeRequest) (acpsdk.SetSessionModeResponse, error) {
	return acpsdk.SetSessionModeResponse{}, acpsdk.NewMethodNotFound("session/set_mode")
}

func (a *server) SetSessionConfigOption(context.Context, acpsdk.SetSessionConfigOptionRequest) (acpsdk.SetSessionConfigOptionResponse, error) {
	return acpsdk.SetSessionConfigOptionResponse{}, acpsdk.NewMethodNotFound("session/set_config_option")
}

func (a *server) ListSessions(context.Context, acpsdk.ListSessionsRequest) (acpsdk.ListSessionsResponse, error) {
	return acpsdk.ListSessionsResponse{}, acpsdk.NewMethodNotFound("session/list")
}

func (a *server) CloseSession(_ context.Context, p acpsdk.CloseSessionRequest) (acpsdk.CloseSessionResponse, error) {
	return acpsdk.CloseSessionResponse{}, acpsdk.NewMethodNotFound("session/close")
}

func (a *server) ResumeSession(context.Context, acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	return acpsdk.ResumeSessionResponse{}, acpsdk.NewMethodNotFound("session/resume")
}
