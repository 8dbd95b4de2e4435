package harness_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/fakeagent"
)

// Scripted fakes of the live session tests: an ACP agent and a Codex
// app-server that play a scenario given as JSON in $scriptVar, for the
// turns the fakes of internal/fakeagent have no mode for.
const (
	acpScript       = "acp-script"
	appServerScript = "appserver-script"
	scriptVar       = "HARNESS_TEST_SCRIPT"
)

func init() {
	fakeagent.Register(acpScript, runACPScript)
	fakeagent.Register(appServerScript, runAppServerScript)
}

// script is a scripted fake's scenario: the actions of each prompt (the
// last for every prompt after them), and those it takes when it gets
// SIGINT or SIGTERM, before it exits 0 (none: it just exits 0).
type script struct {
	Turns    [][]step `json:"turns"`
	OnSignal []step   `json:"on_signal,omitempty"`
}

// step is one action of a scripted fake; one field is set.
type step struct {
	Update     json.RawMessage `json:"update,omitempty"`     // ACP: a session/update of the session
	Ask        string          `json:"ask,omitempty"`        // ACP: a session/request_permission for this tool call, and the wait for its answer
	WaitCancel bool            `json:"waitcancel,omitempty"` // ACP: read until session/cancel
	Hang       bool            `json:"hang,omitempty"`       // read until the end of stdin, then exit 0
	End        string          `json:"end,omitempty"`        // ACP: the prompt's answer with this stopReason; app-server: turn/completed with this status
	Usage      json.RawMessage `json:"usage,omitempty"`      // ACP: the answer's usage
	Message    string          `json:"message,omitempty"`    // app-server: an agentMessage item of the turn
	Raw        json.RawMessage `json:"raw,omitempty"`        // app-server: a message sent as it is
}

// scripted is what both scripted fakes share: the scenario, stdin as
// messages, stdout as lines written whole, and the prompt (its request
// id) in progress, which on_signal answers.
type scripted struct {
	sc     script
	in     chan map[string]json.RawMessage
	mu     sync.Mutex
	out    *json.Encoder
	prompt json.RawMessage
}

// newScripted reads the scenario and starts reading stdin; nil when the
// scenario is not valid.
func newScripted() *scripted {
	s := &scripted{in: make(chan map[string]json.RawMessage), out: json.NewEncoder(os.Stdout)}
	if json.Unmarshal([]byte(os.Getenv(scriptVar)), &s.sc) != nil {
		return nil
	}
	go func() {
		defer close(s.in)
		r := bufio.NewScanner(os.Stdin)
		r.Buffer(make([]byte, 1<<20), 1<<20)
		for r.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(r.Bytes(), &m) == nil {
				s.in <- m
			}
		}
	}()
	return s
}

func (s *scripted) send(v map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.out.Encode(v)
}

// until reads messages until one that ok takes; false at the end of stdin.
func (s *scripted) until(ok func(m map[string]json.RawMessage) bool) bool {
	for m := range s.in {
		if ok(m) {
			return true
		}
	}
	return false
}

// onSignal plays the on_signal steps with play when the fake gets SIGINT
// or SIGTERM, then exits 0.
func (s *scripted) onSignal(play func(steps []step, id json.RawMessage) bool) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sigs
		s.mu.Lock()
		id := s.prompt
		s.mu.Unlock()
		play(s.sc.OnSignal, id)
		os.Exit(0)
	}()
}

// turn is the steps of prompt n (from 1).
func (s *scripted) turn(n int) []step {
	if len(s.sc.Turns) == 0 {
		return nil
	}
	return s.sc.Turns[min(n, len(s.sc.Turns))-1]
}

// method is m's method, "" for an answer.
func method(m map[string]json.RawMessage) string {
	var name string
	json.Unmarshal(m["method"], &name)
	return name
}

// runACPScript is acp-script: an ACP agent (session sess-s) that plays
// the steps of each session/prompt. It exits 0 at the end of stdin.
func runACPScript([]string) int {
	s := newScripted()
	if s == nil {
		return 2
	}
	update := func(u json.RawMessage) {
		s.send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": "sess-s", "update": u}})
	}
	asks := 0
	var play func(steps []step, id json.RawMessage) bool
	play = func(steps []step, id json.RawMessage) bool {
		for _, st := range steps {
			switch {
			case st.Update != nil:
				update(st.Update)
			case st.Ask != "":
				asks++
				ask := 900 + asks
				s.send(map[string]any{"jsonrpc": "2.0", "id": ask, "method": "session/request_permission", "params": map[string]any{
					"sessionId": "sess-s", "toolCall": map[string]any{"toolCallId": st.Ask, "kind": "execute", "title": "rm x",
						"rawInput": map[string]string{"command": "rm x"}},
					"options": []any{map[string]string{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
						map[string]string{"optionId": "no", "name": "Reject", "kind": "reject_once"}}}})
				if !s.until(func(m map[string]json.RawMessage) bool {
					return string(m["id"]) == strconv.Itoa(ask) && method(m) == ""
				}) {
					return false
				}
			case st.WaitCancel:
				if !s.until(func(m map[string]json.RawMessage) bool { return method(m) == "session/cancel" }) {
					return false
				}
			case st.Hang:
				s.until(func(map[string]json.RawMessage) bool { return false })
				return false
			case st.End != "":
				res := map[string]any{"stopReason": st.End}
				if st.Usage != nil {
					res["usage"] = st.Usage
				}
				s.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": res})
			}
		}
		return true
	}
	s.onSignal(play)
	turns := 0
	for m := range s.in {
		switch method(m) {
		case "initialize":
			s.send(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": map[string]any{"protocolVersion": 1,
				"agentCapabilities": map[string]any{}, "authMethods": []any{}}})
		case "session/new":
			s.send(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": map[string]any{"sessionId": "sess-s"}})
		case "session/prompt":
			turns++
			s.mu.Lock()
			s.prompt = m["id"]
			s.mu.Unlock()
			if !play(s.turn(turns), m["id"]) {
				return 0
			}
		}
	}
	return 0
}

// runAppServerScript is appserver-script: a Codex app-server (thread
// thread-s) whose turns say their message and complete with their end
// status. It exits 0 at the end of stdin.
func runAppServerScript([]string) int {
	s := newScripted()
	if s == nil {
		return 2
	}
	turns := 0
	for m := range s.in {
		switch method(m) {
		case "initialize":
			s.send(map[string]any{"id": m["id"], "result": map[string]any{"userAgent": "harness/0.169.0 (fake)"}})
		case "thread/start":
			s.send(map[string]any{"id": m["id"], "result": map[string]any{"thread": map[string]any{"id": "thread-s"}, "model": "fake"}})
		case "turn/start":
			turns++
			turn := map[string]any{"id": "turn-" + strconv.Itoa(turns), "items": []any{}, "status": "inProgress"}
			s.send(map[string]any{"id": m["id"], "result": map[string]any{"turn": turn}})
			s.send(map[string]any{"method": "turn/started", "params": map[string]any{"threadId": "thread-s", "turn": turn}})
			for _, st := range s.turn(turns) {
				switch {
				case st.Raw != nil:
					var m map[string]any
					json.Unmarshal(st.Raw, &m)
					s.send(m)
				case st.Message != "":
					s.send(map[string]any{"method": "item/completed", "params": map[string]any{"threadId": "thread-s", "turnId": turn["id"],
						"item": map[string]any{"type": "agentMessage", "id": "m" + strconv.Itoa(turns), "text": st.Message}}})
				case st.End != "":
					done := map[string]any{"id": turn["id"], "items": []any{}, "status": st.End}
					s.send(map[string]any{"method": "turn/completed", "params": map[string]any{"threadId": "thread-s", "turn": done}})
				}
			}
		}
	}
	return 0
}

// startScript starts a live session of the scripted fake (acpScript or
// appServerScript) playing sc, with the permissions, budgets b and the
// session options so (their callbacks replaced by the recorder's).
func startScript(t *testing.T, fake string, sc script, permissions string, b harness.Budgets, so harness.SessionOptions) (*harness.Session, *liveRec) {
	t.Helper()
	data, err := json.Marshal(sc)
	require.NoError(t, err)
	argv, env := fakeagent.Command(fake)
	task := harness.Task{Agent: "fake-acp", Protocol: harness.ProtocolACP, Command: argv, Permissions: permissions, Budgets: &b,
		BaseEnv: append(env, scriptVar+"="+string(data)), Cwd: t.TempDir()}
	if fake == appServerScript {
		task.Agent, task.Protocol, task.Command, task.Binary = "codex", harness.ProtocolAppServer, nil, argv[0]
	}
	rec := &liveRec{logs: t.TempDir()}
	so.Options = rec.options()
	st := harness.Settings{LogDir: rec.logs}
	s, err := st.StartSession(context.Background(), task, so)
	require.NoError(t, err)
	return s, rec
}

// steps reads a scenario's steps from JSON.
func steps(t *testing.T, js string) []step {
	t.Helper()
	var s []step
	require.NoError(t, json.Unmarshal([]byte(js), &s))
	return s
}
