package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/mockmodel"
)

// acpCmd speaks ACP on stdio as an agent (docs/acp.md): each
// session/prompt runs the chosen agent under harness supervision in the
// session's cwd and streams it back as session/updates.
type acpCmd struct {
	Agent       string   `short:"a" help:"Agent to run for each prompt: claude, codex, cursor, opencode, gemini (or an alias; default: the configured agent)."`
	Protocol    string   `help:"How harness drives the agent: cli (its headless mode) or acp." enum:"cli,acp," default:""`
	Command     []string `help:"The command of an ACP agent harness has no adapter for (with --protocol acp); repeat it for each argument." sep:"none"`
	Binary      string   `help:"Path of the agent's executable."`
	Permissions *string  `help:"full-access (default) or read-only." enum:"full-access,read-only," default:""`
	Env         []string `help:"Extra environment for the agent, KEY=VALUE (repeatable)." placeholder:"K=V" sep:"none"`
	budgetFlags `embed:""`
	NoLog       bool   `help:"Do not write session logs."`
	Mock        string `help:"Point every run at the built-in scripted model playing this scenario (offline, no API key)."`
}

func (c *acpCmd) Run(e *env) error {
	s, err := loadSettings(e, "")
	if err != nil {
		return err
	}
	lib := s.library(e, !c.NoLog)
	agent := cmp.Or(c.Agent, s.cfg.Agent)
	if agent == "" {
		return usageErrorf("acp: no agent: give --agent or set agent in harness.toml")
	}
	if len(c.Command) == 0 {
		if agent, err = agentName(s, agent); err != nil {
			return err
		}
	}
	protocol, command := c.Protocol, c.Command
	if ac := s.cfg.Agents[agent]; protocol == "" && len(command) == 0 {
		protocol = ac.Protocol
		if protocol == harness.ProtocolACP {
			command = ac.Command
		}
	}
	for _, kv := range c.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return usageErrorf("acp: --env %q: want KEY=VALUE", kv)
		}
	}
	// Each prompt is one run through the library, as 'harness run' starts
	// it (configuration, session log, budgets).
	srv := &acpServer{sessions: map[string]*acpSession{}, start: lib.Start}
	srv.base = func(cwd, prompt string) harness.Task {
		return harness.Task{Agent: agent, Cwd: cwd, Prompt: prompt, Permissions: deref(c.Permissions),
			Budgets: c.over(lib.Budgets()), Protocol: protocol, Command: command, Binary: c.Binary, Env: c.Env}
	}
	if c.Mock != "" {
		m, err := mockmodel.StartMock(c.Mock, "")
		if err != nil {
			return withStatus(exitUsage, err)
		}
		defer m.Close()
		base := srv.base
		srv.base = func(cwd, prompt string) harness.Task {
			t := base(cwd, prompt)
			_ = pointAt(m, &t) // an agent the mock cannot drive keeps its own service
			return t
		}
	}
	// The SDK logs at info level by default; stderr gets its warnings only.
	logger := slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// Nothing is read until the connection is set up: the SDK's reader
	// starts at once, and its logger and srv.conn are written after.
	out := &acpOut{w: e.Stdout}
	in := newACPInput(e.Stdin, out, srv, logger)
	conn := acpsdk.NewAgentSideConnection(srv, out, in)
	conn.SetLogger(logger)
	srv.conn = conn
	close(in.gate)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	// The client went away or harness was told to stop: no run outlives
	// the server.
	srv.stopAll()
	srv.runs.Wait()
	return nil
}

// acpServer is the ACP agent harness plays; safe for concurrent use.
type acpServer struct {
	conn  *acpsdk.AgentSideConnection
	base  func(cwd, prompt string) harness.Task
	start func(context.Context, harness.Task, harness.Options) (*harness.Run, error)

	runs sync.WaitGroup // the prompts' runs in flight

	mu       sync.Mutex
	sessions map[string]*acpSession
}

// acpSession is one ACP session: a cwd, and the run of its prompt in
// flight, if any.
type acpSession struct {
	cwd  string
	mu   sync.Mutex
	busy bool // a prompt was read (acpInput) and has not been answered
	run  *harness.Run
}

// claim marks the session's prompt as running when it is not, and
// reports whether it was not (an unknown session: true, Prompt refuses
// it). Prompt, which the claimed request reaches, gives it back.
func (a *acpServer) claim(id acpsdk.SessionId) bool {
	s := a.session(id)
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

func (a *acpServer) Initialize(context.Context, acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	return acpsdk.InitializeResponse{ProtocolVersion: acpsdk.ProtocolVersionNumber,
		AgentInfo:   &acpsdk.Implementation{Name: "harness", Version: version},
		AuthMethods: []acpsdk.AuthMethod{}}, nil
}

func (a *acpServer) Authenticate(context.Context, acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	return acpsdk.AuthenticateResponse{}, nil
}

func (a *acpServer) NewSession(_ context.Context, p acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	if !filepath.IsAbs(p.Cwd) {
		return acpsdk.NewSessionResponse{}, acpsdk.NewInvalidParams(map[string]string{"cwd": "must be an absolute path"})
	}
	if st, err := os.Stat(p.Cwd); err != nil || !st.IsDir() {
		return acpsdk.NewSessionResponse{}, acpsdk.NewInvalidParams(map[string]string{"cwd": "is not a directory"})
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := "hs_" + hex.EncodeToString(b[:])
	a.mu.Lock()
	a.sessions[id] = &acpSession{cwd: p.Cwd}
	a.mu.Unlock()
	return acpsdk.NewSessionResponse{SessionId: acpsdk.SessionId(id)}, nil
}

func (a *acpServer) session(id acpsdk.SessionId) *acpSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[string(id)]
}

// Cancel interrupts the session's run; its prompt then answers cancelled.
func (a *acpServer) Cancel(_ context.Context, p acpsdk.CancelNotification) error {
	if s := a.session(p.SessionId); s != nil {
		s.mu.Lock()
		if s.run != nil {
			s.run.Interrupt()
		}
		s.mu.Unlock()
	}
	return nil
}

// stopAll interrupts every run still going when the client went away.
func (a *acpServer) stopAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.sessions {
		s.mu.Lock()
		if s.run != nil {
			s.run.Interrupt()
		}
		s.mu.Unlock()
	}
}

// Prompt runs the agent on the prompt, under supervision, and streams its
// events back; it returns when the run is over — the watchdog's end too.
func (a *acpServer) Prompt(ctx context.Context, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	s := a.session(p.SessionId)
	if s == nil {
		return acpsdk.PromptResponse{}, acpsdk.NewInvalidParams(map[string]string{"sessionId": "unknown session"})
	}
	defer func() {
		s.mu.Lock()
		s.busy = false // claimed by acpInput when it read the request
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
	fw := &acpForwarder{conn: a.conn, sid: p.SessionId, cwd: s.cwd, ctx: context.WithoutCancel(ctx)}
	s.mu.Lock()
	if s.run != nil {
		s.mu.Unlock()
		return acpsdk.PromptResponse{}, acpsdk.NewInvalidRequest(map[string]string{"sessionId": "a prompt is already running in this session"})
	}
	run, err := a.start(context.WithoutCancel(ctx), a.base(s.cwd, strings.Join(text, "\n")),
		harness.Options{OnEvent: fw.event})
	if err != nil {
		s.mu.Unlock()
		return acpsdk.PromptResponse{}, acpsdk.NewInvalidParams(map[string]string{"task": err.Error()})
	}
	s.run = run
	a.runs.Add(1)
	defer a.runs.Done()
	s.mu.Unlock()
	stop := context.AfterFunc(ctx, run.Interrupt) // the client went away or cancelled the request
	res, _ := run.Wait()
	stop()
	s.mu.Lock()
	s.run = nil
	s.mu.Unlock()
	return fw.response(res), nil
}

func (a *acpServer) SetSessionMode(context.Context, acpsdk.SetSessionModeRequest) (acpsdk.SetSessionModeResponse, error) {
	return acpsdk.SetSessionModeResponse{}, acpsdk.NewMethodNotFound("session/set_mode")
}

func (a *acpServer) SetSessionConfigOption(context.Context, acpsdk.SetSessionConfigOptionRequest) (acpsdk.SetSessionConfigOptionResponse, error) {
	return acpsdk.SetSessionConfigOptionResponse{}, acpsdk.NewMethodNotFound("session/set_config_option")
}

func (a *acpServer) ListSessions(context.Context, acpsdk.ListSessionsRequest) (acpsdk.ListSessionsResponse, error) {
	return acpsdk.ListSessionsResponse{}, acpsdk.NewMethodNotFound("session/list")
}

func (a *acpServer) CloseSession(_ context.Context, p acpsdk.CloseSessionRequest) (acpsdk.CloseSessionResponse, error) {
	return acpsdk.CloseSessionResponse{}, acpsdk.NewMethodNotFound("session/close")
}

func (a *acpServer) ResumeSession(context.Context, acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	return acpsdk.ResumeSessionResponse{}, acpsdk.NewMethodNotFound("session/resume")
}

// acpForwarder turns one run's events into session/updates. Events come
// one at a time (harness.Options), so it needs no lock.
type acpForwarder struct {
	conn      *acpsdk.AgentSideConnection
	sid       acpsdk.SessionId
	cwd       string
	ctx       context.Context
	textDelta bool // text deltas went out since the last message
	thinkings bool // reasoning deltas went out since the last reasoning
	fatal     *event.Error
}

func (f *acpForwarder) send(u acpsdk.SessionUpdate) {
	_ = f.conn.SessionUpdate(f.ctx, acpsdk.SessionNotification{SessionId: f.sid, Update: u})
}

func textBlock(s string) acpsdk.ContentBlock {
	return acpsdk.ContentBlock{Text: &acpsdk.ContentBlockText{Type: "text", Text: s}}
}

func (f *acpForwarder) message(s string) {
	f.send(acpsdk.SessionUpdate{AgentMessageChunk: &acpsdk.SessionUpdateAgentMessageChunk{SessionUpdate: "agent_message_chunk", Content: textBlock(s)}})
}

func (f *acpForwarder) thought(s string) {
	f.send(acpsdk.SessionUpdate{AgentThoughtChunk: &acpsdk.SessionUpdateAgentThoughtChunk{SessionUpdate: "agent_thought_chunk", Content: textBlock(s)}})
}

// acpKinds maps our tool kinds to ACP's.
var acpKinds = map[event.Kind]acpsdk.ToolKind{
	event.KindShell: "execute", event.KindRead: "read", event.KindWrite: "edit", event.KindEdit: "edit",
	event.KindDelete: "delete", event.KindSearch: "search", event.KindWeb: "fetch", event.KindMCP: "other",
	event.KindTodo: "think", event.KindTask: "other", event.KindOther: "other",
}

func (f *acpForwarder) event(ev event.Event) {
	switch v := ev.Body.(type) {
	case *event.TextDelta:
		if v.ParentCallID == "" {
			f.textDelta = true
			f.message(v.Text)
		}
	case *event.Message:
		if v.Role == event.RoleAssistant && v.ParentCallID == "" && !f.textDelta {
			f.message(v.Text)
		}
		f.textDelta = false
	case *event.ReasoningDelta:
		f.thinkings = true
		f.thought(v.Text)
	case *event.Reasoning:
		if !f.thinkings {
			f.thought(v.Text)
		}
		f.thinkings = false
	case *event.ToolStart:
		title := v.Name
		if v.Command != "" {
			title += ": " + v.Command
		} else if v.Path != "" {
			title += ": " + v.Path
		}
		tc := &acpsdk.SessionUpdateToolCall{SessionUpdate: "tool_call", ToolCallId: acpsdk.ToolCallId(v.CallID), Title: title,
			Kind: acpKinds[v.Kind], Status: "in_progress", RawInput: v.Input}
		for _, p := range append([]string{v.Path}, v.Paths...) {
			if p != "" {
				tc.Locations = append(tc.Locations, acpsdk.ToolCallLocation{Path: f.abs(p)})
			}
		}
		f.send(acpsdk.SessionUpdate{ToolCall: tc})
	case *event.ToolEnd:
		status := acpsdk.ToolCallStatus("completed")
		if v.Status != event.StatusOK {
			status = "failed"
		}
		u := &acpsdk.SessionToolCallUpdate{SessionUpdate: "tool_call_update", ToolCallId: acpsdk.ToolCallId(v.CallID), Status: &status}
		if v.Output != "" {
			u.Content = append(u.Content, acpsdk.ToolCallContent{Content: &acpsdk.ToolCallContentContent{Type: "content", Content: textBlock(v.Output)}})
		}
		u.Content = append(u.Content, f.diffs(v.Diff)...)
		if v.Status != event.StatusOK && v.Status != event.StatusError {
			u.Meta = map[string]any{"harness": map[string]any{"status": v.Status, "synthetic": v.Synthetic}}
		}
		f.send(acpsdk.SessionUpdate{ToolCallUpdate: u})
	case *event.Warning:
		switch v.Code {
		case event.WarnIdle, event.WarnToolStalled, event.WarnAgentRetry:
			f.thought(fmt.Sprintf("[harness %s] %s\n", v.Code, v.Message))
		}
	case *event.Error:
		if v.Fatal {
			f.fatal = v
		}
	}
}

// abs makes a path the agent named absolute, as ACP wants locations.
func (f *acpForwarder) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(f.cwd, p)
}

// diffs turns a tool's unified diff into ACP diff contents, with the whole
// file before (none for a creation) and after: after is read from the
// disk, before is after with the diff undone. A file that moved on since
// (a later call), or that the diff does not undo exactly, is given as the
// diff's text instead: never a wrong before.
func (f *acpForwarder) diffs(diff string) []acpsdk.ToolCallContent {
	if diff == "" {
		return nil
	}
	patches, err := event.ParsePatch(diff)
	var out []acpsdk.ToolCallContent
	for _, p := range patches {
		if err != nil {
			break
		}
		name := strings.TrimPrefix(p.To, "b/")
		if p.To == "/dev/null" {
			name = strings.TrimPrefix(p.From, "a/")
		}
		path := f.abs(name)
		// Never a named pipe or a device (a read would block or act on
		// it), nor a file larger than a live diff reads.
		after, readErr := harness.ReadRegularFile(path, harness.MaxDiffFileBytes)
		if readErr != nil && !errors.Is(readErr, fs.ErrNotExist) {
			out = nil
			break
		}
		exists := readErr == nil
		before, existed, err := event.ApplyPatch(p.Reverse(), string(after), exists)
		if err != nil || (!exists && p.To != "/dev/null") {
			out = nil
			break
		}
		d := &acpsdk.ToolCallContentDiff{Type: "diff", Path: path, NewText: string(after)}
		if existed {
			d.OldText = &before
		}
		out = append(out, acpsdk.ToolCallContent{Diff: d})
	}
	if out == nil {
		out = []acpsdk.ToolCallContent{{Content: &acpsdk.ToolCallContentContent{Type: "content", Content: textBlock("```diff\n" + diff + "```")}}}
	}
	return out
}

// response is the prompt's answer for the run's result: end_turn on
// success, cancelled when interrupted, and refusal (the turn is over and
// not to be built on) for a run that failed or that the watchdog ended,
// with a message saying why; _meta.harness carries the result's status,
// the error code and the session id of the agent.
func (f *acpForwarder) response(res *event.Result) acpsdk.PromptResponse {
	resp := acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}
	if res == nil {
		return resp
	}
	meta := map[string]any{"status": res.Status, "agent_session_id": res.SessionID}
	switch res.Status {
	case event.ResultSuccess:
	case event.ResultCancelled:
		resp.StopReason = "cancelled"
	default:
		resp.StopReason = "refusal"
		msg := "the run failed"
		if f.fatal != nil {
			msg = f.fatal.Code + ": " + f.fatal.Message
			meta["error"] = f.fatal.Code
			if f.fatal.Class != "" {
				meta["class"] = f.fatal.Class
			}
		}
		f.message(fmt.Sprintf("\n[harness] %s (%s)\n", msg, res.Status))
	}
	u := res.Usage
	if !u.IsZero() {
		cr, cw, th := int(u.CacheReadTokens), int(u.CacheWriteTokens), int(u.ReasoningTokens)
		resp.Usage = &acpsdk.Usage{InputTokens: int(u.InputTokens), OutputTokens: int(u.OutputTokens),
			CachedReadTokens: &cr, CachedWriteTokens: &cw, ThoughtTokens: &th,
			TotalTokens: int(u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens)}
	}
	resp.Meta = map[string]any{"harness": meta}
	return resp
}
