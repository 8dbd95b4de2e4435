package codex

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fewmap"
	"github.com/agentharness/harness/internal/jsonrpc"
)

// AppServerProtocol names Codex's own two-way protocol in a task
// (harness.Task.Protocol): `codex app-server`, JSON-RPC 2.0 over stdio,
// one message a line, without the "jsonrpc" member (codex-rs
// app-server-protocol). It holds a live session: one thread, a turn per
// prompt, turn/interrupt, and approvals asked of the client.
const AppServerProtocol = "app-server"

// DefaultSetupTimeout bounds initialize and thread/start when the run's
// setup budget is zero: no idle budget applies while harness waits for
// an answer of its own.
const DefaultSetupTimeout = 60 * time.Second

// AppServer returns the adapter that runs Codex over its app-server
// protocol. It is Codex's alone: base must be the codex agent. command,
// when given (a configuration's), replaces `codex app-server`.
func AppServer(name string, base *adapters.Agent, command []string) (adapters.Adapter, error) {
	if base == nil || base.Info.ID != Agent.Info.ID {
		return nil, fmt.Errorf("protocol %s is Codex's own (codex app-server); %s does not speak it", AppServerProtocol, name)
	}
	argv := []string{Agent.Info.Binaries[0], "app-server"}
	if len(command) > 0 {
		argv = append([]string(nil), command...)
	}
	return &appServerAdapter{argv: argv}, nil
}

type appServerAdapter struct{ argv []string }

func (a *appServerAdapter) Name() string       { return Agent.Info.ID }
func (a *appServerAdapter) Binaries() []string { return a.argv[:1] }

// Command implements adapters.Adapter: `codex app-server` (then
// ExtraArgs, such as -c key=value), a session over stdio. Prompt, model,
// cwd, permissions, instructions and the thread to resume go over the
// protocol.
func (a *appServerAdapter) Command(binary string, t adapters.Task) (adapters.Command, error) {
	if _, err := t.PermissionArgs("codex", nil, nil); err != nil {
		return adapters.Command{}, err // the mode itself goes over the protocol
	}
	if t.MaxTurns != 0 {
		return adapters.Command{}, ErrMaxTurns
	}
	argv := append([]string{binary}, a.argv[1:]...)
	return adapters.Command{Argv: append(argv, t.ExtraArgs...), PromptIndex: -1, Session: true}, nil
}

func (a *appServerAdapter) NewParser() adapters.Parser { return NewAppServer() }

// phases of an app-server session.
const (
	asIdle = iota
	asInit
	asThread
	asReady // between turns
	asTurn  // a turn in flight
	asOver
)

// maxQueued bounds the approvals waiting for the caller, and the tool
// calls and outputs kept for them.
const maxQueued = jsonrpc.MaxQueued

// Client is the client side of one `codex app-server` connection:
// initialize (and initialized), thread/start (thread/resume with
// Task.Resume), then turn/start per prompt. It implements
// adapters.Conversation (a live session), adapters.SetupBounded and
// adapters.Canceler (turn/interrupt). Without Converse it runs one turn,
// Task.Prompt, and that turn's end is the run's result. A Client that
// never Began only maps captured lines (harness parse, sessions reparse).
type Client struct {
	task    adapters.Task
	setup   time.Duration
	expired func(bodies ...event.Body)

	mu        sync.Mutex    // guards everything below; the harness calls from several goroutines
	w         io.Writer     // the agent's stdin; nil for a capture
	conn      *jsonrpc.Conn // writes to w, without the "jsonrpc" member, as codex does
	phase     int
	stopped   bool // a fatal error ended the session: later lines are dropped
	timer     *time.Timer
	thread    string
	version   string // Codex's, from initialize's userAgent
	conv      bool   // a live session (Converse)
	ask       bool   // approvals wait for Answer
	queue     jsonrpc.Prompts
	turns     int
	turnID    string // Codex's id of the turn in flight, once its turn/start answer or turn/started said it
	interrupt bool   // turn/interrupt wanted before the turn's id was known
	asks      map[string]approval
	started   map[string]*event.ToolStart // tool items in flight, for their approvals
	output    map[string]*strings.Builder // streamed command output, for items that end without theirs
	retryErr  *event.Error                // the turn's last error notification, held for its end
	turnUsage event.Usage                 // the usage reported within the turn in flight
	// seen is each thread's running total as far as it is counted, by
	// thread id ("" for notifications that name none: the session's):
	// the growth past it is usage, a total at or below it none. Besides
	// the session's, at most maxQueued threads are kept (keepTotal).
	seen  map[string]threadTotal
	heard int // the usage notifications kept: a thread's last is how recently it was heard from
	// announced: the session_start has gone out. The warnings Codex gives
	// before it (configWarning at initialize, deprecationNotice) are held
	// until then: an event before it would make the stream send a
	// session_start of its own, without the thread's id and model.
	announced bool
	held      []event.Body
	warned    map[string]bool // the warning texts said already: Codex repeats some
	// outputEnded: Flush came, Codex's stdout ended; a setup timer that
	// fired as it did (Stop too late) reports nothing.
	outputEnded bool

	p *parser // exec's item mapping, its tool state, the usage counted (its total)
}

// approval is a server request waiting for the caller's answer.
type approval struct {
	id          json.RawMessage
	method      string
	permissions json.RawMessage // item/permissions/requestApproval: what it asks for
}

// The harness finds the optional parts of the seam by type assertion.
var (
	_ adapters.Conversation = (*Client)(nil)
	_ adapters.SetupBounded = (*Client)(nil)
	_ adapters.Canceler     = (*Client)(nil)
)

// NewAppServer returns the Client of one connection.
func NewAppServer() *Client {
	return &Client{setup: DefaultSetupTimeout, conn: jsonrpc.New(nil, false), asks: map[string]approval{},
		started: map[string]*event.ToolStart{}, output: map[string]*strings.Builder{}, warned: map[string]bool{}, p: newParser()}
}

// BoundSetup implements adapters.SetupBounded.
func (c *Client) BoundSetup(budget time.Duration, expired func(bodies ...event.Body)) {
	if budget > 0 {
		c.setup = budget
	}
	c.expired = expired
}

// Converse implements adapters.Conversation.
func (c *Client) Converse(ask bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.conv, c.ask = true, ask
}

// Begin implements adapters.Session: initialize, under its deadline.
func (c *Client) Begin(stdin io.Writer, t adapters.Task) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.Cwd != "" {
		// A replay's too: its diffs name files as the session's did.
		// Without one, the thread's (thread/start's answer) is used.
		c.p.ReplayIn(t.Cwd)
	}
	if abs, err := filepath.Abs(t.Cwd); err == nil {
		t.Cwd = abs
	}
	c.task, c.w, c.conn = t, stdin, jsonrpc.New(stdin, false)
	if !c.conv {
		c.queue.Add(t.Prompt, false, false, nil) // the run's one turn
	}
	c.phase = asInit
	c.deadline("initialize")
	return c.send("initialize", map[string]any{
		"clientInfo": map[string]string{"name": "harness", "title": "harness", "version": "1"},
	})
}

// ReplayIn makes a Client that only maps captured lines (no Begin) name
// the files of its diffs from cwd, the captured run's directory, as the
// run's own diffs did (harness.Parse of a run's log with its cwd).
func (c *Client) ReplayIn(cwd string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.p.ReplayIn(cwd)
}

// Prompt implements adapters.Conversation. A Codex that does not read
// the prompt ends the session, as for an answer it does not read: Prompt
// comes from no line whose bodies could say so, and returns them with
// its error.
func (c *Client) Prompt(text string) ([]event.Body, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queue.Add(text, c.phase == asOver, c.phase == asReady, func() ([]event.Body, bool) {
		bodies := c.nextTurn(nil)
		return bodies, c.phase == asOver
	})
}

// state is the session's phase, and whether it is live (Begun).
func (c *Client) state() (phase int, live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.phase, c.w != nil
}

// Busy implements adapters.Conversation: a turn is in flight.
func (c *Client) Busy() bool {
	phase, _ := c.state()
	return phase == asTurn
}

// Done implements adapters.Session.
func (c *Client) Done() bool {
	phase, live := c.state()
	return live && phase == asOver
}

// End implements adapters.Conversation.
func (c *Client) End() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queue.End()
	if c.phase == asReady && !c.queue.Waiting() {
		c.end()
	}
}

// Cancel implements adapters.Canceler: turn/interrupt for the turn in
// flight (as soon as its id is known); the turn then completes
// "interrupted". false when no turn is in flight.
func (c *Client) Cancel() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil || c.phase != asTurn {
		return false
	}
	if c.turnID == "" {
		c.interrupt = true
		return true
	}
	return c.send("turn/interrupt", map[string]string{"threadId": c.thread, "turnId": c.turnID}) == nil
}

// Answer implements adapters.Conversation: accept or decline the
// approval of callID (the stream's id: a reused id renamed "ID#n" is the
// agent's ID). A Codex that does not read the answer ends the session,
// as for an answer written at once: Answer comes from no line whose
// bodies could say so, and returns them (ended).
func (c *Client) Answer(callID string, allow bool) (answered bool, ended []event.Body) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, a, ok := jsonrpc.Asked(c.asks, callID)
	if !ok {
		return false, nil
	}
	delete(c.asks, id)
	if err := c.conn.Reply(a.id, approvalAnswer(a.method, a.permissions, allow)); adapters.Unread(err) {
		ended = c.fail(nil, "the agent does not read harness's answers: "+err.Error())
	}
	return true, ended
}

// Asking reports whether the approval of callID (the item's id) waits
// for Answer: one answered, resolved by Codex (serverRequest/resolved) or
// of a turn that ended does not.
func (c *Client) Asking(callID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.asks[callID]
	return ok
}

// The approvals Codex asks of its client.
const (
	approveCommand     = "item/commandExecution/requestApproval"
	approveFileChange  = "item/fileChange/requestApproval"
	approvePermissions = "item/permissions/requestApproval"
)

// approvalAnswer is the result that grants or refuses a server request:
// a decision (accept: this call only; decline: the turn goes on), or for
// a permissions request the permissions granted (all or none).
func approvalAnswer(method string, asked json.RawMessage, allow bool) map[string]any {
	if method == approvePermissions {
		granted := json.RawMessage(`{}`)
		if allow && len(asked) > 0 {
			granted = asked
		}
		return map[string]any{"permissions": granted, "scope": "turn"}
	}
	if allow {
		return map[string]any{"decision": "accept"}
	}
	return map[string]any{"decision": "decline"}
}

// deadline bounds the setup step just asked (step names it): a session
// still at that phase when the setup budget has passed fails. mu is held.
func (c *Client) deadline(step string) {
	if c.timer != nil {
		c.timer.Stop()
	}
	at := c.phase
	c.timer = time.AfterFunc(c.setup, func() { c.missed(at, step) })
}

// missed fails the session if it is still at phase at, and tells the
// harness (from the timer's goroutine, never from Parse).
func (c *Client) missed(at int, step string) {
	c.mu.Lock()
	var bodies []event.Body
	if c.phase == at && !c.outputEnded {
		bodies = c.fail(nil, fmt.Sprintf("codex did not answer %s within %s", step, c.setup))
	}
	c.mu.Unlock()
	if len(bodies) > 0 && c.expired != nil {
		c.expired(bodies...)
	}
}

// end ends the session. mu is held.
func (c *Client) end() {
	c.phase = asOver
	if c.timer != nil {
		c.timer.Stop()
	}
}

// fail ends the session on a protocol failure: one fatal error of class
// protocol, and the result. mu is held.
func (c *Client) fail(dst []event.Body, msg string) []event.Body {
	over := c.phase == asOver
	c.end()
	c.stopped = true
	if over {
		return dst // ended already: nothing more is said
	}
	return jsonrpc.Broken(c.release(dst), "codex app-server: "+msg, "check `codex --version`: harness speaks the app-server protocol of Codex 0.169",
		c.thread, c.p.total)
}

// send writes one request. mu is held.
func (c *Client) send(method string, params any) error { return c.conn.Request(method, params) }

// threadParams are thread/start's (and thread/resume's): the task's cwd,
// model and instructions, and its permissions as Codex's approval policy
// and sandbox. full-access never asks and runs unsandboxed; read-only
// never asks and runs in the read-only sandbox (what cannot run there
// fails); a session that asks its caller runs unsandboxed and asks for
// every command Codex does not know to be safe, and every file change
// ("untrusted"), as `codex --ask-for-approval untrusted` does.
func (c *Client) threadParams() map[string]any {
	t := c.task
	p := map[string]any{"cwd": t.Cwd, "approvalPolicy": "never", "sandbox": "danger-full-access"}
	switch {
	case c.ask:
		p["approvalPolicy"] = "untrusted"
	case t.Permissions == adapters.ReadOnly:
		p["sandbox"] = "read-only"
	}
	if t.Model != "" {
		p["model"] = t.Model
	}
	if t.SystemPrompt != "" {
		p["baseInstructions"] = t.SystemPrompt
	}
	if t.AppendSystemPrompt != "" {
		p["developerInstructions"] = t.AppendSystemPrompt
	}
	if t.Resume != "" {
		// The answer then leaves out the thread's earlier turns, which
		// harness does not read (the usage so far comes in
		// thread/tokenUsage/updated), and which on a long thread make a
		// line past harness's line cap: the answer would be lost.
		p["threadId"], p["excludeTurns"] = t.Resume, true
	}
	return p
}

// rpc is one JSON-RPC message of any kind.
type rpc struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Parse implements adapters.Parser: it maps one line of Codex's stdout
// and, in a live session, answers it. A line that is no JSON-RPC message
// is unparsed and skipped: lines are whole messages, so one bad line
// leaves the next ones readable.
func (c *Client) Parse(dst []event.Body, line []byte) ([]event.Body, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return dst, true
	}
	var msg rpc
	if json.Unmarshal(line, &msg) != nil || (msg.Method == "" && len(msg.ID) == 0) {
		return dst, false
	}
	switch {
	case msg.Method != "" && len(msg.ID) > 0:
		return c.request(dst, &msg), true
	case msg.Method != "":
		return c.notification(dst, &msg)
	}
	return c.response(dst, &msg)
}

// Flush implements adapters.Parser: the warnings still held, when the
// thread never opened. Codex is gone (its stdout ended): the setup
// deadline goes, or it would hold the run up to a minute more and end a
// session already over.
func (c *Client) Flush(dst []event.Body) []event.Body {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outputEnded = true
	if c.timer != nil {
		c.timer.Stop()
	}
	return c.release(dst)
}

// release appends the warnings held for the session_start. mu is held.
func (c *Client) release(dst []event.Body) []event.Body {
	dst = append(dst, c.held...)
	c.held = nil
	return dst
}

// response handles the answer to one of harness's requests; in a capture
// the request is told by the answer's shape.
func (c *Client) response(dst []event.Body, msg *rpc) ([]event.Body, bool) {
	method := c.conn.Answered(msg.ID)
	if c.w == nil {
		// The request is told by its answer's fields (turn/interrupt's is empty).
		method = jsonrpc.Shape(msg.Result, "turn/interrupt", "userAgent", "initialize", "thread", "thread/start", "turn", "turn/start")
	}
	if method == "" {
		return dst, c.w != nil // an answer to nothing asked: ignored
	}
	if c.w != nil && c.phase == asOver {
		return dst, true
	}
	if msg.Error != nil {
		return c.failed(dst, method, truncate(msg.Error.Message, 2000)), true
	}
	switch method {
	case "initialize":
		var r struct {
			UserAgent string `json:"userAgent"`
		}
		json.Unmarshal(msg.Result, &r)
		// "harness/0.169.0 (Debian 12.0.0; x86_64) …": Codex's version
		// after the client's name.
		if _, v, ok := strings.Cut(r.UserAgent, "/"); ok {
			v, _, _ = strings.Cut(v, " ")
			c.version = truncate(v, 100)
		}
		if c.w != nil {
			return c.openThread(dst), true
		}
	case "thread/start", "thread/resume":
		var r struct {
			Thread struct {
				ID string `json:"id"`
			} `json:"thread"`
			Model string `json:"model"`
			Cwd   string `json:"cwd"`
		}
		json.Unmarshal(msg.Result, &r)
		c.thread = r.Thread.ID
		c.p.session = r.Thread.ID
		if c.p.cwd == "" && filepath.IsAbs(r.Cwd) {
			// A capture mapped alone: the thread's directory, which the
			// session's diffs named files from.
			c.p.cwd = filepath.Clean(r.Cwd)
		}
		dst = append(dst, &event.SessionStart{SessionID: r.Thread.ID, Model: truncate(r.Model, 200), AgentVersion: c.version,
			Cwd: truncate(r.Cwd, 4096)})
		c.announced = true
		dst = c.release(dst)
		if c.w != nil {
			dst = c.ready(dst)
		}
	case "turn/start":
		var r struct {
			Turn struct {
				ID string `json:"id"`
			} `json:"turn"`
		}
		json.Unmarshal(msg.Result, &r)
		dst = c.turnBegun(dst, r.Turn.ID)
	case "turn/interrupt":
	default:
		return dst, false
	}
	return dst, true
}

// openThread follows initialize's answer: initialized, then
// thread/start (thread/resume), under its deadline. A Codex that does not
// read them ends the session at once, as for any other write, not at the
// deadline as one that did not answer. mu is held.
func (c *Client) openThread(dst []event.Body) []event.Body {
	c.phase = asThread
	method := "thread/start"
	if c.task.Resume != "" {
		method = "thread/resume"
	}
	c.deadline(method)
	err := c.conn.Write(map[string]any{"method": "initialized"}) // without params, as in the captures
	if err == nil {
		err = c.send(method, c.threadParams())
	}
	if adapters.Unread(err) {
		return c.fail(dst, "the agent does not read harness's requests: "+err.Error())
	}
	return dst
}

// failed handles an error answer: the setup's ends the session; a
// turn/start's fails that turn only (in a live session); a turn/interrupt
// that came too late is nothing. mu is held.
func (c *Client) failed(dst []event.Body, method, text string) []event.Body {
	switch method {
	case "turn/interrupt":
		return append(dst, &event.Warning{Code: event.WarnAgentWarning, Message: "codex app-server: turn/interrupt: " + text})
	case "turn/start":
		if c.conv && c.w != nil {
			return c.turnEnded(dst, event.ResultError, agentError("turn/start failed: "+text))
		}
	}
	if c.w == nil {
		return append(c.release(dst), agentError(method+" failed: "+text))
	}
	return c.fail(dst, method+" failed: "+text)
}

// turnBegun learns the id of the turn in flight from the turn/start
// answer or turn/started, the only messages that say which turn harness
// started (a notification naming another turn before them is late news
// of an earlier one), and sends the interrupt asked before it was known.
// A capture has no request of harness's to open its turns: they open
// here. A Codex that does not read the interrupt ends the session, as
// one that does not read an answer. mu is held.
func (c *Client) turnBegun(dst []event.Body, id string) []event.Body {
	if c.w == nil {
		c.phase = asTurn
	}
	if c.phase != asTurn || c.turnID != "" || id == "" {
		return dst
	}
	c.turnID = id
	if c.interrupt {
		c.interrupt = false
		err := c.send("turn/interrupt", map[string]string{"threadId": c.thread, "turnId": id})
		if adapters.Unread(err) {
			return c.fail(dst, "the agent does not read harness's requests: "+err.Error())
		}
	}
	return dst
}

// ready is the session between turns: the first prompt queued goes now;
// else a live session waits for one, and ends when End was asked. mu is
// held.
func (c *Client) ready(dst []event.Body) []event.Body {
	c.phase = asReady
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.queue.Waiting() {
		return c.nextTurn(dst)
	}
	if c.queue.Ending() || !c.conv {
		c.end()
	}
	return dst
}

// nextTurn sends the first prompt queued as turn/start and opens its
// turn; a prompt that cannot be written opens none: the agent is gone
// (its exit ends the session), or does not read it, which ends the
// session here. mu is held.
func (c *Client) nextTurn(dst []event.Body) []event.Body {
	text := c.queue.Next()
	err := c.send("turn/start", map[string]any{"threadId": c.thread,
		"input": []map[string]any{{"type": "text", "text": text}}})
	if adapters.Unread(err) {
		return c.fail(dst, "the agent does not read harness's requests: "+err.Error())
	}
	if err != nil {
		return dst
	}
	c.turns++
	c.phase, c.turnID, c.interrupt = asTurn, "", false
	c.turnUsage = event.Usage{}
	if !c.conv {
		return dst // a run's one turn: no turn events
	}
	return append(dst, &event.TurnStart{TurnID: "turn_" + strconv.Itoa(c.turns), Prompt: text})
}

// turnEnded ends the turn in flight with status, failed (when it did)
// with the error fail: a live session's turn_end, whose failure is the
// turn's, or a run's result, whose failure is fatal; then the next prompt
// queued. mu is held.
func (c *Client) turnEnded(dst []event.Body, status string, fail *event.Error) []event.Body {
	if held := c.retryErr; held != nil && (fail == nil || held.Message != fail.Message) {
		dst = append(dst, held) // a last error the turn's end did not repeat
	}
	c.retryErr = nil
	text := c.p.lastText
	if status != event.ResultSuccess {
		text = ""
	}
	c.p.lastText = ""
	c.p.open = fewmap.Map[string, struct{}]{}
	clear(c.started)
	clear(c.output)
	clear(c.asks) // Codex clears its pending requests at the turn's end
	c.turnID, c.interrupt = "", false
	if c.w == nil {
		c.phase = asReady // a capture: what comes before the next turn is no turn's
	}
	if !c.conv || c.w == nil {
		if fail != nil {
			if c.w != nil {
				fail.Fatal, fail.Partial = true, &event.Partial{} // the run's one turn failed
			}
			dst = append(dst, fail)
		}
		dst = append(dst, &event.Result{Status: status, Text: text, SessionID: c.thread, Usage: c.p.total})
		if c.w != nil {
			c.end()
		}
		return dst
	}
	if fail != nil {
		dst = append(dst, fail)
	}
	dst = append(dst, &event.TurnEnd{Status: status, Text: text, Usage: c.turnUsage})
	c.turnUsage = event.Usage{}
	return c.ready(dst)
}

// truncate cuts s to n bytes at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
