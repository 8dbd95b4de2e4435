// Package mcpserver serves harness over the Model Context Protocol, so an
// MCP client — typically another coding agent — can delegate a task to any
// supported agent and run it under harness's supervision, instead of waiting
// blindly on a CLI that may hang.
//
// The server offers five tools: run_agent, run_status, run_events,
// cancel_run and list_agents. While run_agent waits for a run and the client
// sent a progress token, it sends notifications/progress at a steady
// interval naming what the agent is doing; it forwards the supervisor's idle
// warning (before the idle watchdog fires) as a log notification at level
// warning, and a fatal error at level error. A run that did not succeed ends
// with an isError tool result carrying a structured error.
//
// Runs belong to the MCP session that started them: when the session ends
// (the client disconnects, or the transport is closed) its runs are
// interrupted and waited for, so no agent process outlives it. A long
// session keeps bounded memory: of its finished runs it remembers the
// newest MaxFinishedRuns, and their events up to MaxSessionEventBytes.
// Over stdio the end of stdin is the client's going away (and ctx's end,
// the server's being told to stop, is the same): the runs are interrupted
// at once, the calls in flight are answered (a waiting run_agent with its
// interrupted run's result), and a write to a client that no longer reads
// stdout either is given up after 5 s, so that ServeStdio returns. Over
// HTTP a call whose POST the client closed is cancelled, as a
// notifications/cancelled would: run_agent interrupts its run. A request may be as long over HTTP
// as over stdio (a prompt of MaxPromptBytes escaped byte by byte). A
// request whose handler panics is answered with an internal error, and
// the server goes on. The
// package is built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk) and never prints.
package mcpserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/httpauth"
	"github.com/agentharness/harness/internal/httplimit"
)

// Limits bound the budgets an MCP client may ask for; requests outside are
// clamped. A zero field takes DefaultLimits' value.
type Limits struct {
	IdleMin, IdleMax time.Duration
	HardMin, HardMax time.Duration
}

// DefaultLimits are the bounds of the issue: idle 1–30 min, hard 5–60 min.
func DefaultLimits() Limits {
	return Limits{IdleMin: time.Minute, IdleMax: 30 * time.Minute, HardMin: 5 * time.Minute, HardMax: 60 * time.Minute}
}

// Options configure a Server. The zero value serves with the defaults.
type Options struct {
	// Settings start every run (harness.Settings.Start): what the client
	// leaves unset comes from the configuration, as for 'harness run', and
	// each run gets its session log there. nil is the zero Settings.
	Settings *harness.Settings
	// Setup, when set, is called once per run before it starts, with the
	// task as the client gave it (agent canonical, cwd resolved, run id
	// and budgets set): it may change it (the CLI points it at the mock
	// model) and returns an observer of the run. An error refuses the run
	// (run_agent answers it as a tool error; list_agents shows it as the
	// agent's line): the CLI's mock cannot point every agent. A panic of
	// the observer's Close, or of its callbacks at the run's end, on the
	// server's goroutine that waits for the run, takes the program down
	// as one of the library's own goroutines does: every run of it is
	// ended first (process.ContainPanic).
	Setup func(t *harness.Task) (harness.Observer, error)
	// Limits bound the idle and hard budgets; zero fields take the defaults.
	Limits Limits
	// Roots are the directories run_agent's cwd must lie in, symlinks
	// resolved; a relative cwd is taken from the first, and so is an
	// omitted one. Empty: the server's working directory when New is
	// called.
	Roots []string
	// ProgressInterval is the period of progress notifications (default 5 s).
	ProgressInterval time.Duration
	// LogInterval is the least time between two warning-level log
	// notifications of one run with the same code (default 10 s);
	// error-level ones always go.
	LogInterval time.Duration
	// MaxEvents bounds the events a run keeps for run_events when it has
	// no session log (default 10000, and at most 32 MiB of them); older
	// events are dropped. A run with a session log keeps none in memory:
	// run_events reads the log. Once over, runs are bounded per session
	// (MaxSessionEventBytes, MaxFinishedRuns).
	MaxEvents int
	// HTTP bounds the clients of ServeHTTP: header, request and idle
	// timeouts and the connections open at once (zero fields: the
	// defaults of httplimit.Defaults).
	HTTP httplimit.Limits
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Version is the server version announced to clients.
	Version string
	// Logger receives the SDK's diagnostics; nil discards them.
	Logger *slog.Logger
}

// Server is an MCP server that runs agents. It may serve several sessions
// at once; its methods are safe for concurrent use.
type Server struct {
	o     Options
	mcp   *mcp.Server
	roots []string // Options.Roots, absolute with symlinks resolved
	// rootErr is why a root could not be resolved: every run is refused.
	rootErr error

	// writeGrace bounds a write to ServeStdio's output blocked once the
	// client has gone (syncio.GraceWriter).
	writeGrace time.Duration
	// holdMax bounds the hold of the end of ServeStdio's input (input).
	holdMax time.Duration
	// maxBody is the largest request body Handler takes.
	maxBody int64
	// posts are the HTTP POSTs being served (postHeader).
	posts posts
	// sessionEventBytes and maxFinished bound what a session keeps of
	// its finished runs (MaxSessionEventBytes, MaxFinishedRuns).
	sessionEventBytes, maxFinished int

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*session
	closed   bool
}

// session is the state of one MCP session: the runs it started.
type session struct {
	runs map[string]*run
	// finished are the runs that are over, oldest first, and
	// keptBytes the bytes of events they keep (retire).
	finished  []*run
	keptBytes int
	closed    bool
	wg        sync.WaitGroup // one per run still going
}

// New returns a Server with its tools registered.
func New(o Options) *Server {
	d := DefaultLimits()
	l := &o.Limits
	l.IdleMin, l.IdleMax = orDur(l.IdleMin, d.IdleMin), orDur(l.IdleMax, d.IdleMax)
	l.HardMin, l.HardMax = orDur(l.HardMin, d.HardMin), orDur(l.HardMax, d.HardMax)
	l.IdleMax, l.HardMax = max(l.IdleMax, l.IdleMin), max(l.HardMax, l.HardMin)
	o.ProgressInterval = orDur(o.ProgressInterval, 5*time.Second)
	o.LogInterval = orDur(o.LogInterval, 10*time.Second)
	if o.MaxEvents <= 0 {
		o.MaxEvents = defaultMaxEvents
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{o: o, sessions: map[*mcp.ServerSession]*session{}, writeGrace: writeGrace, holdMax: holdMax, maxBody: maxLine,
		sessionEventBytes: MaxSessionEventBytes, maxFinished: MaxFinishedRuns}
	s.roots, s.rootErr = resolveRoots(o.Roots)
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "harness", Title: "harness: run coding agents under supervision", Version: o.Version},
		&mcp.ServerOptions{Logger: o.Logger, Instructions: fmt.Sprintf(instructions, agentList())})
	s.mcp.AddReceivingMiddleware(s.middleware)
	s.addTools()
	return s
}

// instructions are the server's instructions to clients; %s is the agents.
const instructions = "harness runs coding-agent CLIs (%s) headless and supervised. " +
	"Use run_agent to delegate a task to another agent; it blocks until the run ends (wait=turn) and reports progress, " +
	"or returns a run id at once (wait=none) for run_status, run_events and cancel_run. A run that hangs is stopped " +
	"by harness's idle and wall-clock watchdogs and reported as a structured error."

func orDur(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Run serves one session over t until the client goes away or ctx is done,
// then ends the session's runs and waits for them.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.serve(ctx, t, nil, nil, nil)
}

// serve is Run. A close of gone (the transport's input ended: the client
// has gone) interrupts the session's runs at once: the SDK ends the
// session only once every call in flight has returned, and a call's
// answer may wait as long as the client reads nothing. stop, when set,
// is called first when gone is closed or ctx is done. settle, when set,
// returns once the calls in flight are answered, or their answers cannot
// be written; it must return in bounded time. When ctx is done, the
// session's runs are interrupted and settle is waited for before the
// session is closed: the SDK writes no answer once it is closing, and
// a waiting run_agent's answer (its interrupted run's result) was lost.
func (s *Server) serve(ctx context.Context, t mcp.Transport, gone <-chan struct{}, stop, settle func()) error {
	ss, err := s.mcp.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	s.track(ss)
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	stopping := func() {
		if stop != nil {
			stop()
		}
		s.endSession(ss, false) // interrupt first: Close waits for run_agent calls in flight
	}
	for over := false; !over; {
		select {
		case err = <-ended:
			over = true
		case <-gone:
			gone = nil
			stopping()
		case <-ctx.Done():
			stopping()
			if settle != nil {
				settle()
			}
			ss.Close()
			<-ended
			err, over = ctx.Err(), true
		}
	}
	s.endSession(ss, true)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return err
}

// Close ends every session's runs and waits for them. Sessions stay
// connected, but run_agent refuses new runs.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	all := make([]*mcp.ServerSession, 0, len(s.sessions))
	for ss := range s.sessions {
		all = append(all, ss)
	}
	s.mu.Unlock()
	for _, ss := range all {
		s.endSession(ss, true)
	}
}

// middleware notes every session the first time it is seen, and gives a
// session that has just initialized the log level "warning", so the idle
// warnings reach clients that never call logging/setLevel (the spec lets
// the server choose then). A client's own setLevel overrides it. A
// request that came in an HTTP POST is cancelled when the POST is over
// (callContext). A request the SDK would serve wrongly is answered here
// (refuse), and an error without a JSON-RPC code gets one (withCode).
func (s *Server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ss != nil {
			s.track(ss)
		}
		if res, err := refuse(method, req); res != nil || err != nil {
			return res, err
		}
		ctx, done := s.callContext(ctx, method, req)
		defer done()
		res, err := s.contained(ctx, method, req, next)
		if method == "initialize" && err == nil && ss != nil {
			_, _ = next(ctx, "logging/setLevel", &mcp.ServerRequest[*mcp.SetLoggingLevelParams]{
				Session: ss, Params: &mcp.SetLoggingLevelParams{Level: "warning"}})
		}
		return res, withCode(err)
	}
}

// contained is next, whose panic answers the request with an internal
// error: the SDK runs handlers on goroutines of its own, where a panic
// (of harness's code, or of Options.Setup) ended the server, and every
// session's runs without their end, so what an agent started lived on.
// The server and its runs go on; the trace goes to Options.Logger.
func (s *Server) contained(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (res mcp.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			s.o.Logger.Error("harness mcp: a handler panicked", "method", method, "panic", v, "stack", string(debug.Stack()))
			res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("internal error: %s panicked: %v", method, v)}
		}
	}()
	return next(ctx, method, req)
}

// track registers a session; when it ends, its runs are ended.
func (s *Server) track(ss *mcp.ServerSession) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if se, ok := s.sessions[ss]; ok {
		return se
	}
	se := &session{runs: map[string]*run{}}
	s.sessions[ss] = se
	go func() {
		_ = ss.Wait()
		s.endSession(ss, true)
	}()
	return se
}

// endSession interrupts the session's runs and, with wait, waits for them
// and forgets the session.
func (s *Server) endSession(ss *mcp.ServerSession, wait bool) {
	s.mu.Lock()
	se := s.sessions[ss]
	if se == nil {
		s.mu.Unlock()
		return
	}
	se.closed = true
	runs := make([]*run, 0, len(se.runs))
	for _, r := range se.runs {
		runs = append(runs, r)
	}
	s.mu.Unlock()
	for _, r := range runs {
		r.cancel()
	}
	if !wait {
		return
	}
	se.wg.Wait()
	s.mu.Lock()
	delete(s.sessions, ss)
	s.mu.Unlock()
}

// lookup finds a run of the calling session.
func (s *Server) lookup(ss *mcp.ServerSession, id string) (*run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if se := s.sessions[ss]; se != nil {
		if r := se.runs[id]; r != nil {
			return r, nil
		}
	}
	return nil, fmt.Errorf("unknown run_id %q: no run of this session has that id (a session remembers its runs until it ends, but at most its %d most recent finished ones)", id, s.maxFinished)
}

// MinTokenLen is the least length in bytes of a bearer token: a shorter
// one could be guessed by a local process that tries tokens.
const MinTokenLen = 16

// CheckToken returns an error unless token is long enough to serve with
// and can be sent as "Authorization: Bearer <token>": one line of visible
// ASCII. No header carries a control byte (a newline), and a space or a
// non-ASCII byte is no bearer token (RFC 6750): such a token would refuse
// its clients. The error never quotes the token, a secret.
func CheckToken(token string) error {
	if token == "" {
		return errors.New("the HTTP transport needs a bearer token")
	}
	if len(token) < MinTokenLen {
		return fmt.Errorf("the bearer token is %d bytes: it must be at least %d (for example: head -c 32 /dev/urandom | base64)", len(token), MinTokenLen)
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("the bearer token has byte 0x%02x at offset %d: a token is one line of visible ASCII, no space nor control byte, or no client can send it", c, i)
		}
	}
	return nil
}

// Handler returns an http.Handler serving the streamable HTTP transport,
// which answers 401 unless the request carries "Authorization: Bearer
// <token>" (compared in constant time); a token that CheckToken refuses
// (empty, short, or with a byte no header carries) refuses everyone.
//
// A request body may be as long as a line of ServeStdio (maxLine: a
// prompt of MaxPromptBytes escaped byte by byte), so a prompt within
// MaxPromptBytes runs over both transports; a longer body is answered
// 413 (servePOST). A call whose POST is over before it is answered (the
// client closed the connection) is cancelled: run_agent interrupts its
// run.
func (s *Server) Handler(token string) http.Handler {
	// A session nobody talks to for longer than a run may last is
	// abandoned: closing it ends its runs (the SDK pauses the timer while
	// a request, such as a waiting run_agent, is in flight).
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Logger: s.o.Logger, SessionTimeout: s.o.Limits.HardMax + 5*time.Minute,
			MaxRequestBodyBytes: s.maxBody})
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got, ok := httpauth.Bearer(req.Header.Get("Authorization"))
		if CheckToken(token) != nil || !ok || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="harness"`)
			http.Error(w, "harness mcp: missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		switch req.Method {
		case http.MethodPost:
			s.servePOST(h, w, req)
			return
		case http.MethodDelete:
			// The session's end: its runs are interrupted first. The
			// SDK's close waits for the calls in flight, a run_agent
			// waiting on its run among them, and the runs were only
			// ended once the close was over: a DELETE waited for them
			// to reach their own budgets, up to an hour.
			s.endSessionID(req.Header.Get("Mcp-Session-Id"))
		}
		h.ServeHTTP(w, req)
	})
}

// endSessionID interrupts the runs of the session of that id, if any.
func (s *Server) endSessionID(id string) {
	if id == "" {
		return
	}
	s.mu.Lock()
	var found *mcp.ServerSession
	for ss := range s.sessions {
		if ss.ID() == id {
			found = ss
		}
	}
	s.mu.Unlock()
	if found != nil {
		s.endSession(found, false)
	}
}

// CheckLoopback returns an error unless addr (host:port) is a loopback
// address: the HTTP transport runs agents with shell access and must not be
// reachable from the network.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %v", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("listen address %q: only a loopback address (127.0.0.1, [::1], localhost) is allowed", addr)
	}
	return nil
}

// ServeHTTP serves the streamable HTTP transport on ln until ctx is done,
// then ends every run. ln must be a loopback listener, and token pass
// CheckToken.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, token string) error {
	if err := CheckToken(token); err != nil {
		return fmt.Errorf("harness mcp: %w", err)
	}
	if err := CheckLoopback(ln.Addr().String()); err != nil {
		return err
	}
	srv := httplimit.Server(s.Handler(token), s.o.HTTP)
	ln = httplimit.Listener(ln, s.o.HTTP.MaxConns)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		s.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = srv.Shutdown(sctx)
		cancel()
		err = nil
	}
	s.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
