package acp

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/jsonrpc"
)

// A live session over ACP (adapters.Conversation): one session/new, then
// one session/prompt per turn on the same session, in order; the answer
// to each ends its turn and sends the next prompt queued. session/cancel
// ends the turn in flight, and with permissions ask each
// session/request_permission waits for the caller's Answer.

var _ adapters.Conversation = (*Client)(nil)

// askMode is the permissions of a live session that asks its caller
// (chooseMode: the agent's mode that asks before edits and commands).
const askMode = "ask"

// maxQueued bounds the permission requests waiting for the caller.
const maxQueued = jsonrpc.MaxQueued

// conversation is the state of a live session. Guarded by Client.mu.
type conversation struct {
	on    bool
	ask   bool              // permissions ask: requests wait for Answer
	queue jsonrpc.Prompts   // prompts not sent yet
	turns int               // prompts sent
	asks  map[string]askReq // pending permission requests, by call id
	// told: an update of no turn was dropped since the last prompt, and
	// a warning said so (betweenTurns).
	told bool
}

// askReq is a permission request waiting for the caller.
type askReq struct {
	id      json.RawMessage // the request's JSON-RPC id
	options json.RawMessage // its options
}

// Converse implements adapters.Conversation: the session opens with no
// prompt, and ask makes permission requests wait for Answer.
func (c *Client) Converse(ask bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.conv = conversation{on: true, ask: ask, asks: map[string]askReq{}}
}

// Prompt implements adapters.Conversation. An agent that does not read
// the prompt ends the session: Prompt comes from no line whose bodies
// could say so, and returns them with its error.
func (c *Client) Prompt(text string) ([]event.Body, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conv.queue.Add(text, c.phase == phaseOver, c.phase == phaseReady, func() ([]event.Body, bool) {
		bodies := c.nextTurn(nil)
		return bodies, c.phase == phaseOver
	})
}

// Busy implements adapters.Conversation: a turn is in flight. The setup
// steps have their own deadline (BoundSetup).
func (c *Client) Busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.phase == phasePrompt
}

// End implements adapters.Conversation: once no turn is in flight and
// none waits, the session is over (Done).
func (c *Client) End() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.conv.queue.End()
	if c.phase == phaseReady && !c.conv.queue.Waiting() {
		c.end()
	}
}

// Answer implements adapters.Conversation: it answers the permission
// request of callID (the stream's id of the call: a reused id renamed
// "ID#n" is the agent's ID) with the option that allows or rejects once.
// An agent that does not read the answer ends the session: Answer comes
// from no line whose bodies could say so (a silent agent may send none),
// and returns them (ended).
func (c *Client) Answer(callID string, allow bool) (answered bool, ended []event.Body) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, req, ok := jsonrpc.Asked(c.conv.asks, callID)
	if !ok {
		return false, nil
	}
	delete(c.conv.asks, id)
	order := []string{"allow_once", "allow_always"}
	if !allow {
		order = []string{"reject_once", "reject_always"}
		c.m.deny(id)
	}
	err := c.write(map[string]any{"jsonrpc": "2.0", "id": req.id, "result": map[string]any{"outcome": pickOption(req.options, order)}})
	if adapters.Unread(err) {
		return true, c.unread(nil, err)
	}
	return true, nil
}

// pickOption is the first option of the kinds in order, or cancelled.
func pickOption(options json.RawMessage, order []string) map[string]string {
	var opts []struct {
		ID   string `json:"optionId"`
		Kind string `json:"kind"`
	}
	json.Unmarshal(options, &opts)
	for _, k := range order {
		for _, o := range opts {
			if o.Kind == k {
				return map[string]string{"outcome": "selected", "optionId": o.ID}
			}
		}
	}
	return map[string]string{"outcome": "cancelled"}
}

// ask holds a permission request for the caller and reports it. mu is
// held.
func (c *Client) ask(dst []event.Body, msg *rpc) []event.Body {
	var p struct {
		ToolCall struct {
			ID       string          `json:"toolCallId"`
			Kind     string          `json:"kind"`
			Title    string          `json:"title"`
			RawInput json.RawMessage `json:"rawInput"`
		} `json:"toolCall"`
		Options json.RawMessage `json:"options"`
	}
	json.Unmarshal(msg.Params, &p)
	id := callID(p.ToolCall.ID)
	if _, dup := c.conv.asks[id]; dup || len(c.conv.asks) >= maxQueued || c.phase != phasePrompt {
		// A second request for one call, or a flood: refused at once. So
		// is one of no turn in flight: it would wait for no turn of the
		// caller's, and hold the idle watchdog off in the next.
		err := c.write(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(strings.Clone(string(msg.ID))),
			"result": map[string]any{"outcome": pickOption(p.Options, []string{"reject_once", "reject_always"})}})
		if adapters.Unread(err) {
			return c.unread(dst, err)
		}
		if !dup && !c.noTurn() {
			c.m.deny(id)
		}
		return dst
	}
	c.conv.asks[id] = askReq{id: json.RawMessage(strings.Clone(string(msg.ID))), options: json.RawMessage(strings.Clone(string(p.Options)))}
	// The request says what its call's tool_start says (requested started
	// the call, if it was not announced before): the kind the agent's
	// own tool has, not ACP's coarser one (Gemini's write_file is a write,
	// which ACP calls an edit), and its path.
	r := &event.PermissionRequest{CallID: id, Tool: field(p.ToolCall.Title), Kind: kinds[cmp.Or(p.ToolCall.Kind, c.m.kindOf(id))]}
	if tc := c.m.open[id]; tc != nil && tc.started {
		r.Tool = tc.name
		r.Kind, r.Path = tc.kind, tc.path
		r.Input = tc.input
	}
	if r.Kind == "" {
		r.Kind = event.KindOther
	}
	if r.Input == nil && len(p.ToolCall.RawInput) > 0 {
		r.Input = json.RawMessage(strings.Clone(string(p.ToolCall.RawInput)))
	}
	if r.Kind == event.KindShell {
		r.Command = inputCommand(r.Input) // as the call's tool_start reads it: a string or an argv
	}
	return append(dst, r)
}

// cancelAsks answers every pending permission request cancelled, as ACP
// asks of a client that cancels the turn. It returns the error of a
// write the agent's stdin did not take (adapters.Unread), else nil. mu
// is held.
func (c *Client) cancelAsks() error {
	var unread error
	for id, req := range c.conv.asks {
		err := c.write(map[string]any{"jsonrpc": "2.0", "id": req.id, "result": map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}})
		if adapters.Unread(err) && unread == nil {
			unread = err
		}
		delete(c.conv.asks, id)
	}
	return unread
}

// ready is the end of the setup in a live session: the first prompt
// queued goes now, else the session waits for one. mu is held.
func (c *Client) ready(dst []event.Body) []event.Body {
	c.phase = phaseReady
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.conv.queue.Waiting() {
		return c.nextTurn(dst)
	}
	if c.conv.queue.Ending() {
		c.end()
	}
	return dst
}

// nextTurn sends the first prompt queued and opens its turn; a prompt
// that cannot be written opens none: the agent is gone (its exit ends
// the session), or does not read it, which ends the session here. mu is
// held.
func (c *Client) nextTurn(dst []event.Body) []event.Body {
	text := c.conv.queue.Next()
	err := c.send("session/prompt", map[string]any{"sessionId": c.sessionID,
		"prompt": []map[string]string{{"type": "text", "text": text}}})
	if adapters.Unread(err) {
		return c.fail(dst, "the agent does not read harness's requests: "+err.Error())
	}
	if err != nil {
		return dst
	}
	c.conv.turns++
	c.conv.told = false
	c.phase = phasePrompt
	return append(dst, &event.TurnStart{TurnID: "turn_" + strconv.Itoa(c.conv.turns), Prompt: text})
}

// turnEnded turns the bodies of a prompt's answer (bodies[n:]: the
// result, and a fatal error for a turn the agent stopped) into the turn's
// end: a failed turn is the turn's, not the session's, so its error is
// not fatal. The next prompt queued goes at once. mu is held.
func (c *Client) turnEnded(dst []event.Body, n int) []event.Body {
	end := &event.TurnEnd{Status: event.ResultError}
	out := dst[:n]
	for _, b := range dst[n:] {
		switch v := b.(type) {
		case *event.Result:
			end.Status, end.Text, end.Usage, end.SessionCostUSD = v.Status, v.Text, v.Usage, v.CostUSD
		case *event.Error:
			v.Fatal, v.Partial = false, nil
			out = append(out, v)
		default:
			out = append(out, b)
		}
	}
	err := c.newTurn()
	out = append(out, end)
	if err != nil {
		return c.unread(out, err)
	}
	return c.ready(out)
}

// turnFailed ends the turn whose prompt the agent answered with an error:
// the error (not fatal) and the turn's end. mu is held.
func (c *Client) turnFailed(dst []event.Body, e *rpcError) []event.Body {
	text := e.Message
	if len(e.Data) > 0 && string(e.Data) != "null" {
		text += ": " + string(e.Data)
	}
	dst, failed := c.m.promptFailed(dst, e.Code, text)
	failed.Fatal, failed.Partial = false, nil
	failed.Message = truncate(fmt.Sprintf("session/prompt failed: %s", text), 2000)
	end := &event.TurnEnd{Status: event.ResultError, SessionCostUSD: c.m.cost}
	if err := c.newTurn(); err != nil {
		return c.unread(append(dst, failed, end), err)
	}
	return c.ready(append(dst, failed, end))
}

// newTurn forgets what the mapper kept of the turn that ended: its answer,
// a failure of its own, the session's cost it reported (a running total:
// the next turn's is the one reported from now on), its calls still open
// (the turn's end closes them), and answers the permission requests
// still waiting cancelled: the error of one the agent's stdin did not
// take is returned (cancelAsks). mu is held.
func (c *Client) newTurn() error {
	c.m.cost = nil
	c.m.lastMessage = ""
	c.m.text.Reset()
	c.m.thought.Reset()
	c.m.systemError = false
	c.m.errText.Reset()
	c.m.heard = false
	c.m.turnOver()
	return c.cancelAsks()
}

// betweenTurns drops a session/update of the live session's agent that
// comes with no turn in flight (before the first prompt, or after a
// prompt's answer and before the next prompt): its text, thought, plan
// or tool call would be of no turn, outside every turn_start … turn_end,
// and its call would stay open into the next turn and hold that turn's
// watchdog to its tool budget. The first thought, plan or call dropped
// since the last prompt gets a warning; text is dropped unsaid, as the
// chatter it is before a prompt (Gemini's mode updates). false: the
// update is no such one and maps as ever (a cost, a mode, a session's
// status, a late update of a call that has ended). mu is held.
func (c *Client) betweenTurns(dst []event.Body, params json.RawMessage) ([]event.Body, bool) {
	var p struct {
		Update struct {
			Kind string `json:"sessionUpdate"`
			ID   string `json:"toolCallId"`
		} `json:"update"`
	}
	json.Unmarshal(params, &p)
	switch kind := p.Update.Kind; kind {
	case "agent_message_chunk":
	case "tool_call_update":
		if c.m.ended.Has(callID(p.Update.ID)) {
			return dst, false // late news of a turn's call, which opens none
		}
		fallthrough
	case "agent_thought_chunk", "plan", "tool_call":
		if !c.conv.told {
			c.conv.told = true
			dst = append(dst, &event.Warning{Code: event.WarnAgentWarning,
				Message: "acp: the agent sent a " + kind + " update with no turn in flight; what it sends between turns is of no turn, and is dropped"})
		}
	default:
		return dst, false
	}
	return dst, true
}
