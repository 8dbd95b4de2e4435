package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/logger"
)

// Launcher holds what the runs started through the API share with
// `harness run`: where the pinned agents are, the environment they start
// from, prices and default budgets.
type Launcher struct {
	SearchDirs   []string
	BaseEnv      []string // nil: os.Environ()
	EstimateCost func(model string, u event.Usage) (float64, bool)
	Budgets      harness.Budgets
	Version      string
	// Adjust, when set, changes each task before it starts (tests point
	// runs at fake agents with it).
	Adjust func(*harness.Task)
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
	Budgets     struct {
		Idle      string `json:"idle,omitempty"`
		Hard      string `json:"hard,omitempty"`
		Tool      string `json:"tool,omitempty"`
		Linger    string `json:"linger,omitempty"`
		KillGrace string `json:"kill_grace,omitempty"`
	} `json:"budgets"`
}

// maxRequest caps the body of POST /api/runs (the prompt with it).
const maxRequest = 16 << 20

// startRun serves POST /api/runs: 201 with the run's summary and the URL
// of its events.
func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	var req RunRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		jsonError(w, http.StatusBadRequest, "bad run request: "+err.Error())
		return
	}
	task, err := s.cfg.Launcher.task(req)
	if err != nil {
		jsonError(w, http.StatusBadRequest, err.Error())
		return
	}
	id, err := s.launch(task, req.Mock)
	var te *harness.TaskError
	switch {
	case errors.As(err, &te), errors.Is(err, errBadMock):
		jsonError(w, http.StatusBadRequest, err.Error())
		return
	case errors.Is(err, errClosing):
		jsonError(w, http.StatusServiceUnavailable, err.Error())
		return
	case err != nil:
		jsonError(w, http.StatusInternalServerError, err.Error())
		return
	}
	m, err := logger.Load(s.cfg.Dir, id)
	if err != nil {
		jsonError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Location", "/api/runs/"+id)
	writeJSON(w, http.StatusCreated, s.info(m))
}

// task turns a request into a harness task over the launcher's defaults.
func (l Launcher) task(req RunRequest) (harness.Task, error) {
	if req.Agent == "" {
		return harness.Task{}, errors.New("agent is required (claude, codex, cursor, opencode, gemini)")
	}
	if req.Prompt == "" {
		return harness.Task{}, errors.New("prompt is required")
	}
	b := l.Budgets
	for _, d := range []struct {
		name string
		v    string
		dst  *time.Duration
	}{{"idle", req.Budgets.Idle, &b.Idle}, {"hard", req.Budgets.Hard, &b.Hard},
		{"linger", req.Budgets.Linger, &b.Linger}, {"kill_grace", req.Budgets.KillGrace, &b.KillGrace}} {
		if d.v == "" {
			continue
		}
		v, err := time.ParseDuration(d.v)
		if err != nil || v < 0 {
			return harness.Task{}, fmt.Errorf("budgets.%s %q is not a duration ≥ 0", d.name, d.v)
		}
		*d.dst = v
	}
	if req.Budgets.Tool != "" {
		v, err := time.ParseDuration(req.Budgets.Tool)
		if err != nil || v < 0 {
			return harness.Task{}, fmt.Errorf("budgets.tool %q is not a duration ≥ 0", req.Budgets.Tool)
		}
		b.Tool = func(event.Kind) time.Duration { return v }
	}
	perm := req.Permissions
	if perm == "" {
		perm = adapters.FullAccess
	}
	t := harness.Task{
		Agent:      req.Agent,
		Task:       adapters.Task{Prompt: req.Prompt, Model: req.Model, Cwd: req.Cwd, Permissions: perm},
		SearchDirs: l.SearchDirs,
		BaseEnv:    l.BaseEnv,
		Budgets:    b,
		Run:        event.NewRunID(),
	}
	if a, err := harness.Adapter(req.Agent); err == nil {
		t.Agent = a.Name()
	}
	return t, nil
}

var (
	errBadMock = errors.New("serve: bad mock scenario")
	errClosing = errors.New("serve: shutting down")
)

// launch opens the session log, starts the run and watches it to its end
// in the background. It returns the run id once the run started.
func (s *Server) launch(t harness.Task, mock string) (string, error) {
	// The launcher's settings first: the mock then points the task at
	// itself over them (its env and model win).
	if s.cfg.Launcher.Adjust != nil {
		s.cfg.Launcher.Adjust(&t)
	}
	var stopMock func()
	if mock != "" {
		m, err := harness.StartMock(mock, "")
		if err != nil {
			return "", fmt.Errorf("%w: %v", errBadMock, err)
		}
		if err := m.Point(&t); err != nil {
			m.Close()
			return "", fmt.Errorf("%w: %v", errBadMock, err)
		}
		stopMock = func() { m.Close() }
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
	run, sess, err := startLogged(s.cfg.Dir, t, s.cfg.Launcher, lr.wrote)
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
	lr.setRun(run)
	go func() {
		defer s.wg.Done()
		res, _ := run.Wait()
		sess.Close(closeMeta(res))
		if stopMock != nil {
			stopMock()
		}
		lr.finish()
	}()
	return t.Run, nil
}

// startLogged is the one place the server starts a run through the
// library, as `harness run` does: the session log opened first, every
// event line written to it (and onLine told), the native lines with it.
func startLogged(dir string, t harness.Task, l Launcher, onLine func([]byte)) (*harness.Run, *logger.Session, error) {
	_, cmd, _, err := harness.Prepare(t)
	var te *harness.TaskError
	if errors.As(err, &te) {
		return nil, nil, err
	}
	cwd := t.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	if t.Cwd != "" {
		if st, err := os.Stat(t.Cwd); err != nil || !st.IsDir() {
			return nil, nil, &harness.TaskError{Err: fmt.Errorf("cwd %q is not a directory", t.Cwd)}
		}
	}
	sess, err := logger.Open(dir, t.Run, logger.Meta{
		Run: t.Run, Agent: t.Agent, Model: t.Model, PromptPreview: t.Prompt, Cwd: cwd,
		Argv: cmd.RedactedArgv(), Status: logger.StatusRunning, HarnessVersion: l.Version,
	}, logger.WithRedactor(logger.DefaultRedactor().WithEnv(t.Env)), logger.WithEventHook(onLine))
	if err != nil {
		return nil, nil, err
	}
	run, err := harness.Start(context.Background(), t, harness.Options{
		EstimateCost: l.EstimateCost,
		OnLine:       func(line []byte) { sess.WriteEvent(line) },
		OnNative:     func(stream string, line []byte) { sess.WriteNative(stream, line) },
	})
	if err != nil {
		sess.Close(logger.Meta{Status: event.ResultError})
		return nil, nil, err
	}
	return run, sess, nil
}

// closeMeta is the final meta of a run from its result (as `harness run`
// writes it).
func closeMeta(r *event.Result) logger.Meta {
	if r == nil {
		return logger.Meta{Status: "unknown"}
	}
	u := r.Usage
	return logger.Meta{Status: r.Status, ExitCode: r.ExitCode, Signal: r.Signal, Usage: &u,
		CostUSD: r.CostUSD, CostEstimated: r.CostEstimated, SessionID: r.SessionID}
}

// cancelRun serves POST /api/runs/{run}/cancel: 202 when the run was
// asked to stop, 409 when it is not one this server is running.
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	id := s.resolve(w, r.PathValue("run"))
	if id == "" {
		return
	}
	lr := s.liveRun(id)
	if lr == nil || lr.ended() {
		jsonError(w, http.StatusConflict, "run "+id+" is not running in this server")
		return
	}
	lr.interrupt()
	writeJSON(w, http.StatusAccepted, map[string]string{"run": id, "status": "cancelling"})
}
