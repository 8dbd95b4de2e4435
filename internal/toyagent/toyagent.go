// Package toyagent is the made-up agent that docs/adding-an-agent.md adds,
// for tests: one package (its Agent value) and one registration
// (Register). It speaks the second transport, a session over stdio, in the
// made-up protocol of fakeagent.ToySession (not ACP), and is wired to the
// scripted model by its TOY_BASE_URL variable.
package toyagent

import (
	"encoding/json"
	"io"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/registry"
)

// Agent is the toy agent, all of it: its identity, its adapter, and how
// --mock points it at the scripted model.
var Agent = harness.Agent{
	Info: registry.AgentInfo{ID: "toy", Display: "Toy Agent", Aliases: []string{"toy-agent"},
		Binaries: []string{"toy-agent"}},
	Driver: Adapter{},
	Mock:   mock,
}

// Register registers Agent, once however often it is called.
var Register = sync.OnceValue(func() error { return harness.Register(Agent) })

// mock points the toy agent at the scripted model (Agent.Mock).
func mock(baseURL, home, workdir string) (string, []string, error) {
	var c adapters.MockConfig
	c.Env("TOY_BASE_URL", baseURL)
	return c.Result("toy-model")
}

// Adapter drives the toy agent (Agent.Driver).
type Adapter struct{}

// Command runs the binary alone: the prompt goes in the session's first
// request, not on argv.
func (Adapter) Command(bin string, _ adapters.Task) (adapters.Command, error) {
	return adapters.Command{Argv: []string{bin}, PromptIndex: -1, Session: true}, nil
}

// NewParser returns the harness's side of one session.
func (Adapter) NewParser() adapters.Parser { return &session{} }

// session sends the prompt, grants the agent's requests in full-access mode
// only, and is done at the end of the turn.
type session struct {
	stdin io.Writer
	allow bool
	done  bool
}

func (s *session) Begin(stdin io.Writer, t adapters.Task) error {
	s.stdin, s.allow = stdin, t.Permissions == adapters.FullAccess
	return s.send(map[string]any{"op": "prompt", "text": t.Prompt})
}

func (s *session) send(m map[string]any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = s.stdin.Write(append(b, '\n'))
	return err
}

func (s *session) Parse(dst []event.Body, line []byte) ([]event.Body, bool) {
	switch gjson.GetBytes(line, "op").String() {
	case "ask": // a request of the agent: answered before the next line
		return dst, s.send(map[string]any{"op": "answer", "id": gjson.GetBytes(line, "id").Int(), "allow": s.allow}) == nil
	case "say":
		return append(dst, &event.Message{Role: "assistant", Text: gjson.GetBytes(line, "text").String()}), true
	case "done":
		s.done = true
		return append(dst, &event.Result{Status: event.ResultSuccess, Text: gjson.GetBytes(line, "text").String()}), true
	}
	return dst, false
}

func (s *session) Flush(dst []event.Body) []event.Body { return dst }
func (s *session) Done() bool                          { return s.done }
