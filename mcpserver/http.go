package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentharness/harness/internal/rpcline"
)

// postHeader is the request header by which a request handler finds the
// HTTP POST that carried its request: Handler sets it on every POST
// (replacing any value the client sent), and the SDK hands the POST's
// header to the handler (mcp.RequestExtra.Header), though not its
// context.
//
// The SDK does not cancel a call whose POST is gone before protocol
// 2026-07-28 (StreamableHTTPOptions.PropagateRequestCancellation, which
// this stateful server could not use anyway): a run_agent whose client
// dropped its connection went on waiting, and its run with it, until
// the run's budgets ended it. Without an event store the stream cannot
// be resumed, so the call's answer can reach no one.
const postHeader = "Harness-Post"

// errPostGone is the cause of a call's cancellation when its POST is over
// before it was answered.
var errPostGone = errors.New("mcpserver: the client closed the HTTP request that carried the call")

// posts are the HTTP POSTs being served, by their postHeader value.
type posts struct {
	mu   sync.Mutex
	next uint64
	ctxs map[string]context.Context
}

// add notes a POST whose context is ctx and returns its id.
func (p *posts) add(ctx context.Context) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	id := strconv.FormatUint(p.next, 10)
	if p.ctxs == nil {
		p.ctxs = map[string]context.Context{}
	}
	p.ctxs[id] = ctx
	return id
}

// remove forgets the POST id, once it is served.
func (p *posts) remove(id string) {
	p.mu.Lock()
	delete(p.ctxs, id)
	p.mu.Unlock()
}

// get returns the context of the POST id, nil when it is over.
func (p *posts) get(id string) context.Context {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ctxs[id]
}

// callContext returns the context of a call (method) that came in an HTTP
// POST: ctx, also cancelled when the POST is over, as its client closed
// the connection and the answer can reach no one. That is a cancelled
// call, as notifications/cancelled makes one: run_agent interrupts its
// run. A POST is over before its calls are answered only when its client
// has gone (the SDK holds it open until then), or its session is
// closing. A notification's POST is over once it is read: notifications,
// and requests that came another way, get ctx as it is.
func (s *Server) callContext(ctx context.Context, method string, req mcp.Request) (context.Context, context.CancelFunc) {
	var id string
	if extra := req.GetExtra(); extra != nil && extra.Header != nil && !strings.HasPrefix(method, "notifications/") {
		id = extra.Header.Get(postHeader)
	}
	if id == "" {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	post := s.posts.get(id)
	if post == nil {
		cancel(errPostGone)
		return ctx, func() {}
	}
	stop := context.AfterFunc(post, func() { cancel(errPostGone) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

// servePOST serves a POST with h: a body over maxBody is answered 413
// with a JSON-RPC error as soon as its Content-Length says so, never read
// into memory; the SDK refuses one without a Content-Length (413, plain
// text) once it has read maxBody of it. Either way the rest of the body
// is read through and dropped before the answer goes, as stdio reads an
// oversize line through: a client that sends its whole request before it
// reads the answer (most do) gets it, where the connection was reset.
// The calls of the POST learn when it is over (callContext).
func (s *Server) servePOST(h http.Handler, w http.ResponseWriter, req *http.Request) {
	if req.ContentLength > s.maxBody {
		if !strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
			// A client that waits for 100 Continue sends nothing more.
			_, _ = io.Copy(io.Discard, req.Body)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_ = rpcline.WriteError(w, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: oversizeMessage("request", req.ContentLength, s.maxBody)})
		return
	}
	id := s.posts.add(req.Context())
	defer s.posts.remove(id)
	body := &countingBody{ReadCloser: req.Body}
	r := *req // a handler does not change the request it is given
	r.Header = req.Header.Clone()
	r.Header.Set(postHeader, id)
	r.Body = body
	h.ServeHTTP(codeWriter{w}, &r)
	if body.n > s.maxBody {
		_, _ = io.Copy(io.Discard, req.Body)
	}
}

// oversizeMessage is the error message of a message of size bytes over
// the limit max; what names the message ("message", "request").
func oversizeMessage(what string, size, max int64) string {
	return fmt.Sprintf("invalid request: the %s is %d bytes; harness mcp reads %ss of up to %d bytes (a run_agent prompt is at most %d MiB)",
		what, size, what, max, MaxPromptBytes>>20)
}

// codeWriter gives an error answer of the SDK's without a JSON-RPC code
// one (withCodeMsg), as ServeStdio's output does: a POST without a
// session that is not initialize was refused with code 0. The SDK writes
// each SSE event, or JSON answer, in one Write.
type codeWriter struct{ http.ResponseWriter }

func (w codeWriter) Write(p []byte) (int, error) {
	msg, head, tail := p, []byte(nil), []byte(nil)
	if i := bytes.Index(p, []byte("data: ")); i >= 0 && (i == 0 || p[i-1] == '\n') {
		j := bytes.Index(p[i:], []byte("\n\n"))
		if j < 0 {
			return w.ResponseWriter.Write(p)
		}
		head, msg, tail = p[:i+len("data: ")], p[i+len("data: "):i+j], p[i+j:]
	}
	fixed, ok := withCodeMsg(msg)
	if !ok {
		return w.ResponseWriter.Write(p)
	}
	if _, err := w.ResponseWriter.Write(slices.Concat(head, fixed, tail)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap lets http.ResponseController reach the writer's Flush.
func (w codeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// countingBody counts the bytes read of a request body.
type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}
