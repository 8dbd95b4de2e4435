package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentharness/harness/internal/rpcline"
	"github.com/agentharness/harness/internal/syncio"
)

// maxLine is the longest line ServeStdio reads: a run_agent request whose
// prompt is MaxPromptBytes with every byte escaped ("\u0001", six bytes
// for one), and room for the rest of the request. So a prompt within
// MaxPromptBytes always runs, and one over it meets run_agent's own
// error, however the client escapes it.
const maxLine = 6*MaxPromptBytes + 1<<20

// maxReplies bounds the bytes of ServeStdio's own error answers waiting
// for a client that does not read them: thousands of answers (each at
// most an id of 4 KiB and a short message).
const maxReplies = 1 << 20

// ServeStdio serves one session as Run does, over newline-delimited
// JSON-RPC on r and w (stdio). The SDK ends the connection at the first
// line it cannot take, and with it the session and every run of it; so
// each line is looked at first (rpcline.Check), and one the SDK would
// end at, drop or answer wrongly is answered on w and dropped:
//
//   - a line that is not JSON: Parse error (-32700), id null;
//   - JSON that is not one JSON-RPC 2.0 message: Invalid request
//     (-32600), with the id of a request, null otherwise. A batch is one
//     of them, each of its requests answered so: MCP has had none since
//     2025-06-18, and the SDK ends the connection at one then. An id
//     that is a fraction or past 2^53-1 is one too (id null): the SDK
//     would answer a different id;
//   - a request whose id is that of a request still in progress: Invalid
//     request with that id (the SDK drops it without an answer);
//   - a line over maxLine, read through and never held: Invalid request
//     with the request's id; a notification or a response is dropped
//     with a warning to Options.Logger.
//
// Blank lines are skipped. The answers and the SDK's messages reach w
// whole, one at a time. These answers are queued (at most maxReplies
// bytes of them; past that one is dropped, with a warning to
// Options.Logger): the reader never waits for w, so it sees the end of r
// even when the client no longer reads.
//
// The end of r (EOF, or a read error) is the client's going away: the
// session's runs are interrupted at once, and every call in flight is
// answered (a run_agent waiting for its run, with the interrupted run's
// result). The SDK answers no call once its input has ended, so the end
// reaches it only once every request handed on is answered, or w
// failed (or after holdMax, 1 min: a backstop). When ctx is done (the
// server is told to stop: SIGTERM), the same: the runs are interrupted,
// and the calls in flight answered before the session is closed and
// ServeStdio returns ctx's error. Once r has ended, or ctx is done, a
// write to w blocked for writeGrace (5 s) is abandoned and nothing more
// is written: a client that closed stdin and no longer reads stdout
// does not keep ServeStdio, which returns once the runs' processes are
// gone. That end is the client's doing, not an error: ServeStdio
// returns nil.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	out := &syncio.GraceWriter{W: w, Grace: s.writeGrace}
	in := &input{lines: rpcline.NewReader(r, maxLine), replies: &syncio.Queue{W: out, Max: maxReplies}, log: s.o.Logger,
		ended: make(chan struct{}), broken: make(chan struct{}), quit: make(chan struct{}), holdMax: s.holdMax}
	// The SDK's own cap is a backstop that never fires: no line input
	// hands on is over maxLine.
	err := s.serve(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: sdkOutput{out, in}, MaxLineLength: maxLine + 1<<20},
		in.ended, out.End, in.settle)
	close(in.quit)
	// input's own answers are written before ServeStdio returns (the
	// caller exits then), each within the grace once the session is over.
	out.End()
	in.replies.Wait()
	if errors.Is(err, syncio.ErrAbandoned) {
		s.o.Logger.Warn("mcp: the client closed its input and stopped reading the output; messages were not written")
		err = nil
	}
	return err
}

// sdkOutput is the SDK's way to w: it tells input of each answer written,
// so that its id is free again.
type sdkOutput struct {
	w  io.Writer
	in *input
}

// Write writes one message of the SDK's (its transport writes each
// whole), an error without a code given one (withCodeMsg).
func (o sdkOutput) Write(p []byte) (int, error) {
	o.in.calls.Written(p)
	msg, _ := withCodeMsg(p)
	if _, err := o.w.Write(msg); err != nil {
		// The SDK writes nothing after a failed write, so the calls in
		// flight will never be answered: the end of r need not wait.
		o.in.brokenOnce.Do(func() { close(o.in.broken) })
		return 0, err
	}
	return len(p), nil
}

func (sdkOutput) Close() error { return nil }

// input is ServeStdio's input as the SDK reads it: line by line, each
// line looked at before it is handed on. Read is called by the SDK's one
// reading goroutine.
type input struct {
	lines   *rpcline.Reader
	replies *syncio.Queue // input's own answers, on their way to the output
	log     *slog.Logger

	rest []byte // what the SDK has not read yet of the line handed on
	err  error  // the error that ended r, returned once rest is read
	// ended is closed when r has ended (err is set): the client is gone.
	ended chan struct{}
	// broken is closed when a write of the SDK's failed.
	broken     chan struct{}
	brokenOnce sync.Once
	// quit is closed when ServeStdio is over.
	quit chan struct{}
	// holdMax bounds the hold of the end of r (Read); holdEnd is its
	// timer, from the end of r.
	holdMax time.Duration
	holdEnd <-chan time.Time

	calls rpcline.InFlight // the requests handed on and not answered yet
}

func (in *input) Read(p []byte) (int, error) {
	for len(in.rest) == 0 {
		if in.err != nil {
			// Held back until the calls in flight are answered: the SDK
			// answers none once it has seen the end. Each waits on runs
			// interrupted at the end, and on writes given up after the
			// grace.
			if in.holdEnd == nil {
				// A backstop: a call the SDK never answered would hold
				// the session, and ServeStdio, for ever.
				in.holdEnd = time.After(in.holdMax)
			}
			select {
			case <-in.calls.Idle():
			case <-in.broken:
			case <-in.quit:
			case <-in.holdEnd:
			}
			return 0, in.err
		}
		line, over, err := in.lines.Next()
		in.err = err // EOF after a last line without its newline
		if err != nil {
			close(in.ended)
		}
		if over != nil {
			in.oversize(over)
		} else {
			in.rest = in.check(line)
		}
	}
	n := copy(p, in.rest)
	in.rest = in.rest[n:]
	return n, nil
}

// settle returns once the requests handed on are answered, or a write
// failed (none will be written), or after holdMax: each waits on runs
// being interrupted and on writes given up after the grace, so this is a
// backstop, as in Read.
func (in *input) settle() {
	select {
	case <-in.calls.Idle():
	case <-in.broken:
	case <-time.After(in.holdMax):
	}
}

// check returns line as the SDK is to read it, or nil when it answered
// it: it hands on only what the SDK reads without ending the connection,
// and answers as it was asked.
func (in *input) check(line []byte) []byte {
	m, bad := rpcline.Check(line)
	switch {
	case bad != nil:
		msg := "invalid request: " + bad.Reason
		switch {
		case bad.Code == rpcline.CodeParseError:
			msg = "parse error: " + bad.Reason
		case bad.Batch:
			msg += ": MCP has no batches since 2025-06-18"
		}
		if len(bad.IDs) == 0 {
			in.reply(nil, bad.Code, msg)
		}
		for _, id := range bad.IDs {
			in.reply(id, bad.Code, msg)
		}
		return nil
	case m == nil: // a blank line
		return nil
	}
	if _, err := jsonrpc.DecodeMessage(m.Line); err != nil {
		// A backstop: Check refuses all the SDK does.
		in.reply(rpcline.ID(m.Line), jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		return nil
	}
	if m.Method != "" && m.ID != nil && !in.calls.Start(m.ID) {
		in.reply(m.ID, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: id %s is already in use by a request in progress", m.ID))
		return nil
	}
	return m.Line
}

// oversize answers a line over maxLine.
func (in *input) oversize(o *rpcline.Oversize) {
	if !o.Request {
		in.log.Warn("mcp: dropped an oversize message that is not a request", "bytes", o.Size, "method", o.Method)
		return
	}
	in.reply(o.ID, jsonrpc.CodeInvalidRequest, oversizeMessage("message", int64(o.Size), maxLine))
}

// reply queues a JSON-RPC error answer to the request id (nil: null)
// for the output: no id it answers is freed.
func (in *input) reply(id json.RawMessage, code int64, msg string) {
	if err := rpcline.WriteError(in.replies, id, &jsonrpc.Error{Code: code, Message: msg}); err != nil {
		in.log.Warn("mcp: dropped an error answer: the client reads none of the output", "id", string(id), "error", err)
	}
}
