// Package mockmodel is a scripted model server for end-to-end tests of real agent CLIs. It serves,
// on 127.0.0.1 only, the streaming APIs the CLIs call (Anthropic Messages for Claude Code, OpenAI
// Responses for Codex, OpenAI Chat Completions for OpenCode, Gemini streamGenerateContent for
// Gemini CLI), byte-compatible with the vendors' SDKs, and answers every model call from a
// Scenario: text, tool calls of the CLI's own tools, HTTP errors, or a stalled stream.
//
// Mock.Point gives a run a throwaway HOME and the env that point one real CLI at a Server
// (through the agent's own wiring, harness.Agent.Mock) without touching the user's configuration.
//
// The package never prints; it logs through a *slog.Logger only when Config.Logger is set.
package mockmodel

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config configures Start. The zero value is usable: the text scenario on 127.0.0.1 with a free
// port.
type Config struct {
	// Scenario plays for model calls; nil means Builtin("text").
	Scenario *Scenario
	// Addr is host:port to listen on; the host must be a loopback address. Empty means
	// 127.0.0.1:0 (a free port).
	Addr string
	// Logger, if set, receives one debug record per request.
	Logger *slog.Logger
}

// API names recorded in Request.API.
const (
	APIAnthropic = "anthropic"
	APIResponses = "responses"
	APIChat      = "chat"
	APIGemini    = "gemini"
	APIOther     = "other" // hello, models, count_tokens
	APIUnhandled = "unhandled"
)

// Request is the record of one request the server received.
type Request struct {
	API    string
	Method string
	Path   string // URL path with the query, e.g. /v1/messages?beta=true
	Model  string
	// Tools are the names of the tools the request offered.
	Tools []string
	// ToolResults counts the tool results in the conversation.
	ToolResults int
	// Turn is the scenario turn answered; -1 for side calls (no tools) and non-model requests.
	Turn   int
	Side   bool
	Stream bool
	// Status is the HTTP status sent.
	Status int
	// Unhandled marks a path the server does not serve (answered 404).
	Unhandled bool
	// Err says why a scripted tool call could not be made (no matching tool); the server then
	// answers with text.
	Err string
}

// Server is a running scripted model server. Its methods are safe for concurrent use.
type Server struct {
	ln      net.Listener
	srv     *http.Server
	log     *slog.Logger
	closing chan struct{}
	served  chan struct{}

	mu       sync.Mutex
	scenario *Scenario
	requests []Request
	closed   bool
	handlers sync.WaitGroup
	// active counts running handlers, so tests can see a hang end on client cancel.
	active atomic.Int32
	ids    int
	// idBase is in each id this server makes, unique to it: a session
	// resumed against another server (run --mock --resume, a new
	// harness) must not get the ids of the calls it already holds, which
	// Claude Code takes for those calls' (the conversation then lacks
	// the new ones).
	idBase string
}

// ErrNotLoopback is returned by Start for an address that is not a loopback address.
var ErrNotLoopback = errors.New("mockmodel: refusing to listen on a non-loopback address")

// Start listens on cfg.Addr and serves until Close.
func Start(cfg Config) (*Server, error) {
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("mockmodel: address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		if strings.EqualFold(host, "localhost") {
			// Agents resolve it to ::1 or 127.0.0.1 as they please, and
			// reach the server only when they pick what it listens on.
			return nil, fmt.Errorf("%w: %q: give 127.0.0.1 or [::1], which agents cannot resolve elsewhere", ErrNotLoopback, addr)
		}
		return nil, fmt.Errorf("%w: %q", ErrNotLoopback, addr)
	}
	sc := cfg.Scenario
	if sc == nil {
		sc, _ = Builtin("text")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("mockmodel: listen: %w", err)
	}
	s := &Server{
		ln:       ln,
		log:      cfg.Logger,
		closing:  make(chan struct{}),
		served:   make(chan struct{}),
		scenario: sc,
		idBase:   newIDBase(),
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln) // returns http.ErrServerClosed on Close
	}()
	return s, nil
}

// URL is the server's base URL, http://127.0.0.1:PORT (no trailing slash).
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server: it ends hanging streams, closes connections and waits for every
// handler to return. It is safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.closing)
	err := s.srv.Close()
	<-s.served
	s.handlers.Wait()
	return err
}

// Requests returns a copy of the requests received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	copy(out, s.requests)
	return out
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
	if s.log != nil {
		s.log.Debug("mockmodel request", "api", r.API, "method", r.Method, "path", r.Path, "model", r.Model,
			"turn", r.Turn, "side", r.Side, "stream", r.Stream, "status", r.Status, "tools", len(r.Tools), "unhandled", r.Unhandled)
	}
}

func (s *Server) nextID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%s%s%06d", prefix, s.idBase, s.ids)
}

// newIDBase returns eight random hex digits, for Server.idBase.
func newIDBase() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

func (s *Server) current() *Scenario {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scenario
}

// maxBody caps request bodies; Claude Code's first request is about 90 KB.
const maxBody = 64 << 20

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "closing", http.StatusServiceUnavailable)
		return
	}
	s.handlers.Add(1)
	s.active.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()
	defer s.active.Add(-1)

	path := r.URL.Path
	full := r.URL.RequestURI()
	post := r.Method == http.MethodPost
	switch {
	case path == "/api/hello" && (r.Method == http.MethodHead || r.Method == http.MethodGet):
		s.record(Request{API: APIOther, Method: r.Method, Path: full, Turn: -1, Status: http.StatusOK})
		w.WriteHeader(http.StatusOK)
	case post && strings.HasSuffix(path, "/messages/count_tokens"):
		s.countTokens(w, r, `{"input_tokens":%d}`)
	case post && strings.HasSuffix(path, "/messages"):
		s.model(w, r, anthropicAPI{})
	case post && strings.HasSuffix(path, "/responses"):
		s.model(w, r, responsesAPI{})
	case post && strings.HasSuffix(path, "/chat/completions"):
		s.model(w, r, chatAPI{})
	case post && strings.Contains(path, "/models/") && strings.HasSuffix(path, ":countTokens"):
		s.countTokens(w, r, `{"totalTokens":%d}`)
	case post && strings.Contains(path, "/models/") &&
		(strings.HasSuffix(path, ":streamGenerateContent") || strings.HasSuffix(path, ":generateContent")):
		s.model(w, r, geminiAPI{})
	case r.Method == http.MethodGet && (strings.HasSuffix(path, "/models") || strings.Contains(path, "/models/")):
		s.models(w, r)
	default:
		s.record(Request{API: APIUnhandled, Method: r.Method, Path: full, Turn: -1, Status: http.StatusNotFound, Unhandled: true})
		http.Error(w, `{"error":{"message":"mockmodel: unhandled path","type":"not_found"}}`, http.StatusNotFound)
	}
}

func (s *Server) countTokens(w http.ResponseWriter, r *http.Request, format string) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	s.record(Request{API: APIOther, Method: r.Method, Path: r.URL.RequestURI(), Model: modelFromPath(r.URL.Path), Turn: -1, Status: http.StatusOK})
	w.Header().Set("Content-Type", "application/json")
	// A rough count (4 bytes a token) is enough: no CLI relies on it for the scenario.
	fmt.Fprintf(w, format, len(body)/4+1)
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	s.record(Request{API: APIOther, Method: r.Method, Path: r.URL.RequestURI(), Turn: -1, Status: http.StatusOK})
	w.Header().Set("Content-Type", "application/json")
	if strings.HasPrefix(r.URL.Path, "/v1beta") {
		if m := modelFromPath(r.URL.Path); m != "" {
			json.NewEncoder(w).Encode(map[string]any{"name": "models/" + m, "displayName": m, "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
				"supportedGenerationMethods": []string{"generateContent", "streamGenerateContent", "countTokens"}})
			return
		}
		io.WriteString(w, `{"models":[{"name":"models/gemini-2.5-flash","displayName":"Gemini 2.5 Flash","supportedGenerationMethods":["generateContent","streamGenerateContent","countTokens"]}]}`)
		return
	}
	io.WriteString(w, `{"object":"list","data":[`+
		`{"id":"claude-sonnet-4-5","type":"model","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z","object":"model","created":1759104000,"owned_by":"mock"},`+
		`{"id":"gpt-5.5","object":"model","created":1759104000,"owned_by":"mock","type":"model","display_name":"gpt-5.5","created_at":"2025-09-29T00:00:00Z"},`+
		`{"id":"mock-model","object":"model","created":1759104000,"owned_by":"mock","type":"model","display_name":"Mock Model","created_at":"2025-09-29T00:00:00Z"}`+
		`],"has_more":false,"first_id":"claude-sonnet-4-5","last_id":"mock-model"}`)
}

// modelFromPath extracts M from .../models/M:method or .../models/M.
func modelFromPath(p string) string {
	i := strings.Index(p, "/models/")
	if i < 0 {
		return ""
	}
	m := p[i+len("/models/"):]
	if j := strings.IndexByte(m, ':'); j >= 0 {
		m = m[:j]
	}
	return m
}

// parsed is what an API's request parser extracts from a model call.
type parsed struct {
	Model       string
	Stream      bool
	Tools       []toolSpec
	ToolResults int
}

// plan is one response to render: the same content for every API.
type plan struct {
	ID     string
	Model  string
	Text   []string
	Calls  []call
	Delay  time.Duration
	Hang   bool
	Usage  Usage
	Stream bool
}

// api is one wire protocol.
type api interface {
	name() string
	parse(r *http.Request, body map[string]any) parsed
	// errorStatus maps a turn's error to the status this API uses.
	errorStatus(t *Turn) int
	errorBody(status int, overloaded bool) any
	stream(sw *sse, p *plan)
	complete(p *plan) any
}

func (s *Server) model(w http.ResponseWriter, r *http.Request, a api) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	var body map[string]any
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		err = dec.Decode(&body)
		if _, more := dec.Token(); err == nil && (body == nil || more != io.EOF) {
			err = errors.New("not one JSON object") // null, or more after it: as the APIs answer
		}
	}
	if err != nil {
		s.record(Request{API: a.name(), Method: r.Method, Path: r.URL.RequestURI(), Turn: -1, Status: http.StatusBadRequest})
		writeJSON(w, http.StatusBadRequest, a.errorBody(http.StatusBadRequest, false))
		return
	}
	pr := a.parse(r, body)
	rec := Request{
		API: a.name(), Method: r.Method, Path: r.URL.RequestURI(), Model: pr.Model, Tools: toolNames(pr.Tools),
		ToolResults: pr.ToolResults, Stream: pr.Stream, Turn: -1,
	}
	sc := s.current()
	p := &plan{ID: s.nextID("msg_mock"), Model: pr.Model, Stream: pr.Stream}
	var turn *Turn
	if len(pr.Tools) == 0 {
		rec.Side = true
		p.Text = []string{sideText(sc)}
		p.Usage = sc.SideUsage
	} else {
		rec.Turn, turn = sc.turnFor(pr.ToolResults, raw)
		if turn != nil && turn.Requires != "" && !bytes.Contains(raw, []byte(turn.Requires)) {
			rec.Err = "the conversation lacks " + turn.Requires
			p.Text, p.Usage = []string{ContextMissing + " " + turn.Requires}, DefaultUsage
		} else if turn == nil {
			p.Text = []string{"DONE"}
			p.Usage = DefaultUsage
		} else {
			p.Text, p.Delay, p.Hang, p.Usage = turn.Text, turn.Delay, turn.Hang, turn.Usage
			cwd := findCwd(raw)
			for _, tc := range turn.ToolCalls {
				c, err := resolve(tc, pr.Tools, cwd)
				if err != nil {
					rec.Err = err.Error()
					continue
				}
				c.ID = s.nextID(callPrefix(a))
				p.Calls = append(p.Calls, c)
			}
			if rec.Err != "" && len(p.Calls) == 0 && len(p.Text) == 0 {
				p.Text = []string{"mockmodel: " + rec.Err}
			}
		}
	}
	if turn != nil && turn.IsError() {
		status := a.errorStatus(turn)
		rec.Status = status
		s.record(rec)
		if turn.RetryAfter > 0 {
			ms := turn.RetryAfter.Milliseconds()
			w.Header().Set("retry-after-ms", fmt.Sprint(ms))
			w.Header().Set("retry-after", fmt.Sprint((ms+999)/1000))
		}
		writeJSON(w, status, a.errorBody(status, status == 529 || status == 503 || turn.Overloaded))
		return
	}
	rec.Status = http.StatusOK
	s.record(rec)
	if !pr.Stream {
		if !s.pauseAll(r.Context(), p) {
			return
		}
		writeJSON(w, http.StatusOK, a.complete(p))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	sw := &sse{w: w, rc: http.NewResponseController(w), ctx: r.Context(), closing: s.closing}
	sw.flush()
	a.stream(sw, p)
}

// pauseAll serves the delays (and a hang) of a non-streaming answer before it is sent.
func (s *Server) pauseAll(ctx context.Context, p *plan) bool {
	sw := &sse{ctx: ctx, closing: s.closing}
	for range len(p.Text) + len(p.Calls) {
		if !sw.pause(p.Delay) {
			return false
		}
	}
	if p.Hang {
		sw.hang()
		return false
	}
	return true
}

func sideText(sc *Scenario) string {
	if sc.SideText != "" {
		return sc.SideText
	}
	return DefaultSideText
}

func callPrefix(a api) string {
	if a.name() == APIAnthropic {
		return "toolu_mock"
	}
	return "call_mock"
}

// scriptedStatus is the status of a turn's scripted error: its own, or
// the API's usual one.
func scriptedStatus(t *Turn, usual int) int {
	if t.Status != 0 {
		return t.Status
	}
	return usual
}

// errorClass is the kind of a scripted error, which each API names in
// its own words (its errors table).
type errorClass int

const (
	errServer     errorClass = iota // a 5xx other than overloaded
	errOverloaded                   // the scenario's overloaded error
	errRateLimit                    // 429
	errBadRequest                   // another 4xx
)

func classify(status int, overloaded bool) errorClass {
	switch {
	case overloaded:
		return errOverloaded
	case status == http.StatusTooManyRequests:
		return errRateLimit
	case status < 500:
		return errBadRequest
	}
	return errServer
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes one server-sent-events response. After the client goes away or the server closes,
// every method is a no-op and pause returns false.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	ctx     context.Context
	closing <-chan struct{}
	err     error
}

func (s *sse) flush() {
	if s.err == nil {
		s.err = s.rc.Flush()
	}
}

// event writes `event: name` (omitted when empty) and `data: <json>`.
func (s *sse) event(name string, v any) {
	if s.err != nil {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		s.err = err
		return
	}
	var b bytes.Buffer
	if name != "" {
		b.WriteString("event: " + name + "\n")
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	_, s.err = s.w.Write(b.Bytes())
	s.flush()
}

func (s *sse) raw(text string) {
	if s.err != nil {
		return
	}
	_, s.err = io.WriteString(s.w, text)
	s.flush()
}

// pause waits d; false means stop writing (client gone, server closing or a write failed).
func (s *sse) pause(d time.Duration) bool {
	if s.err != nil {
		return false
	}
	if d <= 0 {
		select {
		case <-s.ctx.Done():
			return false
		case <-s.closing:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
	case <-s.closing:
	}
	return false
}

// hang keeps the response open, sending nothing, until the client goes away or the server
// closes.
// text streams p's text chunks through each, paced by p.Delay, then
// holds the answer open when the plan hangs; false means the answer is
// over (the client went, the server is closing, or it hung).
func (s *sse) text(p *plan, each func(chunk string)) bool {
	for _, chunk := range p.Text {
		if !s.pause(p.Delay) {
			return false
		}
		each(chunk)
	}
	if p.Hang {
		s.hang()
		return false
	}
	return true
}

func (s *sse) hang() {
	select {
	case <-s.ctx.Done():
	case <-s.closing:
	}
}
