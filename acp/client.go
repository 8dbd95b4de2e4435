// Package acp speaks the Agent Client Protocol (ACP, agentclientprotocol.com:
// JSON-RPC 2.0, one message per line on the agent's stdin and stdout) on
// behalf of harness, both ways: Client drives an ACP agent through one
// prompt and turns what it says into unified event bodies; the server side
// (cmd/harness acp) offers supervised runs to ACP clients.
//
// Like an adapter, this package knows formats, never processes: Client is
// an adapters.Session, which the harness runs as it runs any session agent
// (Begin with the agent's stdin, Parse each stdout line, Done), with the
// optional setup deadline and cancel of that seam.
package acp

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/jsonrpc"
)

// ProtocolVersion is the one ACP version harness speaks.
const ProtocolVersion = 1

// clientVersion is the version harness gives in clientInfo (required by
// the schema; agents validate it).
const clientVersion = "1"

// DefaultSetupTimeout bounds initialize and session/new when the run's
// setup budget is zero: some agents hang there (a missing login, a stuck
// MCP server), and no idle budget applies while the harness itself waits
// for an answer.
const DefaultSetupTimeout = 60 * time.Second

// phases of a session.
const (
	phaseIdle = iota
	phaseInit
	phaseNew
	phaseMode
	phaseReady // a live session between turns (session.go)
	phasePrompt
	phaseOver
)

// Client is the client side of one ACP session: initialize (advertising no
// file-system and no terminal methods: the agent uses its own tools in the
// session's cwd), session/new (or, for a task that resumes the agent's
// session, session/resume or session/load), an optional session/set_mode, one
// session/prompt, and answers to session/request_permission from the
// permissions. It implements adapters.Session, adapters.SetupBounded and
// adapters.Canceler: Parse maps the agent's lines and answers them. A
// Client that never Began only maps, for captured sessions. Begin, Parse,
// Flush and Done are called from one goroutine; Cancel and the deadline
// timer may run concurrently with them.
type Client struct {
	task    adapters.Task              // Prompt, Cwd (absolute), Permissions: set by Begin
	setup   time.Duration              // the deadline of each setup step
	expired func(bodies ...event.Body) // told of a setup deadline missed (BoundSetup); may be nil

	mu        sync.Mutex    // guards everything below
	w         io.Writer     // the agent's stdin; nil in a captured session
	conn      *jsonrpc.Conn // writes to w
	phase     int
	stopped   bool // the session ended on a fatal error: later lines are dropped
	sessionID string
	timer     *time.Timer
	conv      conversation // a live session's turns (session.go)
	replay    bool         // Replay: a captured session driven again, mapped as a capture
	legacy    bool         // ReplayLegacy: the mode chosen as before logs recorded the permissions

	agentName, agentVersion string // from initialize's agentInfo

	// open is the request that opened the session of a task that resumes
	// one (Task.Resume): session/resume where the agent offers it (no
	// replay), else session/load; "" for session/new. loading is set
	// while session/load replays the conversation so far: the history is
	// not this run's, and its updates are dropped.
	open    string
	loading bool

	// A captured session's answers (captured): the id of session/new's,
	// and whether set_mode's came; capRefusal is an error answer that is
	// set_mode's or the prompt's until what follows tells (settle).
	capNew     int64
	capMode    bool
	capRefusal *rpcError

	// outputEnded is set by Flush: the agent's stdout has ended, and a
	// setup deadline that fires now is not reported.
	outputEnded bool

	m mapper // used by Parse only
}

// The harness finds the optional parts of the seam by type assertion: a
// drift of a signature would silently drop them.
var (
	_ adapters.Session      = (*Client)(nil)
	_ adapters.SetupBounded = (*Client)(nil)
	_ adapters.Canceler     = (*Client)(nil)
	_ adapters.Replayed     = (*Client)(nil)
)

// Replay implements adapters.Replayed: edit diffs are kept as a capture
// keeps them (creations only), not handed over for a check on the disk.
func (c *Client) Replay() { c.replay = true }

// ReplayLegacy makes a replay choose the session's mode as harness did
// before its logs recorded the permissions (legacyMode): a log without
// them has that session's requests, and its later ids would be shifted
// by a set_mode it never made.
func (c *Client) ReplayLegacy() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.legacy = true
}

// ReplayIn makes a Client that only maps captured lines (no Begin) name
// the files of its diffs from cwd, the captured run's directory, as the
// run's own diffs did (harness.Parse of a run's log with its cwd).
func (c *Client) ReplayIn(cwd string) {
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m.cwd = cwd
}

// ReplayResume makes a Client that only maps captured lines (no Begin)
// map them as those of a run that resumed the agent's session id
// (Task.Resume): the answer to the session's opening names no session,
// and session/load's replay of the conversation is not the run's.
func (c *Client) ReplayResume(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.task.Resume = id
}

// NewParser returns the Client of one session. Until Begin it only maps
// captured lines (harness parse, sessions reparse): it writes nothing and
// checks no deadline.
func NewParser() *Client {
	c := &Client{task: adapters.Task{Permissions: adapters.FullAccess}, setup: DefaultSetupTimeout, conn: jsonrpc.New(nil, true)}
	c.m.init()
	return c
}

// BoundSetup implements adapters.SetupBounded: budget (DefaultSetupTimeout
// when zero) bounds each of initialize, session/new and a mode change, and
// expired is told, from the timer's goroutine, of the one that missed it.
func (c *Client) BoundSetup(budget time.Duration, expired func(bodies ...event.Body)) {
	if budget > 0 {
		c.setup = budget
	}
	c.expired = expired
}

// Begin implements adapters.Session: it starts the live session of t on
// stdin, the agent's: initialize, under its deadline.
func (c *Client) Begin(stdin io.Writer, t adapters.Task) error {
	t.Permissions = cmp.Or(t.Permissions, adapters.FullAccess)
	if abs, err := filepath.Abs(t.Cwd); err == nil {
		t.Cwd = abs
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.task, c.w, c.conn = t, stdin, jsonrpc.New(stdin, true)
	c.m.live = !c.replay
	if c.replay {
		c.m.cwd = t.Cwd
	}
	c.phase = phaseInit
	c.arm()
	return c.send("initialize", map[string]any{
		"protocolVersion": ProtocolVersion,
		"clientCapabilities": map[string]any{
			"fs":       map[string]bool{"readTextFile": false, "writeTextFile": false},
			"terminal": false,
		},
		"clientInfo": map[string]string{"name": "harness", "title": "harness", "version": clientVersion},
	})
}

// Cancel implements adapters.Canceler: it sends session/cancel when a
// prompt is in flight and reports whether it did. The agent should then
// answer the prompt with stopReason cancelled.
func (c *Client) Cancel() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil || c.phase != phasePrompt {
		return false
	}
	c.cancelAsks() // a stdin that takes none of these takes no cancel either: false
	return c.notify("session/cancel", map[string]string{"sessionId": c.sessionID}) == nil
}

// Done implements adapters.Session: the prompt was answered, or the
// protocol failed; the agent may go.
func (c *Client) Done() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w != nil && c.phase == phaseOver
}

// arm starts the deadline of the setup step now in flight. mu is held.
func (c *Client) arm() {
	if c.timer != nil {
		c.timer.Stop()
	}
	phase := c.phase
	c.timer = time.AfterFunc(c.setup, func() {
		c.mu.Lock()
		if c.phase != phase || c.outputEnded {
			c.mu.Unlock()
			return
		}
		what := map[int]string{phaseInit: "initialize", phaseNew: c.opening(), phaseMode: "session/set_mode"}[phase]
		bodies := c.fail(nil, fmt.Sprintf("the agent did not answer %s within %s", what, c.setup))
		c.mu.Unlock()
		if c.expired != nil {
			c.expired(bodies...)
		}
	})
}

// fail ends the session on a protocol error: one fatal error with class
// protocol and the result; the session is over (Done), and the harness
// closes the agent's stdin (an agent that reads it ends on EOF). mu is
// held.
func (c *Client) fail(dst []event.Body, msg string) []event.Body {
	if c.phase == phaseOver {
		return dst
	}
	c.end()
	c.stopped = true
	return jsonrpc.Broken(dst, "acp: "+msg, "the agent does not speak ACP as harness does; check its version and command", c.sessionID, event.Usage{})
}

// unread ends the session of an agent that does not read harness's
// answers (err, a write's: adapters.Unread): its requests would go on
// unanswered. mu is held.
func (c *Client) unread(dst []event.Body, err error) []event.Body {
	return c.fail(dst, "the agent does not read harness's answers: "+err.Error())
}

// refuseAsk ends a session with permissions ask that the agent would
// not gate: in the mode it keeps, some edits or commands run unasked, so
// nothing is prompted. mu is held.
func (c *Client) refuseAsk(dst []event.Body, why string) []event.Body {
	c.end()
	c.stopped = true
	return append(dst, &event.Error{Code: event.ErrBadConfig, Fatal: true, Partial: &event.Partial{},
		Message: "acp: permissions ask: " + why,
		Hint:    "run it with permissions full-access or read-only, or over a protocol of its own that asks"},
		&event.Result{Status: event.ResultError, SessionID: c.sessionID})
}

// opening is the request that opens the session. mu is held.
func (c *Client) opening() string { return cmp.Or(c.open, "session/new") }

// resumeBy names the request that resumes a session with the agent whose
// initialize answered result: session/resume where its
// sessionCapabilities offer it (the conversation is not replayed), else
// session/load where it offers loadSession (loading: the conversation is
// replayed first), else "".
func resumeBy(result json.RawMessage) (open string, loading bool) {
	caps := gjson.GetBytes(result, "agentCapabilities")
	switch {
	case caps.Get("sessionCapabilities.resume").IsObject():
		return "session/resume", false
	case caps.Get("loadSession").Type == gjson.True:
		return "session/load", true
	}
	return "", false
}

// refuseResume ends the session of a task that resumes one (--resume)
// with an agent that offers neither session/resume nor session/load:
// nothing is prompted, and no new conversation is made in its place.
// mu is held.
func (c *Client) refuseResume(dst []event.Body) []event.Body {
	c.end()
	c.stopped = true
	return append(dst, &event.Error{Code: event.ErrBadConfig, Fatal: true, Partial: &event.Partial{},
		Message: "acp: --resume: the agent offers neither session/resume nor session/load (its agentCapabilities)",
		Hint:    "run it without --resume, or over a protocol of its own that resumes"},
		&event.Result{Status: event.ResultError})
}

// send writes one request. mu is held.
func (c *Client) send(method string, params any) error { return c.conn.Request(method, params) }

// sendOrEnd writes one request of the setup, or the one prompt: an agent
// that does not read it (adapters.Unread) ends the session at once, not
// at the setup deadline as one that did not answer, nor at the idle
// watchdog. One gone is left to its exit, which ends the session. mu is
// held.
func (c *Client) sendOrEnd(dst []event.Body, method string, params any) []event.Body {
	if err := c.send(method, params); adapters.Unread(err) {
		return c.fail(dst, "the agent does not read harness's requests: "+err.Error())
	}
	return dst
}

// notify writes one notification. mu is held.
func (c *Client) notify(method string, params any) error { return c.conn.Notify(method, params) }

// write writes one message as a line. mu is held.
func (c *Client) write(msg map[string]any) error { return c.conn.Write(msg) }

// rpc is one JSON-RPC message, of any of the three kinds.
type rpc struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// readRPC reads one message. Its params and result are not copied: they
// are read during Parse, while line is valid, and may be most of a long
// line.
func readRPC(line []byte) (rpc, error) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params inPlace         `json:"params"`
		Result inPlace         `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	err := json.Unmarshal(line, &m)
	return rpc{ID: m.ID, Method: m.Method, Params: json.RawMessage(m.Params), Result: json.RawMessage(m.Result), Error: m.Error}, err
}

// inPlace is a JSON value as the decoder saw it, not copied: a piece of
// the line it was decoded from.
type inPlace []byte

func (p *inPlace) UnmarshalJSON(b []byte) error {
	*p = b
	return nil
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// Parse implements adapters.Parser: it maps one line of the agent's stdout
// and, in a live session, answers it.
func (c *Client) Parse(dst []event.Body, line []byte) ([]event.Body, bool) {
	c.mu.Lock()
	stopped := c.stopped
	c.mu.Unlock()
	if stopped {
		return dst, true // after the fatal error, nothing but the result
	}
	msg, err := readRPC(line)
	if err != nil || !bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.w != nil && len(bytes.TrimSpace(line)) > 0 {
			dst = c.fail(dst, "the agent sent a line that is not a JSON-RPC message: "+preview(line))
		}
		return dst, false
	}
	dst = c.settle(dst, &msg)
	switch {
	case msg.Method != "" && len(msg.ID) > 0:
		return c.request(dst, &msg), true
	case msg.Method != "":
		if msg.Method == "session/update" {
			// Text before the prompt is the agent's chatter about the
			// session (Gemini answers set_mode with "[MODE_UPDATE] yolo"),
			// not its answer.
			c.mu.Lock()
			c.m.setup = c.w != nil && c.phase < phasePrompt
			loading := c.loading
			dropped := false
			if !loading && c.noTurn() {
				dst, dropped = c.betweenTurns(dst, msg.Params)
			}
			c.mu.Unlock()
			if loading || dropped {
				return dst, true // the conversation so far, replayed by session/load; or of no turn
			}
			return c.m.update(dst, msg.Params)
		}
		// The agent's login status (claude-agent-acp, codex-acp): nothing
		// of the run's.
		return dst, msg.Method == "_auth/status_update"
	case len(msg.ID) > 0:
		return c.response(dst, &msg)
	}
	return dst, false
}

// Flush implements adapters.Parser. Text still streaming when the output
// ended (the prompt never answered) is no complete message: its deltas
// stay in the stream, and nothing more is made of them. No answer can
// come either: a setup step's deadline stops (an agent that exited during
// the setup would have its miss reported after the run's end).
func (c *Client) Flush(dst []event.Body) []event.Body {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outputEnded = true
	if c.timer != nil {
		c.timer.Stop()
	}
	if e := c.capRefusal; e != nil && !c.stopped {
		// Nothing of a prompt's came after it (settle): the prompt's
		// failure, which ended the run.
		c.capRefusal = nil
		dst = c.rpcFailed(dst, "session/prompt", e)
	}
	return dst
}

// request answers a call from the agent.
func (c *Client) request(dst []event.Body, msg *rpc) []event.Body {
	c.mu.Lock()
	defer c.mu.Unlock()
	if msg.Method == "session/request_permission" && c.conv.ask && c.w != nil {
		// The request of a turn is a sight of its call (the call starts,
		// the text before it is a message), whatever the caller answers.
		if !c.noTurn() {
			dst, _ = c.m.requested(dst, msg.Params)
		}
		return c.ask(dst, msg)
	}
	if msg.Method == "session/request_permission" {
		outcome, denied := choosePermission(msg.Params, c.task.Permissions, c.m.kindOf)
		if c.noTurn() {
			denied = "" // refused all the same, but no call of a turn
		}
		if denied != "" {
			// A call refused is seen here only (Gemini reports nothing
			// more of it): it starts here, so it leaves a trace. One
			// allowed is the agent's to report, as it does: a flood of
			// requests allowed opens no call of harness's own.
			dst, _ = c.m.requested(dst, msg.Params)
		}
		err := c.write(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{"outcome": outcome}})
		if c.w != nil && adapters.Unread(err) {
			return c.unread(dst, err)
		}
		if denied != "" {
			c.m.deny(denied)
		}
		return dst
	}
	if c.w == nil {
		return dst
	}
	c.write(map[string]any{"jsonrpc": "2.0", "id": msg.ID,
		"error": map[string]any{"code": -32601, "message": "method not found: harness did not advertise " + msg.Method}})
	return c.fail(dst, fmt.Sprintf("the agent called %q, a method harness did not advertise", truncate(msg.Method, 80)))
}

// noTurn reports whether a live session has no turn in flight: a call
// refused now opens none, since it would stand outside every turn, hold
// the per-tool budget in place of the idle watchdog from the next turn's
// start, and end denied in that turn, as if it were the turn's (an agent
// reuses call ids from turn to turn). mu is held.
func (c *Client) noTurn() bool { return c.conv.on && c.w != nil && c.phase != phasePrompt }

// response handles the answer to one of our requests. In a captured
// session (no writer) the method is read from the result's shape.
func (c *Client) response(dst []event.Body, msg *rpc) ([]event.Body, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	method := c.conn.Answered(msg.ID)
	if c.w == nil {
		method = c.captured(msg)
	}
	if c.w != nil && method == "" {
		return dst, false // an answer to nothing we asked: ignored
	}
	if c.w != nil && c.phase == phaseOver {
		return dst, true // too late (a deadline passed): the session is over
	}
	if msg.Error != nil && method == setModeOrPrompt {
		c.capRefusal = msg.Error
		return dst, true
	}
	if msg.Error != nil {
		return c.rpcFailed(dst, method, msg.Error), true
	}
	switch method {
	case "initialize":
		var r struct {
			ProtocolVersion json.RawMessage `json:"protocolVersion"`
			AgentInfo       struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"agentInfo"`
		}
		json.Unmarshal(msg.Result, &r)
		c.agentName, c.agentVersion = r.AgentInfo.Name, r.AgentInfo.Version
		c.m.agent = r.AgentInfo.Name
		// OpenCode 1.18's answer carries the usage of its last model call
		// only (120/25 for a two-call turn that cost 240/50): no usage is
		// better than a wrong total.
		c.m.noUsage = r.AgentInfo.Name == "OpenCode"
		if string(r.ProtocolVersion) != fmt.Sprint(ProtocolVersion) {
			return c.fail(dst, fmt.Sprintf("the agent speaks protocol version %s; harness speaks %d", truncate(string(r.ProtocolVersion), 40), ProtocolVersion)), true
		}
		if c.task.Resume != "" {
			if c.open, c.loading = resumeBy(msg.Result); c.open == "" {
				return c.refuseResume(dst), true
			}
		} else if c.w == nil {
			// A capture of a run that may have resumed a session, not
			// knowing it: updates before the opening's answer can only be
			// session/load's replay, none of the run's (captured).
			c.loading = gjson.GetBytes(msg.Result, "agentCapabilities.loadSession").Type == gjson.True
		}
		if c.w != nil {
			c.phase = phaseNew
			c.arm()
			params := map[string]any{"cwd": c.task.Cwd, "mcpServers": []any{}}
			if c.open != "" {
				params["sessionId"] = c.task.Resume
			}
			dst = c.sendOrEnd(dst, c.opening(), params)
		}
	case "session/new", "session/resume", "session/load":
		var r struct {
			SessionID string `json:"sessionId"`
			Modes     struct {
				Current   string `json:"currentModeId"`
				Available []struct {
					ID string `json:"id"`
				} `json:"availableModes"`
			} `json:"modes"`
		}
		json.Unmarshal(msg.Result, &r)
		if method != "session/new" {
			// The answer names no session: it is the one resumed, and
			// what follows is this run's.
			r.SessionID, c.loading = c.task.Resume, false
		}
		c.sessionID = r.SessionID
		dst = append(dst, &event.SessionStart{SessionID: r.SessionID, AgentVersion: truncate(c.agentVersion, 100)})
		var ids []string
		for _, m := range r.Modes.Available {
			ids = append(ids, m.ID)
		}
		c.m.modes = ids
		if c.w == nil {
			break
		}
		perm := c.task.Permissions
		if c.conv.ask {
			perm = askMode
		}
		mode := chooseMode(ids, perm)
		if c.legacy {
			mode = legacyMode(ids, perm)
		}
		if perm == askMode && mode == "" && len(ids) > 0 && !c.legacy {
			return c.refuseAsk(dst, "the agent offers no mode that asks before edits and commands (its modes: "+truncate(strings.Join(ids, ", "), 200)+")"), true
		}
		if mode != "" && mode != r.Modes.Current {
			c.phase = phaseMode
			c.arm()
			dst = c.sendOrEnd(dst, "session/set_mode", map[string]string{"sessionId": r.SessionID, "modeId": mode})
			break
		}
		dst = c.prompt(dst)
	case "session/set_mode":
		if c.w != nil {
			dst = c.prompt(dst)
		}
	case "session/prompt":
		if r := gjson.GetBytes(msg.Result, "stopReason"); r.Type != gjson.String || r.Str == "" {
			// Required: without it the turn's outcome is unknown.
			dst = c.m.endDenied(dst, "")
			return c.fail(dst, "the agent answered session/prompt without a stopReason, which ACP requires (result: "+
				cmp.Or(truncate(string(msg.Result), 120), "none")+")"), true
		}
		n := len(dst)
		dst = c.m.end(dst, msg.Result, c.sessionID)
		if c.conv.on && c.w != nil {
			return c.turnEnded(dst, n), true
		}
		c.end()
		for _, b := range dst[n:] {
			if e, ok := b.(*event.Error); ok && e.Fatal {
				c.stopped = true // the agent stopped the turn: a failed run
			}
		}
	default:
		return dst, false
	}
	return dst, true
}

// openID is the id of the request that opens a session: harness numbers
// its requests from 1, and initialize is the first.
const openID = 2

// captured names the request a captured answer is for: a capture holds
// the agent's lines only, not harness's requests. The answer's fields
// tell (set_mode's has none but _meta), and else its id: harness numbers
// its requests from 1 in the order it sends them (initialize,
// session/new, an optional session/set_mode, then the prompt), so a later
// answer that is not set_mode's is the prompt's, and one without a
// stopReason breaks the protocol as it does live. mu is held.
func (c *Client) captured(msg *rpc) string {
	var id int64
	numbered := json.Unmarshal(msg.ID, &id) == nil
	if c.capNew == 0 && numbered && id == openID {
		c.loading = false // the session is open: what follows is the run's
		if c.open != "" {
			// The answer to the session's opening, which names no
			// session (a replay of a run that resumed one: ReplayResume).
			c.capNew, c.capMode = id, false
			return c.open
		}
	}
	if msg.Error != nil {
		return c.capturedError(id, numbered)
	}
	method := jsonrpc.Shape(msg.Result, "session/set_mode", "stopReason", "session/prompt",
		"protocolVersion", "initialize", "sessionId", "session/new")
	if method == "initialize" || method == "session/prompt" || !numbered {
		return method
	}
	switch {
	case method == "session/new":
		c.capNew, c.capMode = id, false
	case c.capNew == 0 || id <= c.capNew:
		// Not after session/new's answer: the fields alone tell.
	case id == c.capNew+1 && !c.capMode && metaOnly(msg.Result):
		// set_mode's, or a prompt's answer as empty when no mode was
		// set: taken as set_mode's, which it may be.
		c.capMode = true
		method = "session/set_mode"
	default:
		method = "session/prompt"
	}
	return method
}

// setModeOrPrompt names a captured error answer that is set_mode's
// refusal or the prompt's failure, until what follows tells (settle).
const setModeOrPrompt = "session/set_mode or session/prompt"

// capturedError names the request a captured error answer is for by its
// id alone (an error has no fields): one after session/new's answer is
// the prompt's, but the next id's, in a session that offered modes, may
// be set_mode's refusal, which the live run only warned of before it sent
// the prompt (setModeOrPrompt). One before is named by nothing. mu is
// held.
func (c *Client) capturedError(id int64, numbered bool) string {
	switch {
	case !numbered || c.capNew == 0 || id <= c.capNew:
		return ""
	case id == c.capNew+1 && !c.capMode && len(c.m.modes) > 0:
		c.capMode = true
		return setModeOrPrompt
	}
	return "session/prompt"
}

// settle names the captured error answer held (capRefusal) by msg, the
// line after it: the agent at work on a prompt (an answer, a request of
// its own, an update of a turn) says that the live run went on past a
// refused session/set_mode, which it warned of. Anything else leaves it
// held; Flush takes one still held for the prompt's failure.
func (c *Client) settle(dst []event.Body, msg *rpc) []event.Body {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.capRefusal == nil || !promptWork(msg) {
		return dst
	}
	e := c.capRefusal
	c.capRefusal = nil
	return c.rpcFailed(dst, "session/set_mode", e)
}

// promptWork reports whether msg is the agent at work on a prompt: an
// answer, a request of its own, or an update only a turn makes (not the
// commands or modes it may announce at any time).
func promptWork(msg *rpc) bool {
	if len(msg.ID) > 0 {
		return true
	}
	switch gjson.GetBytes(msg.Params, "update.sessionUpdate").Str {
	case "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan":
		return msg.Method == "session/update"
	}
	return false
}

// metaOnly reports whether result is an object with no field but _meta
// (or null), as set_mode's answer is.
func metaOnly(result json.RawMessage) bool {
	var r map[string]json.RawMessage
	if json.Unmarshal(result, &r) != nil {
		return false
	}
	delete(r, "_meta")
	return len(r) == 0
}

// prompt sends the one session/prompt; a live session waits for its
// caller's instead. mu is held.
func (c *Client) prompt(dst []event.Body) []event.Body {
	if c.conv.on {
		return c.ready(dst)
	}
	c.phase = phasePrompt
	if c.timer != nil {
		c.timer.Stop() // from here on, the run's own budgets apply
	}
	return c.sendOrEnd(dst, "session/prompt", map[string]any{"sessionId": c.sessionID,
		"prompt": []map[string]string{{"type": "text", "text": c.task.Prompt}}})
}

// end ends the session: the prompt answered, or the protocol failed.
// mu is held.
func (c *Client) end() {
	c.phase = phaseOver
	if c.timer != nil {
		c.timer.Stop()
	}
}

// rpcFailed turns an error answer to one of our requests into the run's
// fatal error. mu is held.
func (c *Client) rpcFailed(dst []event.Body, method string, e *rpcError) []event.Body {
	if method == "session/set_mode" && c.conv.ask && !c.legacy {
		return c.refuseAsk(dst, "the agent refused the mode that asks: "+truncate(e.Message, 500))
	}
	if method == "session/set_mode" {
		// A mode the agent refuses is not fatal: prompt in the one it has.
		dst = append(dst, &event.Warning{Code: event.WarnAgentWarning, Message: "acp: session/set_mode: " + truncate(e.Message, 500)})
		if c.w != nil {
			dst = c.prompt(dst)
		}
		return dst
	}
	if method == "session/prompt" && c.conv.on && c.w != nil {
		return c.turnFailed(dst, e)
	}
	text := e.Message
	if len(e.Data) > 0 && string(e.Data) != "null" {
		text += ": " + string(e.Data)
	}
	dst, fatal := c.m.promptFailed(dst, e.Code, text)
	c.end()
	c.stopped = true
	if method == "" {
		method = "a request"
	}
	fatal.Message = truncate(fmt.Sprintf("%s failed: %s", method, text), 2000)
	return append(dst, fatal, &event.Result{Status: event.ResultError, SessionID: c.sessionID})
}

// chooseMode picks the session mode that matches the permissions among
// the agent's: for full-access codex-acp's "agent-full-access"
// ("full-access" before 2: its default modes sandbox the shell), Claude's
// "bypassPermissions", Gemini's "yolo"; for ask, the mode that asks
// before edits and commands (codex-acp's asks before edits only); for
// read-only, "read-only" or "default".
// "" keeps the agent's mode.
func chooseMode(ids []string, permissions string) string {
	want := []string{"agent-full-access", "full-access", "bypassPermissions", "yolo", "auto"}
	if permissions == askMode {
		// Claude's and Gemini's "default"; codex-acp's "read-only", the
		// only one of its modes that asks for anything: before an edit
		// or network access, never before a shell command, which runs
		// in its read-only sandbox (approval policy on-request),
		// unreported or reported as a failed call when the sandbox
		// denies it (both seen). Its "agent" and
		// "workspace-write" change the workspace unasked; none asks
		// before commands (TestCodexACPAskSandboxesCommands).
		want = []string{"default", "read-only"}
	}
	if permissions == adapters.ReadOnly {
		// "default" asks harness before edits and commands, which it
		// refuses; Claude's "plan" was seen running a shell command.
		want = []string{"read-only", "default"}
	}
	return firstOffered(ids, want)
}

// legacyMode is chooseMode as it was before harness's logs recorded the
// permissions (it changed one commit earlier): neither codex-acp 2's
// agent-full-access nor, for ask, its read-only; and an ask session
// without its mode was not refused.
func legacyMode(ids []string, permissions string) string {
	want := []string{"full-access", "bypassPermissions", "yolo", "auto"}
	if permissions == askMode {
		want = []string{"default"}
	}
	if permissions == adapters.ReadOnly {
		want = []string{"read-only", "default"}
	}
	return firstOffered(ids, want)
}

// firstOffered is the first of want that ids offers, "" for none.
func firstOffered(ids, want []string) string {
	for _, w := range want {
		for _, id := range ids {
			if id == w {
				return id
			}
		}
	}
	return ""
}

// choosePermission answers session/request_permission: full-access allows
// (always, where offered); read-only allows only what it can tell is a
// read — kind read or search, in the request or, when it names none, in
// the call's announcement (kindOf) — once, where offered, since an
// "always" may be saved by the agent as a rule; anything else, an unknown
// kind too, is rejected. denied is the call id of a rejected call.
func choosePermission(params json.RawMessage, permissions string, kindOf func(id string) string) (outcome map[string]string, denied string) {
	var p struct {
		ToolCall struct {
			ID   string `json:"toolCallId"`
			Kind string `json:"kind"`
		} `json:"toolCall"`
		Options []struct {
			ID   string `json:"optionId"`
			Kind string `json:"kind"`
		} `json:"options"`
	}
	json.Unmarshal(params, &p)
	id := callID(p.ToolCall.ID)
	pick := func(kinds ...string) map[string]string {
		for _, k := range kinds {
			for _, o := range p.Options {
				if o.Kind == k {
					return map[string]string{"outcome": "selected", "optionId": o.ID}
				}
			}
		}
		return nil
	}
	if permissions != adapters.ReadOnly {
		if o := pick("allow_always", "allow_once"); o != nil {
			return o, ""
		}
		return map[string]string{"outcome": "cancelled"}, ""
	}
	kind := p.ToolCall.Kind
	if kind == "" && kindOf != nil {
		kind = kindOf(id)
	}
	if kind == "read" || kind == "search" {
		if o := pick("allow_once"); o != nil {
			return o, ""
		}
		// Only "always" offered: not taken, the rule would outlive the
		// run. Refused as anything else.
	}
	if o := pick("reject_once", "reject_always"); o != nil {
		return o, id
	}
	return map[string]string{"outcome": "cancelled"}, id
}

func preview(line []byte) string {
	return fmt.Sprintf("%q", truncate(string(line), 120))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
