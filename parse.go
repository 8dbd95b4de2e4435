package harness

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// ParseOptions configures Parse. The zero value is usable.
type ParseOptions struct {
	Raw     bool             // emit a native event before the events of each line
	MaxLine int              // line cap; 0 = 16 MiB
	Run     string           // run id; a fresh one when empty
	Now     func() time.Time // clock; time.Now when nil
	// Flush, if set, is called whenever Parse is about to wait for the
	// next events: a sink that buffers its output writes it out here, so a
	// live pipe sees each event as soon as its line is read and a file is
	// written in large blocks.
	Flush func()
	// Protocol is the protocol the stream was captured from: "" or "cli"
	// (the agent's headless output), "acp" (an ACP agent's stdout; agent
	// may then be any name), "stream-json" or "app-server" (Claude Code's
	// and Codex's own: without Session, each turn's end reads as a run's,
	// and the last is the result).
	Protocol string
	// Session, for the native lines of a live session's log, is what its
	// recorded stream says of its turns (ReadSessionRecord): Parse then
	// rebuilds the turns as the session emitted them. The protocol must
	// hold several turns (acp, stream-json, app-server). The record of a
	// one-prompt run's log (no Turns) gives the run's status and the
	// error harness ended it with, which its lines do not hold.
	Session *SessionRecord
	// Model and Cwd are what the harness started the run with
	// (logger.Meta's Model and Cwd; when empty, Session's): its
	// session_start's, as a live run's (the agent's own model wins where
	// its lines name one), and the directory a replayed client is begun
	// in.
	Model, Cwd string
	// Permissions is the permission mode the run had (logger.Meta's):
	// FullAccess when empty (a capture, or a log written before harness
	// recorded it), ReadOnly, or Ask (a live session whose caller
	// answered). The client driven over a Session's lines then makes the
	// session's requests in its order and answers the agent as it did.
	// Over ACP a one-prompt run's ReadOnly has its client driven too (a
	// capture alone is mapped as full-access answered it), so what the
	// run refused ends denied again; so has a run of any permissions
	// with a Cwd, so its diffs name files from there as the run's did.
	Permissions string
	// EstimateCost, when set, prices the usage the agent reported without
	// a cost as a live run's Options.EstimateCost does: for Model until
	// the agent names its own. Nil: such usage is left unpriced.
	EstimateCost func(model string, u event.Usage) (usd float64, ok bool)
}

// Parse normalizes a captured native stdout stream of agent read from r,
// as a live run would, and sends each event to sink in order, on the
// calling goroutine (reading and parsing run a little ahead on others).
// The agent's terminal event decides the result's status; a stream without
// one ends with an error event and status error. The result's duration is
// the agent's own where its terminal event reports one, else the span of
// the lines' timestamps (adapters.NativeSpanned), else (lines without
// any) how long the parse took by o.Now. Parse returns the result, or an
// error for an unknown agent or a failed read (the events read before a
// read error are still sent, and the stream still ends with a result).
// A cancelled ctx ends it as a read error (ctx's): also while a read of a
// pipe (an *os.File) waits for its writer; another reader is checked
// around each read.
func Parse(ctx context.Context, r io.Reader, agent string, sink func(event.Event), o ParseOptions) (*event.Result, error) {
	// Over a protocol other than cli the agent may be any name, as if
	// given by its command: only the adapter's parser is used.
	a, err := protocolAdapter(Task{Agent: agent, Protocol: o.Protocol, Command: []string{agent}})
	if err != nil {
		return nil, err
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	// The clock is read once per batch of lines rather than once per
	// event: a batch is read within a millisecond or so, and a clock read
	// per event costs more than its encoding on event-dense streams.
	at := now()
	model, cwd := o.Model, o.Cwd
	if o.Session != nil {
		model, cwd = cmp.Or(model, o.Session.Model), cmp.Or(cwd, o.Session.Cwd)
	}
	var pr *pricer
	var price func(*event.Usage)
	if o.EstimateCost != nil {
		pr = &pricer{estimate: o.EstimateCost, model: model}
		price = pr.price
	}
	s := event.NewStream(event.StreamConfig{
		Run: o.Run, Now: func() time.Time { return at }, Raw: o.Raw, Sink: sink, Price: price,
		Start: event.SessionStart{Agent: a.Name(), Model: model, Cwd: cwd},
	})
	var p adapters.Parser = a.NewParser()
	// Asked of the adapter's own parser: a replayer drives that same
	// parser over the lines.
	spanned, _ := p.(adapters.NativeSpanned)
	p, err = replayParser(p, o, cwd)
	if err != nil {
		return nil, fmt.Errorf("protocol %q: %w", cmp.Or(o.Protocol, ProtocolCLI), err)
	}
	if pr != nil {
		// Around the parser: it loses a read-ahead parser's second
		// goroutine, which only a parse that prices pays for.
		pr.Parser = p
		p = pr
	}
	if f, ok := r.(*os.File); ok && !isRegular(r) {
		// A read that waits for the pipe's writer is ended by a deadline
		// once ctx is cancelled (a check before each read came too late:
		// the parse waited for the writer, and then lost the cancel).
		set := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			_ = f.SetReadDeadline(time.Now())
			close(set)
		})
		defer func() {
			if !stop() {
				<-set
				_ = f.SetReadDeadline(time.Time{}) // the caller's file, as it was
			}
		}()
	}
	// A capture has no clock of its own: parsers time tool calls from the
	// lines' timestamps by default (adapters.WallClocked).
	readErr := adapters.Normalize(ctxReader{ctx, r}, p, s, adapters.NormalizeOptions{
		MaxLine: o.MaxLine,
		Batch:   func() { at = now() },
		Idle:    o.Flush,
		Regular: isRegular(r),
	})
	at = now()
	if readErr != nil {
		s.Emit(&event.Error{Code: event.ErrParseError, Message: "reading the native stream: " + readErr.Error()})
	}
	out := event.Outcome{NoProcess: true}
	if spanned != nil {
		if ms, ok := spanned.NativeSpan(); ok {
			out.NativeSpanMS = &ms
		}
	}
	o.Session.outcome(&out)
	return s.Finish(out), readErr
}

// isRegular reports whether r is a regular file (not a pipe, a terminal or
// a FIFO that a writer may still be filling).
func isRegular(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}

// ctxReader stops a long parse when ctx is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	if cerr := c.ctx.Err(); cerr != nil {
		return n, cerr // cancelled while the read waited: not lost
	}
	return n, err
}

// pricer prices the usage its parser's lines report without a cost as a
// live run does (Run.estimate): for the run's model, then for the one the
// agent names in its session_start. Its Flush is the parser's, unpriced,
// as a live run's is. Parse runs on Normalize's reading goroutine and
// price on the Stream's too: mu guards model.
type pricer struct {
	adapters.Parser
	estimate func(model string, u event.Usage) (float64, bool)

	mu    sync.Mutex
	model string
}

// Parse implements adapters.Parser.
func (p *pricer) Parse(dst []event.Body, line []byte) ([]event.Body, bool) {
	n := len(dst)
	dst, known := p.Parser.Parse(dst, line)
	for _, b := range dst[n:] {
		switch v := b.(type) {
		case *event.SessionStart:
			if v.Model != "" {
				p.mu.Lock()
				p.model = v.Model
				p.mu.Unlock()
			}
		case *event.Usage:
			p.price(v)
		case *event.Result:
			p.price(&v.Usage)
		}
	}
	return dst, known
}

// price prices u, when it has no cost, for the model of the lines parsed
// so far.
func (p *pricer) price(u *event.Usage) {
	if u.CostUSD != 0 || u.IsZero() {
		return
	}
	p.mu.Lock()
	model := p.model
	p.mu.Unlock()
	if usd, ok := p.estimate(model, *u); ok {
		u.CostUSD, u.CostEstimated = usd, true
	}
}
