package serve

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/process"
)

// The endpoints of a live session (docs/serve.md): a session is one run,
// its stream the run's; these send it commands as `harness session`'s
// stdin does.

// liveSession is the session of the request's run: 404 for an unknown
// run, 503 once the server is shutting down, 409 for a run that is no
// live session of this server (a run, an ended session, another
// process's).
func (s *Server) liveSession(r *http.Request) (string, Session, error) {
	id, err := s.runID(r.PathValue("run"))
	if err != nil {
		return "", nil, err
	}
	if s.closing() {
		// Its sessions are being ended, or are: 503, as docs/serve.md
		// says of a server shutting down, not a run "not live".
		return "", nil, errClosing
	}
	if lr := s.liveRun(id); lr != nil {
		if sess := lr.session(); sess != nil {
			return id, sess, nil
		}
	}
	return "", nil, fmt.Errorf("%w: run %s is not a live session of this server", harness.ErrSessionOver, id)
}

// command is the session of the request's run and, when body is not
// nil, the command's JSON body read into it: 400 when it is not one.
func (s *Server) command(w http.ResponseWriter, r *http.Request, body any) (string, Session, error) {
	id, sess, err := s.liveSession(r)
	if err != nil || body == nil {
		return id, sess, err
	}
	if err := decodeBody(w, r, body); err != nil {
		return "", nil, httpErrorf(http.StatusBadRequest, "bad request body: %w", err)
	}
	return id, sess, nil
}

// sendMessage serves POST /api/runs/{run}/messages {"text": …}: 202 once
// the prompt is sent or queued behind the turn in progress.
func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Text string `json:"text"`
	}
	id, sess, err := s.command(w, r, &body)
	if err != nil {
		return err
	}
	if strings.TrimSpace(body.Text) == "" { // blank: no more a prompt than "" is, as for harness session
		return httpErrorf(http.StatusBadRequest, "a message needs its text")
	}
	if err := sess.Send(body.Text); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"run": id, "status": "sent"})
	return nil
}

// interruptTurn serves POST /api/runs/{run}/interrupt: the turn in
// progress ends cancelled and the session goes on.
func (s *Server) interruptTurn(w http.ResponseWriter, r *http.Request) error {
	id, sess, err := s.liveSession(r)
	if err != nil {
		return err
	}
	sess.Interrupt()
	writeJSON(w, http.StatusAccepted, map[string]string{"run": id, "status": "interrupting"})
	return nil
}

// answerPermission serves POST /api/runs/{run}/permissions/{call}
// {"allow": bool}: 404 when no request of that call id is waiting.
func (s *Server) answerPermission(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Allow *bool `json:"allow"`
	}
	id, sess, err := s.command(w, r, &body)
	if err != nil {
		return err
	}
	if body.Allow == nil {
		return httpErrorf(http.StatusBadRequest, "an answer needs allow (true or false)")
	}
	call := r.PathValue("call")
	if !sess.Answer(call, *body.Allow) {
		return httpErrorf(http.StatusNotFound, "no permission request %q is waiting", call)
	}
	writeJSON(w, http.StatusOK, map[string]any{"run": id, "call_id": call, "allow": *body.Allow})
	return nil
}

// endSession serves POST /api/runs/{run}/end: the session ends once the
// turns sent are answered (its result follows in the stream).
func (s *Server) endSession(w http.ResponseWriter, r *http.Request) error {
	id, sess, err := s.liveSession(r)
	if err != nil {
		return err
	}
	go func() {
		defer process.ContainPanic() // the session's end runs its callbacks here
		_, _ = sess.Close()          // launch's watcher sees the end
	}()
	writeJSON(w, http.StatusAccepted, map[string]string{"run": id, "status": "ending"})
	return nil
}
