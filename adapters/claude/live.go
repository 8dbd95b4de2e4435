package claude

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// Protocol is the name of Claude Code's own two-way protocol in a task
// (harness.Task.Protocol, `harness session --protocol stream-json`).
//
// As read from Claude Code 2.1.329 (and the Agent SDK's types): `claude -p
// --input-format stream-json --output-format stream-json --verbose` reads
// user messages on stdin, one JSON line each, and stays alive until stdin
// closes. Each message is one turn: it prints system/init again (same
// session id), the turn's lines, and the turn's own `result` line, whose
// usage is the turn's (total_cost_usd is the session's so far). Both sides
// may send a `control_request` {request_id, request: {subtype, …}},
// answered by a `control_response` {response: {subtype: success|error,
// request_id, response|error}}: harness sends `interrupt` (the turn ends
// with a `result` of subtype error_during_execution); with
// `--permission-prompt-tool stdio` the CLI sends `can_use_tool`
// {tool_name, input, tool_use_id}, answered {behavior: allow,
// updatedInput} or {behavior: deny, message}, and withdraws one with a
// `control_cancel_request`. No `initialize` is needed for any of this.
//
// Claude Code also begins turns by itself: when a background command
// (Bash run_in_background) ends, it prints task_notification and answers
// it with a turn of its own (system/init, its lines, a `result` whose
// origin is task-notification). So each message harness writes has a
// `uuid` and priority `later`: the CLI reports `command_lifecycle`
// {command_uuid, state: queued|started|completed|cancelled} for it, and
// its result lists it in user_message_uuids. A message sent while a turn
// of the CLI's own runs waits in the CLI's queue (priority later: one of
// the default priority was seen taken into that turn between two model
// calls) and starts after that turn's result; harness opens the
// message's turn at its `started`, and a system/init that comes with no
// turn of harness's begun is a turn of the CLI's own.
const Protocol = "stream-json"

// Live drives Claude Code over its two-way protocol (Protocol): its
// Command is a session over stdio, its Parser a Conversation. Agent with
// this Driver is the adapter of that protocol.
var Live adapters.Driver = liveAdapter{}

type liveAdapter struct{ Adapter }

// Command implements adapters.Adapter: the CLI adapter's command line
// (its model, permission flags, extra arguments) with stream-json input
// and no prompt, and permission prompts over the protocol
// (--permission-prompt-tool stdio). With full-access the CLI asks
// nothing; with read-only what it would ask is refused, as -p refuses it;
// a conversation that asks its caller switches the session's mode to
// default at Begin (the harness gives the command full-access then).
// Task.Resume continues that session (--resume ID: the CLI loads the
// conversation before it reads the first message, and goes on under the
// same session id).
func (a liveAdapter) Command(binary string, t adapters.Task) (adapters.Command, error) {
	t.Prompt = "-" // not sent: the command line is cut before it
	c, err := a.Adapter.Command(binary, t)
	if err != nil {
		return c, err
	}
	rest := c.Argv[2 : len(c.Argv)-2] // after "-p", before "--" and the prompt
	argv := append([]string{c.Argv[0], "-p", "--input-format", "stream-json"}, rest...)
	argv = append(argv, "--permission-prompt-tool=stdio")
	return adapters.Command{Argv: argv, Env: c.Env, PromptIndex: -1, Session: true}, nil
}

// NewParser implements adapters.Adapter.
func (liveAdapter) NewParser() adapters.Parser { return NewConversation() }

// maxQueued bounds the permission requests waiting for an answer, as
// adapters.MaxQueued does the prompts waiting for their turn.
const maxQueued = adapters.MaxQueued

var (
	errSessionOver = errors.New("claude: the session is over")
)

// Conversation is a live session of Claude Code over stream-json
// (adapters.Conversation, adapters.Canceler): each prompt is a user
// message, whose turn begins when the CLI takes it up, each `result` line
// ends its turn, a turn the CLI begins by itself is a turn of its own
// (origin agent), an interrupt is a control_request, and with permissions
// ask each can_use_tool request waits for the caller's Answer. Its lines
// are mapped by the CLI's parser. Until Begin it only maps, for a captured
// session: each result then ends a turn of unknown prompt.
type Conversation struct {
	p *parser // not embedded: its Parse and Flush are reached through Conversation's

	mu    sync.Mutex
	w     io.Writer // the agent's stdin; nil for a captured session
	conv  bool      // a live session (Converse): else one prompt, a run's
	ask   bool
	queue []string
	turns int // the caller's turns begun
	own   int // the turns the CLI began by itself
	// sent counts the user messages written: the k-th has uuid k (uuid).
	sent int
	// prefix is the start of this session's uuids, random so that a
	// resumed session's are new to the CLI; a replay learns the logged
	// session's from its lines.
	prefix  string
	learned bool // a replay found the logged prefix
	replay  bool // driven over a session's log (adapters.Replayed)
	// awaiting is the number (uuid) of the message written whose turn
	// the CLI has not begun yet (0: none), and awaitText its prompt.
	awaiting  int
	awaitText string
	// echoes: the CLI reports command_lifecycle (2.1.329 does for a
	// message with a uuid); a log or CLI without them begins the turn of
	// the message written at the next system/init, and a turn begun with
	// none written is no turn: it cannot be told from one of a prompt
	// the replay of a damaged log does not know.
	echoes bool
	// stray: the CLI started a message of this session's that is not the
	// one awaiting (a replay whose log was cut before its prompt): its
	// turn, until its result, is no turn the stream can name.
	stray  bool
	inTurn bool
	agent  bool // the turn in flight is one the CLI began itself
	// bgTasks is how many background commands the CLI last reported
	// running (background_tasks_changed), and notified that one ended
	// (task_notification) with no turn begun since: the CLI answers it in
	// a turn of its own, after the caller's last turn too (OwnTurnDue).
	bgTasks  int
	notified bool
	// runAnswer is a run's: the result of its prompt's turn. A turn the CLI
	// begins by itself after it (a background command ended) does not
	// replace it: see afterAnswer.
	runAnswer *event.Result
	carry     event.Usage // usage the CLI's next result holds for a turn of its own already ended (fold)
	// cancelled: an interrupt was sent for the turn in flight.
	cancelled bool
	interrupt string // its request_id
	acked     bool   // the CLI acknowledged it
	ending    bool
	over      bool              // the agent broke the protocol or left: Done
	asks      map[string]string // tool_use_id → the can_use_tool's request_id
	next      int               // our request ids
	started   bool              // the CLI's first system/init came
	held      *event.TurnStart  // the first turn's start, until it did
	setup     time.Duration     // how long the CLI has to say it
	expired   func(bodies ...event.Body)
	timer     *time.Timer
	// outputEnded: Flush came, the CLI's stdout ended; a setup timer
	// that fired as it did (Stop too late) reports nothing.
	outputEnded bool
}

// DefaultSetupTimeout bounds the CLI's start, from the first prompt to its
// system/init, when the run's setup budget is zero (as for ACP's setup).
const DefaultSetupTimeout = 60 * time.Second

var (
	_ adapters.Conversation       = (*Conversation)(nil)
	_ adapters.Canceler           = (*Conversation)(nil)
	_ adapters.SetupBounded       = (*Conversation)(nil)
	_ adapters.CancelAcknowledger = (*Conversation)(nil)
	_ adapters.NativeSpanned      = (*Conversation)(nil)
)

// BoundSetup implements adapters.SetupBounded: the CLI's start (it says
// nothing before it has the first prompt) has the budget, not the idle
// watchdog; one that misses it ends the session.
func (c *Conversation) BoundSetup(budget time.Duration, expired func(bodies ...event.Body)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if budget > 0 {
		c.setup = budget
	}
	c.expired = expired
}

// NewConversation returns the parser of one live session of Claude Code.
func NewConversation() *Conversation {
	return &Conversation{p: newParser(), asks: map[string]string{}, setup: DefaultSetupTimeout, prefix: newPrefix()}
}

// newPrefix is the first 24 characters of a session's uuids: version 4
// and its variant, 72 random bits; the last 12 hex digits number the
// messages.
func newPrefix() string {
	var b [9]byte
	rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-4" + h[12:15] + "-8" + h[15:18] + "-"
}

// uuid is the uuid of the k-th user message. mu is held.
func (c *Conversation) uuid(k int) string { return fmt.Sprintf("%s%012x", c.prefix, k) }

// number is the number of the message of this session's whose uuid is
// id; false for another uuid. mu is held.
func (c *Conversation) number(id string) (int, bool) {
	rest, ok := strings.CutPrefix(id, c.prefix)
	if !ok || len(rest) != 12 {
		return 0, false
	}
	k, err := strconv.ParseUint(rest, 16, 32)
	return int(k), err == nil
}

// Replay implements adapters.Replayed: the uuids of the logged session's
// messages, which its lines name, are learnt from them.
func (c *Conversation) Replay() {
	c.mu.Lock()
	c.replay = true
	c.mu.Unlock()
}

// UseWallClock implements adapters.WallClocked.
func (c *Conversation) UseWallClock() { c.p.UseWallClock() }

// NativeSpan implements adapters.NativeSpanned: the lines' span, as the
// CLI's parser read them.
func (c *Conversation) NativeSpan() (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.p.NativeSpan()
}

// Converse implements adapters.Conversation.
func (c *Conversation) Converse(ask bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.conv, c.ask = true, ask
}

// Begin implements adapters.Session: the CLI needs no initialize, so
// nothing is sent before the first prompt but, for a conversation that
// asks its caller, the switch to the mode that asks (set_permission_mode
// default: the command line had full-access).
func (c *Conversation) Begin(stdin io.Writer, t adapters.Task) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.w = stdin
	if !c.conv {
		// A run: its prompt is the one turn, and its result the run's.
		c.ending, c.inTurn = true, true
		c.sent++
		return c.write(userMessage(t.Prompt, c.uuid(c.sent)))
	}
	if !c.ask {
		return nil
	}
	return c.request(map[string]string{"subtype": "set_permission_mode", "mode": "default"})
}

// request writes a control_request of ours. mu is held.
func (c *Conversation) request(req any) error {
	c.next++
	return c.write(map[string]any{"type": "control_request", "request_id": "harness_" + strconv.Itoa(c.next), "request": req})
}

// Done implements adapters.Session.
func (c *Conversation) Done() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w != nil && (c.over || c.ending && !c.inTurn && c.awaiting == 0 && len(c.queue) == 0)
}

// Busy implements adapters.Conversation: a turn is in flight, or a
// prompt written waits for the CLI to take it up (behind a turn of its
// own). Until the CLI has started (its first system/init) the setup
// budget applies instead.
func (c *Conversation) Busy() bool {
	c.mu.Lock()
	busy := (c.inTurn || c.awaiting != 0) && c.held == nil
	c.mu.Unlock()
	return busy
}

// PendingStart reports whether a prompt written waits for the CLI to
// begin its turn (the first for its system/init, a later one for its
// command_lifecycle started): an interrupt then is for that turn, which
// has not begun.
func (c *Conversation) PendingStart() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.over && (c.awaiting != 0 || c.held != nil)
}

// End implements adapters.Conversation.
func (c *Conversation) End() {
	c.mu.Lock()
	c.ending = true
	c.mu.Unlock()
}

// Prompt implements adapters.Conversation. A CLI that does not read the
// prompt ends the session, as for an answer it does not read: Prompt
// comes from no line whose bodies could say so, and returns them with
// its error.
func (c *Conversation) Prompt(text string) ([]event.Body, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.over || c.ending || c.w == nil:
		return nil, errSessionOver
	case len(c.queue) >= adapters.MaxQueued:
		return nil, adapters.ErrQueueFull
	}
	c.queue = append(c.queue, text)
	if c.inTurn || c.awaiting != 0 {
		return nil, nil // sent when the turn in progress ends
	}
	bodies := c.nextTurn(nil)
	if c.over {
		return bodies, errSessionOver // the agent is gone, or does not read
	}
	return bodies, nil
}

// nextTurn sends the first prompt queued as a user message; its turn
// begins when the CLI takes it up (begin), the first at once: nothing
// can be ahead of it. One that cannot be written begins none, and the
// session is over: the CLI is gone (its exit says how), or does not
// read it, which ends the session here. mu is held.
func (c *Conversation) nextTurn(dst []event.Body) []event.Body {
	text := c.queue[0]
	c.queue[0] = ""
	c.queue = c.queue[1:]
	c.sent++
	if err := c.write(userMessage(text, c.uuid(c.sent))); err != nil {
		if adapters.Unread(err) {
			return c.unread(dst, "prompts", err)
		}
		c.over = true
		return dst
	}
	if !c.started {
		return c.open(dst, text, true)
	}
	c.awaiting, c.awaitText = c.sent, text
	return dst
}

// userMessage is a prompt as the CLI reads it on stdin, with its uuid.
// Priority later keeps the CLI from taking it into a turn of its own
// already running, between two model calls: it waits for that turn's
// end, and is the turn after it.
func userMessage(text, uuid string) map[string]any {
	return map[string]any{"type": "user", "parent_tool_use_id": nil, "session_id": "",
		"uuid": uuid, "priority": "later", "message": map[string]any{"role": "user", "content": text}}
}

// begin opens the turn of the message awaiting (the CLI took it up).
// mu is held.
func (c *Conversation) begin(dst []event.Body) []event.Body {
	text := c.awaitText
	c.awaiting, c.awaitText = 0, ""
	return c.open(dst, text, c.carry.IsZero())
}

// openOwn opens a turn the CLI began by itself. mu is held.
func (c *Conversation) openOwn(dst []event.Body) []event.Body {
	c.own++
	c.inTurn, c.agent, c.cancelled = true, true, false
	c.p.emitted, c.p.left = event.Usage{}, event.Usage{}
	return append(dst, &event.TurnStart{TurnID: "agent_" + strconv.Itoa(c.own), Origin: event.OriginAgent})
}

// open opens the caller's turn. reset: the parser's usage counts start
// again (the CLI's result.usage is the turn's, so what the parser tops up
// to is counted from the turn's start); not after a fold, whose result
// holds the turn before it too. mu is held.
func (c *Conversation) open(dst []event.Body, prompt string, reset bool) []event.Body {
	c.turns++
	c.inTurn, c.agent, c.cancelled = true, false, false
	if reset {
		c.p.emitted, c.p.left = event.Usage{}, event.Usage{}
	}
	ts := &event.TurnStart{TurnID: "turn_" + strconv.Itoa(c.turns), Prompt: prompt}
	if !c.started {
		// The CLI names the session (system/init) only once it has the
		// first message: the turn starts after that, so that the
		// stream's session_start carries the session id.
		c.held = ts
		c.timer = time.AfterFunc(c.setup, c.setupExpired)
		return dst
	}
	return append(dst, ts)
}

// Cancel implements adapters.Canceler: an interrupt control_request for
// the turn in flight; false when there is none. A turn already
// interrupted is asked nothing more: a second request would replace the
// first, whose acknowledgement would then count for nothing, and a CLI
// winding the turn down would lose the grace of one that acknowledged.
func (c *Conversation) Cancel() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil || !c.inTurn || c.over {
		return false
	}
	if c.cancelled {
		return true
	}
	c.interrupt, c.acked = "harness_"+strconv.Itoa(c.next+1), false
	if err := c.request(map[string]string{"subtype": "interrupt"}); err != nil {
		return false
	}
	c.cancelled = true
	return true
}

// CancelAcknowledged implements adapters.CancelAcknowledger: the CLI
// answered the interrupt of the turn in flight (it then winds the turn
// down, which under load was seen to take 3 s).
func (c *Conversation) CancelAcknowledged() bool {
	c.mu.Lock()
	acked := c.acked && c.inTurn
	c.mu.Unlock()
	return acked
}

// Answer implements adapters.Conversation: allow runs the call with the
// input it asked for; deny refuses it, and the model is told so. A CLI
// that does not read the answer ends the session, as for an answer
// written at once: Answer comes from no line whose bodies could say so,
// and returns them (ended).
func (c *Conversation) Answer(callID string, allow bool) (answered bool, ended []event.Body) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := callID
	req, ok := c.asks[id]
	if !ok {
		// The stream renames a reused id "ID#n": the agent's is ID.
		if i := strings.LastIndexByte(callID, '#'); i > 0 {
			id = callID[:i]
			req, ok = c.asks[id]
		}
	}
	if !ok {
		return false, nil
	}
	delete(c.asks, id)
	if err := c.answer(req, allow); adapters.Unread(err) {
		return true, c.unread(nil, "answers", err)
	}
	return true, nil
}

// Asking reports whether the can_use_tool request of callID (the CLI's
// tool_use_id) waits for Answer: one the CLI withdrew
// (control_cancel_request), answered or of a turn that ended does not.
func (c *Conversation) Asking(callID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.asks[callID]
	return ok
}

// answer writes the control_response of a can_use_tool request (req:
// its request_id, NUL, its input). An allow gives back the input asked
// for as updatedInput, as the Agent SDK's canUseTool answers do; a deny's
// message is what the model is told. mu is held.
func (c *Conversation) answer(req string, allow bool) error {
	rid, input, _ := strings.Cut(req, "\x00")
	resp := map[string]any{"behavior": "deny", "message": "The user denied this tool call."}
	if allow {
		resp = map[string]any{"behavior": "allow", "updatedInput": json.RawMessage(input)}
	}
	return c.write(map[string]any{"type": "control_response",
		"response": map[string]any{"subtype": "success", "request_id": rid, "response": resp}})
}

// unread ends the session of a CLI that does not read harness's what
// (answers, prompts; err, a write's): its requests would go on
// unanswered, its prompts unsent. Its error and the result are the
// session's last. mu is held.
func (c *Conversation) unread(dst []event.Body, what string, err error) []event.Body {
	c.over = true
	return append(dst, &event.Error{Code: event.ErrAgentError, Class: event.ClassProtocol, Fatal: true, Partial: &event.Partial{},
		Message: "claude: the CLI does not read harness's " + what + ": " + err.Error(),
		Hint:    "check `claude --version` and the agent's stderr: the CLI stopped reading its stdin"},
		&event.Result{Status: event.ResultError, SessionID: c.p.sessionID})
}

// write writes one message as a line. mu is held.
func (c *Conversation) write(msg any) error { return adapters.WriteLine(c.w, msg) }

// Flush implements adapters.Parser. Usage outside every turn (no turn
// in flight) is dropped, as Parse drops it. The CLI is gone (its stdout
// ended): the setup deadline goes, or it would hold the run up to a
// minute more and end a session already over.
func (c *Conversation) Flush(dst []event.Body) []event.Body {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outputEnded = true
	if c.timer != nil {
		c.timer.Stop()
	}
	n := len(dst)
	dst = c.p.Flush(dst)
	if c.runAnswer != nil {
		notFatal(dst[n:])
	}
	if c.runAnswer != nil && !c.p.emitted.IsZero() {
		// A run cut off in a turn the CLI began itself after the
		// answer: the run's result takes in what that turn spent, as
		// at its result.
		c.runAnswer.Usage.Add(c.p.emitted)
		c.p.emitted = event.Usage{}
		a := *c.runAnswer
		dst = append(dst, &a)
	}
	if c.conv && c.w != nil && !c.inTurn {
		dst = drop[*event.Usage](dst, n)
	}
	return dst
}

// lifecycleLine is a command_lifecycle line: the CLI's report on a
// message with a uuid.
type lifecycleLine struct {
	Type  string `json:"type"`
	UUID  string `json:"command_uuid"`
	State string `json:"state"`
}

// lifecycle handles a command_lifecycle line: the turn of the message
// awaiting begins when the CLI starts it (one it cancels first has none:
// dropped). One started inside a turn of
// the CLI's own (folded in: harness's priority later should prevent it)
// ends that turn there. mu is held.
func (c *Conversation) lifecycle(dst []event.Body, m *lifecycleLine) []event.Body {
	c.echoes = true
	if c.replay && !c.learned && len(m.UUID) == 36 && strings.HasSuffix(m.UUID, "-000000000001") {
		c.prefix, c.learned = m.UUID[:24], true
	}
	if c.w == nil {
		return dst
	}
	if m.State == "cancelled" && c.awaiting != 0 && m.UUID == c.uuid(c.awaiting) {
		return c.dropped(dst)
	}
	if m.State != "started" {
		return dst
	}
	if c.awaiting == 0 || m.UUID != c.uuid(c.awaiting) {
		if k, ok := c.number(m.UUID); ok && k > c.sent {
			c.stray = true
		}
		return dst
	}
	if c.inTurn && c.agent {
		// The CLI's result will total both turns: the part already
		// emitted is this one's.
		c.carry = c.p.emitted
		c.inTurn, c.agent = false, false
		c.withdrawAsks()
		dst = append(dst, &event.TurnEnd{Status: event.ResultSuccess})
	}
	if c.inTurn {
		return dst
	}
	return c.begin(dst)
}

// dropped handles the CLI's cancel of the message awaiting, before it
// started it: that prompt gets no turn, and harness waits for it no
// more, or the session would stay busy (and never done) for a turn that
// cannot come. The next prompt queued goes. mu is held.
func (c *Conversation) dropped(dst []event.Body) []event.Body {
	c.awaiting, c.awaitText = 0, ""
	dst = append(dst, &event.Warning{Code: event.WarnAgentWarning,
		Message: "claude: the CLI cancelled a prompt before its turn began; it has no turn"})
	if !c.inTurn && len(c.queue) > 0 && !c.over {
		dst = c.nextTurn(dst)
	}
	return dst
}

// controlLine is the envelope of the protocol's own lines.
type controlLine struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
	Response  struct {
		Subtype   string `json:"subtype"`
		RequestID string `json:"request_id"`
	} `json:"response"`
	Request struct {
		Subtype   string          `json:"subtype"`
		ToolName  string          `json:"tool_name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
	} `json:"request"`
}

// Parse implements adapters.Parser: the CLI's parser maps the line; the
// protocol's requests are answered, and a turn's result ends the turn.
func (c *Conversation) Parse(dst []event.Body, line []byte) ([]event.Body, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over && c.w != nil {
		return dst, true // after the protocol broke, nothing more
	}
	n := len(dst)
	if bytes.Contains(line, []byte(`"control_`)) {
		var m controlLine
		if json.Unmarshal(line, &m) == nil && strings.HasPrefix(m.Type, "control_") {
			return c.control(dst, &m), true
		}
	}
	if bytes.Contains(line, []byte(`"command_lifecycle"`)) {
		var m lifecycleLine
		if json.Unmarshal(line, &m) == nil && m.Type == "command_lifecycle" {
			return c.lifecycle(dst, &m), true
		}
	}
	c.background(line)
	between := c.conv && c.w != nil && !c.inTurn
	dst, known := c.p.Parse(dst, line)
	if c.notified && hasInit(dst[n:]) {
		c.notified = false // the CLI began a turn: the one that answers it
	}
	if len(dst) > n && !c.started {
		dst = c.release(dst, n)
	}
	if between {
		dst = c.idle(dst, n)
	}
	for i := n; i < len(dst); i++ {
		if r, ok := dst[i].(*event.Result); ok {
			if c.runAnswer != nil {
				return c.afterAnswer(dst, n, i, r), true
			}
			if !c.conv || c.w == nil {
				// A run's result, or each turn's of a captured
				// session (the stream keeps the last). A run the
				// caller interrupted ends cancelled, as a turn does:
				// the CLI's error_during_execution is no error of its.
				c.inTurn = false
				if c.cancelled && r.Status != event.ResultSuccess {
					dst = drop[*event.Error](dst, n)
				}
				if !c.conv && c.w != nil {
					// The run's answer. What the CLI's next result
					// holds is a turn of its own: its usage is counted
					// from here.
					a := *r
					a.Again = true // each copy of it the stream gets is this answer again
					c.runAnswer = &a
					c.p.emitted, c.p.left = event.Usage{}, event.Usage{}
				}
				return dst, true
			}
			return c.turnEnded(dst, n, r, line), true
		}
	}
	if c.runAnswer != nil {
		notFatal(dst[n:]) // a turn of the CLI's own does not fail the run
	}
	return dst, known
}

// afterAnswer maps the result (dst[i], r) of a turn the CLI began by
// itself after a run's prompt was answered (a background command of the
// run ended): the run's result stays the prompt's (its status, text and
// turns), and takes in the usage of that turn, whose usage events are in
// the stream, and the CLI's running total_cost_usd, as a session's
// result takes in the usage of the turns the CLI began itself. That
// turn's failure is not the run's. mu is held.
func (c *Conversation) afterAnswer(dst []event.Body, n, i int, r *event.Result) []event.Body {
	notFatal(dst[n:])
	c.runAnswer.Usage.Add(r.Usage)
	if r.CostUSD != nil {
		c.runAnswer.CostUSD = r.CostUSD
	}
	c.p.emitted, c.p.left = event.Usage{}, event.Usage{}
	a := *c.runAnswer
	dst[i] = &a
	return dst
}

// notFatal makes the errors among bodies not fatal.
func notFatal(bodies []event.Body) {
	for _, b := range bodies {
		if e, ok := b.(*event.Error); ok {
			e.Fatal, e.Partial = false, nil
		}
	}
}

// hasInit reports whether bodies hold a session_start (the CLI's
// system/init, which begins each turn).
func hasInit(bodies []event.Body) bool {
	for _, b := range bodies {
		if _, ok := b.(*event.SessionStart); ok {
			return true
		}
	}
	return false
}

// background follows the CLI's background commands in line: how many
// run, and whether one ended whose turn has not begun. mu is held.
func (c *Conversation) background(line []byte) {
	switch {
	case bytes.Contains(line, []byte(`"background_tasks_changed"`)):
		if m := gjson.ParseBytes(line); m.Get("type").Str == "system" && m.Get("subtype").Str == "background_tasks_changed" {
			c.bgTasks = len(m.Get("tasks").Array())
		}
	case bytes.Contains(line, []byte(`"task_notification"`)):
		if m := gjson.ParseBytes(line); m.Get("type").Str == "system" && m.Get("subtype").Str == "task_notification" {
			c.notified = true
		}
	}
}

// OwnTurnDue reports whether the CLI may still begin a turn of its own
// with no prompt of the caller's: a background command it started still
// runs, or one ended and the turn that answers it has not begun. A
// session closed then has that turn to come (the CLI answers it before
// it exits at the end of its stdin).
func (c *Conversation) OwnTurnDue() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.over && (c.bgTasks > 0 || c.notified)
}

// idle sees the bodies of a line that came with no turn in flight
// (dst[n:]): a system/init begins a turn, the awaiting message's where
// the CLI does not report when it takes one up (echoes), else one of the
// CLI's own; usage outside a turn belongs to none (docs/events.md
// invariant 7: no prompt of the caller's paid for it) and is dropped.
// mu is held.
func (c *Conversation) idle(dst []event.Body, n int) []event.Body {
	for i := n; i < len(dst); i++ {
		if _, ok := dst[i].(*event.SessionStart); !ok {
			continue
		}
		var ts []event.Body
		switch {
		case c.awaiting != 0 && !c.echoes:
			ts = c.begin(nil)
		case c.echoes && !c.stray:
			ts = c.openOwn(nil)
		default:
			continue
		}
		return append(dst[:i+1], append(ts, dst[i+1:]...)...)
	}
	return drop[*event.Usage](dst, n)
}

// drop removes the bodies of type T from dst[n:].
func drop[T event.Body](dst []event.Body, n int) []event.Body {
	out := dst[:n]
	for _, b := range dst[n:] {
		if _, ok := b.(T); !ok {
			out = append(out, b)
		}
	}
	return out
}

// setupExpired ends a session whose CLI did not start in time, from the
// setup timer.
func (c *Conversation) setupExpired() {
	c.mu.Lock()
	if c.started || c.over || c.outputEnded {
		c.mu.Unlock()
		return
	}
	c.over = true
	msg := fmt.Sprintf("claude: the CLI did not start the session (its system/init) within %s of the first prompt", c.setup)
	bodies := []event.Body{&event.Error{Code: event.ErrAgentError, Class: event.ClassProtocol, Fatal: true, Partial: &event.Partial{}, Message: msg,
		Hint: "a stuck start (a login, an MCP server); see the agent's stderr"}, &event.Result{Status: event.ResultError}}
	expired := c.expired
	c.mu.Unlock()
	if expired != nil {
		expired(bodies...)
	}
}

// release puts the first turn's start, held, among the bodies of the
// CLI's first line that has some (dst[n:]): after its session_start. mu is
// held.
func (c *Conversation) release(dst []event.Body, n int) []event.Body {
	c.started = true
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.held == nil {
		return dst
	}
	at := n
	if _, ok := dst[n].(*event.SessionStart); ok {
		at++
	}
	dst = append(dst, nil)
	copy(dst[at+1:], dst[at:])
	dst[at] = c.held
	c.held = nil
	return dst
}

// turnEnded turns the bodies of the turn's result (dst[n:], the Result
// at r, from line) into the turn's end, the caller's or the CLI's own: a
// failed turn is the turn's, so its error is not fatal; a turn the caller
// interrupted ends cancelled, and the CLI's error_during_execution is no
// error of its; the usage of a turn of the CLI's own that the prompt was
// folded into (carry) is that turn's. The next prompt queued goes at
// once, unless one written still waits for the CLI. mu is held.
func (c *Conversation) turnEnded(dst []event.Body, n int, r *event.Result, line []byte) []event.Body {
	// total_cost_usd is the session's so far: the stream takes the
	// turn's part of it.
	end := &event.TurnEnd{Status: r.Status, Text: r.Text, Usage: less(r.Usage, c.carry), SessionCostUSD: r.CostUSD}
	if c.cancelled && r.Status != event.ResultSuccess {
		end.Status = event.ResultCancelled
	}
	out := dst[:n]
	for _, b := range dst[n:] {
		switch v := b.(type) {
		case *event.Result:
		case *event.Error:
			if end.Status == event.ResultCancelled {
				continue
			}
			v.Fatal, v.Partial = false, nil
			out = append(out, v)
		default:
			out = append(out, b)
		}
	}
	if !c.inTurn {
		c.stray = false
		return out // a result of no turn (an answer never asked for): dropped
	}
	if c.agent && c.awaiting != 0 && answered(line, c.uuid(c.awaiting)) {
		// The CLI answered the message awaiting in its own turn, and
		// will not begin one for it.
		c.awaiting, c.awaitText = 0, ""
	}
	c.inTurn, c.agent, c.cancelled, c.carry = false, false, false, event.Usage{}
	c.withdrawAsks()
	out = append(out, end)
	if len(c.queue) > 0 && c.awaiting == 0 && !c.over && c.w != nil {
		out = c.nextTurn(out)
	}
	return out
}

// answered reports whether result, a result line, names the message
// uuid among those its turn took up.
func answered(result []byte, uuid string) bool {
	found := false
	gjson.GetBytes(result, "user_message_uuids").ForEach(func(_, v gjson.Result) bool {
		found = v.Str == uuid
		return !found
	})
	return found || gjson.GetBytes(result, "user_message_uuid").Str == uuid
}

// less is u less what was counted already, field by field, never below 0.
func less(u, counted event.Usage) event.Usage {
	u.InputTokens = max(u.InputTokens-counted.InputTokens, 0)
	u.OutputTokens = max(u.OutputTokens-counted.OutputTokens, 0)
	u.CacheReadTokens = max(u.CacheReadTokens-counted.CacheReadTokens, 0)
	u.CacheWriteTokens = max(u.CacheWriteTokens-counted.CacheWriteTokens, 0)
	u.ReasoningTokens = max(u.ReasoningTokens-counted.ReasoningTokens, 0)
	return u
}

// withdrawAsks forgets the permission requests of the turn that ended:
// the CLI asks nothing across turns. mu is held.
func (c *Conversation) withdrawAsks() {
	for id := range c.asks {
		delete(c.asks, id)
	}
}

// control handles a line of the protocol itself. mu is held.
func (c *Conversation) control(dst []event.Body, m *controlLine) []event.Body {
	switch m.Type {
	case "control_request":
		if c.w == nil {
			return dst
		}
		if m.Request.Subtype != "can_use_tool" {
			// Harness offered nothing else (no hooks, no MCP servers of
			// its own): an error answer, and the session goes on.
			err := c.write(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error",
				"request_id": m.RequestID, "error": "harness does not handle " + m.Request.Subtype}})
			if adapters.Unread(err) {
				return c.unread(dst, "answers", err)
			}
			return dst
		}
		return c.permission(dst, m)
	case "control_cancel_request":
		for id, req := range c.asks {
			if rid, _, _ := strings.Cut(req, "\x00"); rid == m.RequestID {
				delete(c.asks, id)
			}
		}
	case "control_response":
		// The acknowledgement of an interrupt; the turn's result says
		// how it ended.
		if m.Response.Subtype == "success" && m.Response.RequestID != "" && m.Response.RequestID == c.interrupt && c.cancelled {
			c.acked = true
		}
	}
	return dst
}

// permission reports a can_use_tool request and holds it for Answer (ask
// mode); otherwise (a CLI given --permission-prompt-tool by the caller)
// it is refused, as -p without a prompt tool refuses it. mu is held.
func (c *Conversation) permission(dst []event.Body, m *controlLine) []event.Body {
	input := m.Request.Input
	if len(input) == 0 || input[0] != '{' {
		input = json.RawMessage("{}")
	}
	id := m.Request.ToolUseID
	req := m.RequestID + "\x00" + string(input)
	// One of no turn in flight would wait for no turn of the caller's,
	// and hold the idle watchdog off in the next: refused.
	if _, dup := c.asks[id]; !c.ask || !c.inTurn || dup || id == "" || len(c.asks) >= maxQueued {
		if err := c.answer(req, false); adapters.Unread(err) {
			return c.unread(dst, "answers", err)
		}
		return dst
	}
	c.asks[strings.Clone(id)] = req
	ts, _ := toolStart(id, m.Request.ToolName, string(input))
	return append(dst, &event.PermissionRequest{CallID: ts.CallID, Tool: ts.Name, Kind: ts.Kind,
		Input: ts.Input, Command: ts.Command, Path: ts.Path})
}
