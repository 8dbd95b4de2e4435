// Package jsonrpc is the client side of line-delimited JSON-RPC 2.0 that
// harness's session protocols share (ACP, Codex's app-server): requests
// numbered and remembered until answered, notifications, replies to the
// agent's requests, one message a line on the agent's stdin.
package jsonrpc

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// Conn writes to one agent. A Conn without a writer writes nothing (a
// captured session, only read). It is not safe for concurrent use: its
// user's lock guards it.
type Conn struct {
	w       io.Writer
	version bool // "jsonrpc":"2.0" on every message (ACP); Codex's app-server leaves it out
	next    int64
	pending map[int64]string // request id → method
}

// New returns a Conn writing to w (nil: none); version adds the
// "jsonrpc" member.
func New(w io.Writer, version bool) *Conn {
	return &Conn{w: w, version: version, pending: map[int64]string{}}
}

// Request writes a request, numbered from 1, and remembers its method.
func (c *Conn) Request(method string, params any) error {
	c.next++
	c.pending[c.next] = method
	return c.Write(map[string]any{"id": c.next, "method": method, "params": params})
}

// Notify writes a notification.
func (c *Conn) Notify(method string, params any) error {
	return c.Write(map[string]any{"method": method, "params": params})
}

// Reply answers the agent's request id with result.
func (c *Conn) Reply(id json.RawMessage, result any) error {
	return c.Write(map[string]any{"id": id, "result": result})
}

// Write writes one message as a line.
func (c *Conn) Write(msg map[string]any) error {
	if c.w == nil {
		return nil
	}
	if c.version {
		msg["jsonrpc"] = "2.0"
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = c.w.Write(append(b, '\n'))
	return err
}

// Answered returns the method of the request an answer of id is for, and
// forgets the request; "" when no request of that id is waiting.
func (c *Conn) Answered(id json.RawMessage) string {
	var n int64
	if json.Unmarshal(id, &n) != nil {
		return ""
	}
	method := c.pending[n]
	delete(c.pending, n)
	return method
}

// Shape names the request a captured answer belongs to, from its fields:
// byField are pairs of a field and the method whose answer has it, tried
// in order; an empty object is empty's answer.
func Shape(result json.RawMessage, empty string, byField ...string) string {
	var r map[string]json.RawMessage
	if json.Unmarshal(result, &r) != nil {
		return ""
	}
	for i := 0; i+1 < len(byField); i += 2 {
		if r[byField[i]] != nil {
			return byField[i+1]
		}
	}
	if len(r) == 0 {
		return empty
	}
	return ""
}

// Asked finds the permission request of callID among those waiting: the
// stream renames a reused call id "ID#n", and the agent asked for ID.
func Asked[T any](waiting map[string]T, callID string) (id string, req T, ok bool) {
	if req, ok = waiting[callID]; ok {
		return callID, req, true
	}
	if i := strings.LastIndexByte(callID, '#'); i > 0 {
		req, ok = waiting[callID[:i]]
		return callID[:i], req, ok
	}
	return "", req, false
}

// Broken is the end of a session whose agent broke the protocol: one
// fatal agent_error of class protocol (msg, hint), and the result with
// the session's id and the usage counted so far.
func Broken(dst []event.Body, msg, hint, session string, usage event.Usage) []event.Body {
	return append(dst, &event.Error{Code: event.ErrAgentError, Class: event.ClassProtocol, Fatal: true, Partial: &event.Partial{},
		Message: msg, Hint: hint}, &event.Result{Status: event.ResultError, SessionID: session, Usage: usage})
}

// MaxQueued bounds the prompts waiting for the turn in progress.
const MaxQueued = adapters.MaxQueued

// Prompts' refusals.
var (
	ErrQueueFull = adapters.ErrQueueFull
	ErrOver      = errors.New("the session is over")
)

// Prompts are a live session's prompts waiting for their turn, and
// whether the caller said no more will come. Its user's lock guards it.
type Prompts struct {
	queue  []string
	ending bool
}

// Add queues text and, when the agent is free for a prompt, sends the
// first waiting with send, which returns the opened turn's bodies (none:
// the agent is gone), or, ended, those that end the session (the agent
// does not read it): Add returns them with ErrOver. over: the session
// has ended.
func (p *Prompts) Add(text string, over, free bool, send func() (bodies []event.Body, ended bool)) ([]event.Body, error) {
	switch {
	case over || p.ending:
		return nil, ErrOver
	case len(p.queue) >= MaxQueued:
		return nil, ErrQueueFull
	}
	p.queue = append(p.queue, text)
	if !free {
		return nil, nil // sent when the setup or the turn in progress ends
	}
	bodies, ended := send()
	if len(bodies) == 0 || ended {
		return bodies, ErrOver
	}
	return bodies, nil
}

// Next takes the first prompt waiting; Waiting says there is one.
func (p *Prompts) Next() string {
	text := p.queue[0]
	p.queue[0] = ""
	p.queue = p.queue[1:]
	return text
}

// Waiting reports whether a prompt waits for its turn.
func (p *Prompts) Waiting() bool { return len(p.queue) > 0 }

// End says no prompt will follow; Ending reports it.
func (p *Prompts) End()         { p.ending = true }
func (p *Prompts) Ending() bool { return p.ending }
