package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/process"
	"github.com/agentharness/harness/serve"
)

// newSessionFixture is a server whose agent fake-acp is the fake ACP
// agent in mode.
func newSessionFixture(t *testing.T, mode string) *fixture {
	t.Helper()
	argv, _ := fakeagent.Command("acp-agent", mode)
	return newFixtureWith(t, "acp-agent", func(cfg *serve.Config) {
		cfg.Launcher.Settings.Config.Agents["fake-acp"] = config.AgentConfig{Protocol: "acp", Command: argv}
	})
}

// startSession opens a live session through the API; its first prompt,
// when given, is its first turn.
func (f *fixture) startSession(t *testing.T, prompt, permissions, cwd string) string {
	t.Helper()
	return f.api.Start(t, `{"agent":"fake-acp","session":true,"prompt":`+strconv.Quote(prompt)+
		`,"permissions":`+strconv.Quote(permissions)+`,"cwd":`+strconv.Quote(cwd)+`}`).Run
}

// post sends a session command and returns its status and body.
func (f *fixture) post(t *testing.T, path, body string) (int, string) {
	t.Helper()
	res := f.api.Do(t, context.Background(), "POST", path, body, f.api.Auth())
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// follow reads the run's stream to its end, handing each event to fn,
// and returns the stream (the session log's lines).
func (f *fixture) follow(t *testing.T, run string, fn func(ev map[string]any)) []byte {
	t.Helper()
	res := f.api.Events(t, context.Background(), run, nil)
	defer res.Body.Close()
	var out []byte
	readSSE(t, res.Body, func(m sse) bool {
		if m.event == "end" {
			return false
		}
		out = append(append(out, m.data...), '\n')
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(m.data), &ev))
		fn(ev)
		return true
	})
	return out
}

// checkSession checks an ended session's stream and that no process of
// it is left.
func checkSession(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	require.NoError(t, event.CheckNDJSON(out), "%s", out)
	var evs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &ev))
		evs = append(evs, ev)
		if ev["type"] == "session_start" {
			pid, _ := ev["pid"].(float64)
			require.NotZero(t, pid)
			t.Cleanup(func() { require.False(t, process.Alive(int(pid)), "the agent is still alive") })
		}
	}
	return evs
}

func ofType(evs []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, ev := range evs {
		if ev["type"] == typ {
			out = append(out, ev)
		}
	}
	return out
}

// TestSessionTurns drives a live session through the API: a slow first
// turn interrupted, then two turns whose permission requests are allowed
// and denied, then the end. The stream is one run's: three turn pairs,
// the interrupted one cancelled, event.Check holds, no process is left.
func TestSessionTurns(t *testing.T) {
	f := newSessionFixture(t, "slow-then-normal")
	work := t.TempDir()
	run := f.startSession(t, "one", "ask", work)
	base := "/api/runs/" + run
	ends, asks := 0, 0
	out := f.follow(t, run, func(ev map[string]any) {
		switch ev["type"] {
		case "tool_start":
			if ends == 0 {
				st, b := f.post(t, base+"/interrupt", "")
				require.Equal(t, http.StatusAccepted, st, b)
			}
		case "permission_request":
			asks++
			st, b := f.post(t, base+"/permissions/"+ev["call_id"].(string), `{"allow":`+strconv.FormatBool(asks == 1)+`}`)
			require.Equal(t, http.StatusOK, st, b)
			st, b = f.post(t, base+"/permissions/"+ev["call_id"].(string), `{"allow":true}`)
			require.Equal(t, http.StatusNotFound, st, "answered twice: %s", b)
		case "turn_end":
			ends++
			next := map[int]string{1: "two", 2: "three"}[ends]
			if next == "" {
				st, b := f.post(t, base+"/end", "")
				require.Equal(t, http.StatusAccepted, st, b)
				return
			}
			st, b := f.post(t, base+"/messages", `{"text":`+strconv.Quote(next)+`}`)
			require.Equal(t, http.StatusAccepted, st, b)
		}
	})
	evs := checkSession(t, out)
	var statuses, prompts []string
	for _, ev := range ofType(evs, "turn_end") {
		statuses = append(statuses, ev["status"].(string))
	}
	for _, ev := range ofType(evs, "turn_start") {
		prompts = append(prompts, ev["prompt"].(string))
	}
	require.Equal(t, []string{"cancelled", "success", "success"}, statuses)
	require.Equal(t, []string{"one", "two", "three"}, prompts)
	require.Len(t, ofType(evs, "session_start"), 1)
	res := ofType(evs, "result")
	require.Len(t, res, 1)
	require.Equal(t, "success", res[0]["status"])
	require.Equal(t, 2, asks)
	require.FileExists(t, filepath.Join(work, fakeagent.TurnFile(2)), "allowed")
	require.NoFileExists(t, filepath.Join(work, fakeagent.TurnFile(3)), "denied")
	require.Equal(t, string(out), f.logOf(t, run))

	// Over: its commands are conflicts, the run is still there.
	waitStatus(t, f, run)
	st, b := f.post(t, base+"/messages", `{"text":"four"}`)
	require.Equal(t, http.StatusConflict, st, b)
	require.Contains(t, b, "not a live session")
}

// TestSessionAgentDies: the agent dies in the middle of the second turn:
// the turn is closed, the session ends in error, no process is left, and
// the next prompt is a conflict.
func TestSessionAgentDies(t *testing.T) {
	f := newSessionFixture(t, "die-mid-turn")
	run := f.startSession(t, "one", "full-access", t.TempDir())
	base := "/api/runs/" + run
	ends := 0
	out := f.follow(t, run, func(ev map[string]any) {
		if ev["type"] == "turn_end" {
			if ends++; ends > 1 {
				return
			}
			st, b := f.post(t, base+"/messages", `{"text":"two"}`)
			require.Equal(t, http.StatusAccepted, st, b)
		}
	})
	evs := checkSession(t, out)
	require.Len(t, ofType(evs, "turn_end"), 2)
	require.Equal(t, "error", ofType(evs, "result")[0]["status"])
	waitStatus(t, f, run)
	st, b := f.post(t, base+"/messages", `{"text":"three"}`)
	require.Equal(t, http.StatusConflict, st, b)
}

// TestSessionShutdown: closing the server ends its live sessions, and
// nothing of them is left; a command after it is 503.
func TestSessionShutdown(t *testing.T) {
	f := newSessionFixture(t, "normal")
	run := f.startSession(t, "", "full-access", t.TempDir())
	// A blank message is no prompt, as an empty one is not.
	for _, text := range []string{"", "  \n\t "} {
		st, b := f.post(t, "/api/runs/"+run+"/messages", `{"text":`+strconv.Quote(text)+`}`)
		require.Equal(t, http.StatusBadRequest, st, b)
		require.Contains(t, b, "a message needs its text")
	}
	res := f.api.Events(t, context.Background(), run, map[string]string{"Accept": "application/x-ndjson"})
	defer res.Body.Close()
	require.NoError(t, f.srv.Close())
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	evs := checkSession(t, b)
	require.Equal(t, "cancelled", ofType(evs, "result")[0]["status"])
	require.Zero(t, serve.LiveRuns(f.srv))
	// A command after it: the server is shutting down (503), as a new run
	// is told; it was 409, a run "not a live session".
	st, msg := f.post(t, "/api/runs/"+run+"/messages", `{"text":"more"}`)
	require.Equal(t, http.StatusServiceUnavailable, st, msg)
	require.Contains(t, msg, "shutting down")
}

// TestSessionBadInput: each wrong command is one JSON error with its
// status.
func TestSessionBadInput(t *testing.T) {
	f := newSessionFixture(t, "normal")
	sess := f.startSession(t, "", "ask", t.TempDir())
	for name, tc := range map[string]struct {
		path, body string
		status     int
		msg        string
	}{
		"unknown-run":        {"/api/runs/run_nope/messages", `{"text":"x"}`, 404, "no such run"},
		"unknown-run-end":    {"/api/runs/run_nope/end", "", 404, "no such run"},
		"no-text":            {"/api/runs/" + sess + "/messages", `{}`, 400, "text"},
		"not-json":           {"/api/runs/" + sess + "/messages", `hello`, 400, "bad request body"},
		"unknown-field":      {"/api/runs/" + sess + "/messages", `{"text":"x","role":"system"}`, 400, "role"},
		"answer-no-allow":    {"/api/runs/" + sess + "/permissions/c1", `{}`, 400, "allow"},
		"answer-not-waiting": {"/api/runs/" + sess + "/permissions/c1", `{"allow":true}`, 404, "c1"},
		"session-budget-run": {"/api/runs", `{"agent":"claude","prompt":"x","budgets":{"turn":"1s"}}`, 400, "session"},
		"bad-turn-budget":    {"/api/runs", `{"agent":"fake-acp","session":true,"budgets":{"turn":"-1s"}}`, 400, "budgets.turn"},
		"run-needs-prompt":   {"/api/runs", `{"agent":"fake-acp"}`, 400, "prompt"},
		"ask-needs-session":  {"/api/runs", `{"agent":"fake-acp","prompt":"x","permissions":"ask"}`, 400, "ask"},
	} {
		t.Run(name, func(t *testing.T) {
			st, b := f.post(t, tc.path, tc.body)
			require.Equal(t, tc.status, st, b)
			var e struct{ Error string }
			require.NoError(t, json.Unmarshal([]byte(b), &e), b)
			require.Contains(t, e.Error, tc.msg)
		})
	}
	st, b := f.post(t, "/api/runs/"+sess+"/end", "")
	require.Equal(t, http.StatusAccepted, st, b)
	waitStatus(t, f, sess)
}

// refusedSession is a session whose first prompt its start refused.
type refusedSession struct{ closed chan struct{} }

func (s *refusedSession) Send(string) error             { return harness.ErrSessionOver }
func (s *refusedSession) Interrupt()                    {}
func (s *refusedSession) Answer(string, bool) bool      { return false }
func (s *refusedSession) Wait() (*event.Result, error)  { return nil, harness.ErrSessionOver }
func (s *refusedSession) Close() (*event.Result, error) { close(s.closed); return s.Wait() }
func refuseTask(context.Context, harness.Task, harness.SessionOptions) (serve.Session, error) {
	return nil, &harness.TaskError{Err: errors.New("fake-acp holds no live session")}
}

// TestSessionStartRefused: a session the launcher refuses is the
// request's fault (400), one whose first prompt failed is closed, and the
// server keeps nothing of either.
func TestSessionStartRefused(t *testing.T) {
	refused := &refusedSession{closed: make(chan struct{})}
	for name, tc := range map[string]struct {
		start  func(context.Context, harness.Task, harness.SessionOptions) (serve.Session, error)
		status int
		msg    string
	}{
		"task-refused": {refuseTask, http.StatusBadRequest, "no live session"},
		"prompt-failed": {func(context.Context, harness.Task, harness.SessionOptions) (serve.Session, error) {
			return refused, errors.New("the first prompt: broken pipe")
		}, http.StatusInternalServerError, "broken pipe"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixtureWith(t, "acp-agent", func(cfg *serve.Config) { cfg.Launcher.StartSession = tc.start })
			st, b := f.post(t, "/api/runs", `{"agent":"fake-acp","session":true,"prompt":"one"}`)
			require.Equal(t, tc.status, st, b)
			require.Contains(t, b, tc.msg)
			require.Zero(t, serve.LiveRuns(f.srv))
			require.NoError(t, f.srv.Close())
		})
	}
	<-refused.closed
}
