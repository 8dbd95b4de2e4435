package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/logger"
	"github.com/agentharness/harness/process"
)

// Launcher is how the server starts runs: through the library, with the
// settings `harness run` uses (configuration, pinned agents, model
// registry, session logs in the server's directory).
type Launcher struct {
	Settings *harness.Settings
	// AttachMock points a task at a scripted model playing scenario and
	// returns what stops it; nil refuses requests that ask for one. The
	// stop is called at the run's end on the server's goroutine that
	// waits for the run: a panic there (or in the run's last callbacks)
	// takes the program down once every run is ended
	// (process.ContainPanic).
	AttachMock func(t *harness.Task, scenario string) (stop func(), err error)
	// StartSession starts the live sessions of POST /api/runs with
	// "session": true; nil: Settings.StartSession.
	StartSession func(ctx context.Context, t harness.Task, o harness.SessionOptions) (Session, error)
}

// Session is what the server needs of a live session (harness.Session).
type Session interface {
	Send(prompt string) error
	Interrupt()
	Answer(callID string, allow bool) bool
	Close() (*event.Result, error)
	Wait() (*event.Result, error)
}

// RunRequest is the body of POST /api/runs. Durations are Go durations
// ("90s", "5m"); "0" turns a budget off; empty keeps the default.
type RunRequest struct {
	Agent       string `json:"agent"`
	Prompt      string `json:"prompt"`
	Cwd         string `json:"cwd,omitempty"`
	Model       string `json:"model,omitempty"`
	Mock        string `json:"mock,omitempty"` // a scripted-model scenario: no API key, no network
	Permissions string `json:"permissions,omitempty"`
	// Session opens a live session (docs/supervision.md): the prompt, when
	// given, is its first turn; more come by POST /api/runs/{run}/messages.
	Session bool `json:"session,omitempty"`
	Budgets struct {
		Idle      string `json:"idle,omitempty"`
		Hard      string `json:"hard,omitempty"`
		Tool      string `json:"tool,omitempty"`
		Linger    string `json:"linger,omitempty"`
		KillGrace string `json:"kill_grace,omitempty"`
		Turn      string `json:"turn,omitempty"` // a session's turn (--turn-timeout)
		Ask       string `json:"ask,omitempty"`  // a session's permission request (--ask-timeout)
	} `json:"budgets"`
}

// maxRequest caps the body of POST /api/runs (the prompt with it).
const maxRequest = 16 << 20

// errTrailing is a request body with more after its JSON object.
var errTrailing = errors.New("data after the JSON object")

// decodeBody reads the request's body into v: one JSON object of v's
// fields (an unknown one is an error) and nothing after it but space. A
// decoder reads one value and leaves the rest: a body with more (a second
// object, garbage) would be acted on as if it were the object alone.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	switch _, err := dec.Token(); {
	case errors.Is(err, io.EOF):
		return nil
	case err == nil:
		return errTrailing
	default:
		return fmt.Errorf("%w: %w", errTrailing, err)
	}
}

// startRun serves POST /api/runs: 201 with the run's summary and the URL
// of its events.
func (s *Server) startRun(w http.ResponseWriter, r *http.Request) error {
	var req RunRequest
	if err := decodeBody(w, r, &req); err != nil {
		return httpErrorf(http.StatusBadRequest, "bad run request: %w", err)
	}
	task, so, err := s.cfg.Launcher.task(req)
	if err != nil {
		return withStatus(http.StatusBadRequest, err)
	}
	// The run is the child of the caller's span (a traceparent header)
	// when runs are traced; it outlives the request, so only the header
	// is carried, not the request's context.
	ctx := harness.ContextWithTraceparent(context.Background(), r.Header.Get("traceparent"))
	id, err := s.launch(ctx, task, req.Mock, so)
	if err != nil {
		return err
	}
	m, why, err := logger.LoadChecked(s.cfg.Dir, id)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/runs/"+id)
	writeJSON(w, http.StatusCreated, s.info(m, why))
	return nil
}

// task turns a request into a harness task over the launcher's defaults,
// and the session's options when it asks for a live session (else nil).
func (l Launcher) task(req RunRequest) (harness.Task, *harness.SessionOptions, error) {
	if req.Agent == "" {
		return harness.Task{}, nil, fmt.Errorf("agent is required (%s)", strings.Join(harness.AgentNames(), ", "))
	}
	if req.Prompt == "" && !req.Session {
		return harness.Task{}, nil, errors.New("prompt is required")
	}
	if !req.Session && (req.Budgets.Turn != "" || req.Budgets.Ask != "") {
		return harness.Task{}, nil, errors.New("budgets.turn and budgets.ask are a session's (\"session\": true)")
	}
	var o harness.BudgetOverride
	var so harness.SessionOptions
	turn, ask := &so.TurnTimeout, &so.AskDeadline
	for _, d := range []struct {
		name string
		v    string
		dst  **time.Duration
	}{{"idle", req.Budgets.Idle, &o.Idle}, {"hard", req.Budgets.Hard, &o.Hard}, {"tool", req.Budgets.Tool, &o.Tool},
		{"linger", req.Budgets.Linger, &o.Linger}, {"kill_grace", req.Budgets.KillGrace, &o.KillGrace},
		{"turn", req.Budgets.Turn, &turn}, {"ask", req.Budgets.Ask, &ask}} {
		if d.v == "" {
			continue
		}
		v, err := time.ParseDuration(d.v)
		if err != nil || (v < 0 && (d.name == "turn" || d.name == "ask")) {
			return harness.Task{}, nil, fmt.Errorf("budgets.%s %q is not a duration ≥ 0", d.name, d.v)
		}
		if d.name == "turn" || d.name == "ask" {
			**d.dst = v
			continue
		}
		*d.dst = &v
	}
	var be *harness.BudgetError
	if errors.As(o.Validate(), &be) {
		return harness.Task{}, nil, errors.New(be.Named("budgets." + be.Budget))
	}
	conf := l.Settings.Budgets()
	// A shutdown waits a run's kill grace (Close): a client may shorten
	// the configured one, not lengthen it, as an MCP client gets it.
	if g := o.KillGrace; g != nil && *g > conf.KillGrace {
		return harness.Task{}, nil, fmt.Errorf("budgets.kill_grace %s: at most the server's kill grace, %s", *g, conf.KillGrace)
	}
	b := o.Apply(conf)
	t := harness.Task{
		Agent: req.Agent, Prompt: req.Prompt, Model: req.Model, Cwd: req.Cwd, Permissions: req.Permissions,
		Budgets: &b, Run: event.NewRunID(),
	}
	if a, err := harness.Adapter(req.Agent); err == nil {
		t.Agent = a.Name()
	}
	if !req.Session {
		// The configuration's protocol, set here: AttachMock gives the
		// mock's model by it (none to an agent that takes none over ACP).
		t.Protocol = l.Settings.RunProtocol(t.Agent)
		return t, nil, nil
	}
	t.Protocol = l.Settings.SessionProtocol(t.Agent) // set here: AttachMock wires the protocol's mock
	return t, &so, nil
}

var (
	errBadMock = errors.New("serve: bad mock scenario")
	errClosing = errors.New("serve: shutting down")
)

// launch opens the session log, starts the run (a live session when so
// is set) and watches it to its end in the background. It returns the
// run id once the run started. ctx carries the caller's trace parent.
func (s *Server) launch(ctx context.Context, t harness.Task, mock string, so *harness.SessionOptions) (string, error) {
	var stopMock func()
	if mock != "" {
		if s.cfg.Launcher.AttachMock == nil {
			return "", fmt.Errorf("%w: this server runs no scripted model", errBadMock)
		}
		// A task the library refuses (a cwd that is no directory) is
		// refused in its words, as without a mock, not the mock's.
		if _, err := s.cfg.Launcher.Settings.Prepare(t); err != nil {
			return "", err
		}
		stop, err := s.cfg.Launcher.AttachMock(&t, mock)
		if err != nil {
			return "", fmt.Errorf("%w: %v", errBadMock, err)
		}
		stopMock = stop
	}
	lr := newLiveRun(nil)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		if stopMock != nil {
			stopMock()
		}
		return "", errClosing
	}
	s.live[t.Run] = lr
	s.wg.Add(1)
	s.mu.Unlock()
	var run waiter
	var err error
	if so != nil {
		run, err = s.startSession(ctx, t, *so, lr)
	} else {
		var r *harness.Run
		r, err = startLogged(ctx, s.cfg.Launcher.Settings, t, lr.observer())
		if err == nil {
			lr.setRun(r)
			run = r
		}
	}
	if err != nil {
		s.mu.Lock()
		delete(s.live, t.Run)
		s.mu.Unlock()
		s.wg.Done()
		if stopMock != nil {
			stopMock()
		}
		return "", err
	}
	go func() {
		defer s.wg.Done()
		// Wait calls the run's last callbacks here, and stopMock is the
		// Launcher's: one that panics takes the program down, but only
		// once every run's processes are ended.
		defer process.ContainPanic()
		_, _ = run.Wait() // the library closed the session log
		if stopMock != nil {
			stopMock()
		}
		lr.finish()
		// A finished run is the log's alone: a long-lived server keeps
		// nothing of it (its streams hold lr until they end).
		s.mu.Lock()
		delete(s.live, t.Run)
		s.mu.Unlock()
	}()
	return t.Run, nil
}

// waiter is what launch watches to its end: a run or a live session.
type waiter interface {
	Wait() (*event.Result, error)
}

// startSession starts a live session through the launcher, with its log
// as a run's. Its context is the session's stop: cancelling it ends the
// whole session as a run's interrupt does (POST …/cancel, shutdown).
func (s *Server) startSession(ctx context.Context, t harness.Task, so harness.SessionOptions, lr *liveRun) (waiter, error) {
	ls := s.cfg.Launcher.Settings
	if ls.LogDir == "" {
		return nil, errors.New("serve: runs need a session log directory")
	}
	start := s.cfg.Launcher.StartSession
	if start == nil {
		start = func(ctx context.Context, t harness.Task, o harness.SessionOptions) (Session, error) {
			sess, err := ls.StartSession(ctx, t, o)
			if sess == nil {
				return nil, err // not a nil *harness.Session in the interface
			}
			return sess, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	so.Observers = []harness.Observer{lr.observer()}
	sess, err := start(ctx, t, so)
	if err != nil {
		cancel()
		if sess != nil {
			_, _ = sess.Close() // a first prompt refused: nothing of it left
		}
		return nil, err
	}
	lr.setSession(sess, stopFunc(cancel))
	return endedSession{sess, cancel}, nil
}

// endedSession releases the session's context once it is over.
type endedSession struct {
	Session
	stop context.CancelFunc
}

func (e endedSession) Wait() (*event.Result, error) {
	defer e.stop()
	return e.Session.Wait()
}

// stopFunc is a runHandle whose interrupt cancels a context.
type stopFunc context.CancelFunc

func (f stopFunc) Interrupt() { f() }

// startLogged is the one place the server starts a run: through the
// library, as `harness run` does, with its session log in the server's
// directory; obs is told of each event line after the log.
func startLogged(ctx context.Context, ls *harness.Settings, t harness.Task, obs harness.Observer) (*harness.Run, error) {
	if ls.LogDir == "" {
		return nil, errors.New("serve: runs need a session log directory")
	}
	return ls.Start(ctx, t, harness.Options{
		Observers: []harness.Observer{obs},
	})
}

// cancelRun serves POST /api/runs/{run}/cancel: 202 when the run was
// asked to stop, 409 when it is not one this server is running.
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) error {
	id, err := s.runID(r.PathValue("run"))
	if err != nil {
		return err
	}
	lr := s.liveRun(id)
	if lr == nil || lr.ended() {
		return httpErrorf(http.StatusConflict, "run %s is not running in this server", id)
	}
	lr.interrupt()
	writeJSON(w, http.StatusAccepted, map[string]string{"run": id, "status": "cancelling"})
	return nil
}
