// Package serve is harness's HTTP API and live web view (docs/serve.md):
// the runs of the session store, live and finished, including runs other
// harness processes are writing; each run's unified stream as Server-Sent
// Events or NDJSON, resumable from any seq; starting and cancelling runs;
// and the stored bench reports. The page it serves is embedded (web/) and
// needs no network.
//
// A stream is always read from the session log on disk (logger.Follow):
// the subscribers of one run share one reader of its log, woken by the
// run's own writes when this process runs it and by inotify otherwise, and
// a subscriber replaying the past or fallen behind reads the disk on its
// own until it catches up. A run writes its log and wakes the reader, and
// never waits for any subscriber, so a slow client cannot slow a run or
// the other clients.
package serve

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/httpauth"
	"github.com/agentharness/harness/logger"
)

// Config is what a Server serves from.
type Config struct {
	// Dir is the session store ($XDG_DATA_HOME/harness/sessions).
	Dir string
	// Bench is where the bench reports are read from; nil serves none.
	Bench *bench.Store
	// Token, when set, is the bearer token of the mutating endpoints, and
	// of every endpoint when Open is false. With no token, runs cannot be
	// started or cancelled through the API.
	Token string
	// Open lets reads through without the token (a loopback listener)
	// to the processes of the server's own uid (ownPeer).
	Open bool
	// Launcher starts the runs of POST /api/runs.
	Launcher Launcher
	// MaxLag and SlowAfter define a slow subscriber: one more than MaxLag
	// events behind a live run (default 4096) when it last caught up with
	// the log more than SlowAfter ago (default 10 s). It is dropped with a
	// reconnect event; a burst that a reader soon catches up with is not
	// slowness.
	MaxLag    int64
	SlowAfter time.Duration
	// WriteTimeout bounds one write to a client (default 30 s): a client
	// that takes no bytes for that long is disconnected.
	WriteTimeout time.Duration
	// Poll bounds how long a stream of another process's run waits when no
	// inotify notification comes (none available, its limits reached, a
	// network file system): the log is read at least that often (default
	// 100 ms; logger.FollowOptions.Poll).
	Poll time.Duration
	// KillAfter is how long Close waits for the runs it interrupted before
	// it kills them at once (Kill): by default twice the configured kill
	// grace plus 5 s, more than an interrupt takes (SIGKILL at the grace,
	// then at most a grace for the pipes), as a client's kill_grace is at
	// most the configured one.
	KillAfter time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Server serves the API and the page. Its methods are safe for concurrent
// use.
type Server struct {
	cfg     Config
	mux     *http.ServeMux
	summary summaries
	index   *logger.Index // the run list, read again only where it changed
	benches *bench.Lister // the bench reports, likewise; nil: none

	mu     sync.Mutex
	live   map[string]*liveRun
	closed bool
	// quit is cancelled with closed: the streams of no live run end.
	quit    context.Context
	endQuit context.CancelFunc
	wg      sync.WaitGroup
}

// New returns a Server for cfg.
func New(cfg Config) *Server {
	if cfg.MaxLag <= 0 {
		cfg.MaxLag = 4096
	}
	if cfg.SlowAfter <= 0 {
		cfg.SlowAfter = 10 * time.Second
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 30 * time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 100 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.KillAfter <= 0 {
		var grace time.Duration
		if cfg.Launcher.Settings != nil {
			grace = cfg.Launcher.Settings.Budgets().KillGrace
		}
		cfg.KillAfter = 2*grace + 5*time.Second
	}
	s := &Server{cfg: cfg, live: map[string]*liveRun{}}
	s.quit, s.endQuit = context.WithCancel(context.Background())
	if cfg.Bench != nil {
		s.benches = &bench.Lister{Store: *cfg.Bench}
	}
	s.summary.dir = cfg.Dir
	s.index = logger.NewIndex(cfg.Dir)
	m := http.NewServeMux()
	m.HandleFunc("GET /api/runs", s.read(handle(s.listRuns)))
	m.HandleFunc("GET /api/runs/{run}", s.read(handle(s.getRun)))
	m.HandleFunc("GET /api/runs/{run}/events", s.read(s.events))
	m.HandleFunc("GET /api/runs/{run}/native", s.read(s.native))
	m.HandleFunc("POST /api/runs", s.write(handle(s.startRun)))
	m.HandleFunc("POST /api/runs/{run}/cancel", s.write(handle(s.cancelRun)))
	m.HandleFunc("POST /api/runs/{run}/messages", s.write(handle(s.sendMessage)))
	m.HandleFunc("POST /api/runs/{run}/interrupt", s.write(handle(s.interruptTurn)))
	m.HandleFunc("POST /api/runs/{run}/permissions/{call}", s.write(handle(s.answerPermission)))
	m.HandleFunc("POST /api/runs/{run}/end", s.write(handle(s.endSession)))
	m.HandleFunc("GET /api/bench", s.read(handle(s.listBench)))
	m.HandleFunc("GET /api/bench/{id}", s.read(handle(s.getBench)))
	noEndpoint := handle(func(w http.ResponseWriter, r *http.Request) error {
		return httpErrorf(http.StatusNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path)
	})
	m.HandleFunc("/api/", noEndpoint)
	// Else ServeMux redirects /api to /api/, in HTML, to a 404 anyway.
	m.HandleFunc("/api", noEndpoint)
	s.routePage(m)
	s.mux = m
	return s
}

// ServeHTTP serves the API and the page. A path that is not canonical
// (an empty, "." or ".." element: /api/runs//native) is no endpoint, page
// nor asset: a JSON 404, where ServeMux would answer an HTML redirect to
// the path cleaned, which names something else (run "native"), and by
// 307 would have a client send a POST, with its token, there again.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.EscapedPath(); p != canonicalPath(p) {
		jsonError(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// canonicalPath is p as ServeMux cleans it before it matches a pattern:
// rooted, no empty, "." or ".." element, a trailing slash kept.
func canonicalPath(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// Close interrupts the runs the server started and waits for them to end
// (their logs closed); those still running Config.KillAfter later are
// killed at once (Kill), so that Close is bounded whatever a run does.
// The streams of those runs go on to their results and end as usual (an
// HTTP server's shutdown run alongside waits for them: their clients get
// how their runs ended). The other streams (runs of other processes,
// finished ones) end at once with a reconnect of reason "shutdown", as
// does, once Close was called, a stream whose request context ends (the
// HTTP server's shutdown giving up on it).
func (s *Server) Close() error {
	s.mu.Lock()
	s.shut()
	for _, lr := range s.live {
		if !lr.ended() {
			lr.interrupt()
		}
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(s.cfg.KillAfter)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		s.Kill()
		<-done
	}
	return nil
}

// Kill ends the runs the server started at once: SIGKILL to each one's
// process group, with no grace (a second Ctrl-C to harness run), also to
// one still starting as soon as it has. No run starts after it. It does
// not wait: Close does.
func (s *Server) Kill() {
	s.mu.Lock()
	s.shut()
	runs := make([]*liveRun, 0, len(s.live))
	for _, lr := range s.live {
		runs = append(runs, lr)
	}
	s.mu.Unlock()
	for _, lr := range runs {
		if !lr.ended() {
			lr.kill()
		}
	}
}

// shut marks the server closed and ends the streams of no live run. s.mu
// is held.
func (s *Server) shut() {
	if !s.closed {
		s.closed = true
		s.endQuit()
	}
}

// closing reports whether Close or Kill was called.
func (s *Server) closing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// IsLoopback reports whether a listen address (host:port) only accepts
// connections from this machine.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// read guards an endpoint that only reads: open on a loopback listener
// (for a Host naming this machine, so a page of another site cannot reach
// it by rebinding its name to 127.0.0.1) to a peer of the server's own
// uid (ownPeer: the store is private to it), else the token.
func (s *Server) read(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Open && localHost(r.Host) && ownPeer(r) {
			h(w, r)
			return
		}
		s.write(h)(w, r)
	}
}

// write guards a mutating endpoint: the bearer token, always.
func (s *Server) write(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Token == "" {
			writeError(w, httpErrorf(http.StatusForbidden, "this server has no token: start it with --token-file to allow this"))
			return
		}
		if !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="harness"`)
			writeError(w, httpErrorf(http.StatusUnauthorized, "missing or wrong bearer token"))
			return
		}
		h(w, r)
	}
}

// authorized compares the request's token with ours in constant time. The
// token comes from the Authorization header, or, for EventSource, which
// cannot set headers, from ?token= on reads.
func (s *Server) authorized(r *http.Request) bool {
	got, ok := httpauth.Bearer(r.Header.Get("Authorization"))
	if !ok && r.Method == http.MethodGet {
		got, ok = r.URL.Query().Get("token"), true
	}
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) == 1
}

func localHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// apiError is the body of every error response.
type apiError struct {
	Error string `json:"error"`
}

// handlerFunc is an endpoint that returns its failure instead of writing
// it: handle maps the error to its status, in one place.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts h: an error it returns is answered with its status
// (statusOf) and a one-line JSON body, unless h already wrote a response.
func handle(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			writeError(w, err)
		}
	}
}

// httpError is an error the API answers with its own status.
type httpError struct {
	status int
	err    error
}

func (e *httpError) Error() string { return e.err.Error() }
func (e *httpError) Unwrap() error { return e.err }

// httpErrorf returns an error answered with status and the message.
func httpErrorf(status int, format string, args ...any) error {
	return &httpError{status: status, err: fmt.Errorf(format, args...)}
}

// withStatus makes err answered with status; nil stays nil.
func withStatus(status int, err error) error {
	if err == nil {
		return nil
	}
	return &httpError{status: status, err: err}
}

// statusOf is the HTTP status of a handler's error: its own when it has
// one, else the status of the library's errors (a task the library
// refuses is the request's fault), else 500.
func statusOf(err error) int {
	var he *httpError
	var te *harness.TaskError
	switch {
	case errors.As(err, &he):
		return he.status
	case errors.As(err, &te), errors.Is(err, errBadMock), errors.Is(err, logger.ErrAmbiguous):
		return http.StatusBadRequest
	case errors.Is(err, harness.ErrSessionOver):
		return http.StatusConflict
	case errors.Is(err, harness.ErrQueueFull):
		return http.StatusTooManyRequests // the session goes on: send it again after a turn_end
	case errors.Is(err, errClosing):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// writeError answers err with its status and its message.
func writeError(w http.ResponseWriter, err error) {
	jsonError(w, statusOf(err), err.Error())
}

func jsonError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, apiError{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// runID maps a run path value to a stored run id: an id, a unique
// prefix, or "latest" (the newest run).
func (s *Server) runID(name string) (string, error) {
	if name == "latest" {
		metas, err := s.index.List()
		if err == nil && len(metas) > 0 {
			return metas[0].Run, nil
		}
		return "", httpErrorf(http.StatusNotFound, "no runs yet")
	}
	id, err := logger.Resolve(s.cfg.Dir, name)
	if errors.Is(err, logger.ErrNotFound) {
		return "", httpErrorf(http.StatusNotFound, "no such run: %s", name)
	}
	return id, err
}

// resolve is runID for the handlers that write their own responses (the
// streams): it writes the error response and returns "" when there is no
// such run.
func (s *Server) resolve(w http.ResponseWriter, name string) string {
	id, err := s.runID(name)
	if err != nil {
		writeError(w, err)
		return ""
	}
	return id
}

// liveRun is a run this server started and its session log's writer.
type liveRun struct {
	mu   sync.Mutex
	run  runHandle     // nil until the run started
	sess Session       // a live session's, nil for a run
	stop bool          // interrupted: a run interrupted before it started is stopped once it has
	dead bool          // killed: so is one killed, at once
	head int64         // seq of the last line the run emitted
	news bool          // lines emitted since the readers were last woken
	wake chan struct{} // closed and replaced when the log gained lines
	done bool
}

// runHandle is what the server needs of a started run.
type runHandle interface {
	Interrupt()
}

func newLiveRun(r runHandle) *liveRun { return &liveRun{run: r, wake: make(chan struct{})} }

func (l *liveRun) setRun(r runHandle) { l.set(nil, r) }

func (l *liveRun) setSession(sess Session, stop runHandle) { l.set(sess, stop) }

// set gives the run its handle once it started, and stops it at once if
// it was interrupted meanwhile: launch registers a run before its start
// returns, and a cancel or the server's Close in that window has only
// this to act on.
func (l *liveRun) set(sess Session, r runHandle) {
	l.mu.Lock()
	l.sess, l.run = sess, r
	stop, kill := l.stop, l.dead
	l.mu.Unlock()
	switch {
	case kill:
		killRun(r, sess)
	case stop:
		r.Interrupt()
	}
}

// kill ends the run at once, now or as soon as it has started (set).
func (l *liveRun) kill() {
	l.mu.Lock()
	r, sess := l.run, l.sess
	l.stop, l.dead = true, true
	l.mu.Unlock()
	if r != nil {
		killRun(r, sess)
	}
}

// killRun SIGKILLs a run's group through the library, which kills at
// the second interrupt within 2 s: Run.Interrupt twice, or for a live
// session (r cancels its context) harness.Session.Stop twice.
func killRun(r runHandle, sess Session) {
	r.Interrupt()
	if st, ok := sess.(interface{ Stop() }); ok {
		st.Stop()
		st.Stop()
		return
	}
	r.Interrupt()
}

func (l *liveRun) session() Session {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return nil
	}
	return l.sess
}

// interrupt stops the run, now or, when it has not started yet, as soon
// as it has (set).
func (l *liveRun) interrupt() {
	l.mu.Lock()
	r := l.run
	l.stop = true
	l.mu.Unlock()
	if r != nil {
		r.Interrupt()
	}
}

// observer is the run's observer that keeps the stream's readers told:
// it notes each line the run emits, and wakes the readers at the run's
// flush, after the session log's (the library calls the log's observer
// first): the library buffers the log until then, so a reader woken at
// the line itself would find nothing new and sleep until its poll.
func (l *liveRun) observer() harness.Observer {
	return harness.Observer{OnLine: l.emitted, Flush: l.flushed}
}

// emitted notes a line the run emitted. It never blocks.
func (l *liveRun) emitted(line []byte) {
	seq, _ := logger.LineSeq(line)
	l.mu.Lock()
	l.head = max(l.head, seq)
	l.news = true
	l.mu.Unlock()
}

// flushed wakes the readers when lines came since they were last woken:
// the log file has them now. It never blocks.
func (l *liveRun) flushed() {
	l.mu.Lock()
	if l.news {
		l.news = false
		close(l.wake)
		l.wake = make(chan struct{})
	}
	l.mu.Unlock()
}

func (l *liveRun) waitChan() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.wake
}

func (l *liveRun) headSeq() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.head
}

func (l *liveRun) finish() {
	l.mu.Lock()
	l.done = true
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
}

func (l *liveRun) ended() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.done
}

func (s *Server) liveRun(id string) *liveRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[id]
}
