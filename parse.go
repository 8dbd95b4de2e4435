package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
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
	// session's requests in its order and answers the agent as it did
	// (when empty, the requests harness made before it recorded them).
	// Over ACP a one-prompt run's ReadOnly has its client driven too (a
	// capture alone is mapped as full-access answered it), so what the
	// run refused ends denied again; so has a run of any permissions
	// with a Cwd, so its diffs name files from there as the run's did.
	Permissions string
	// Resume is the agent's session the run continued (logger.Meta's
	// Resume): over ACP the answer that opened it names none.
	Resume string
	// EstimateCost, when set, prices the usage the agent reported without
	// a cost as a live run's Options.EstimateCost does: for Model until
	// the agent names its own. Nil: such usage is left unpriced.
	EstimateCost func(model string, u event.Usage) (usd float64, ok bool)
	// Mapped, if set, is what is left of r, a regular file, from its
	// offset to its end, mapped into memory (harness parse maps the file
	// it is given, or stdin redirected from one): the lines are read from
	// it, not from r (whose offset is left as it was), and not copied, so
	// the events sent to sink and the result may hold pieces of it, their
	// byte slices (a tool start's input) too, which are then read-only. The
	// caller keeps it mapped for as long as it uses them. A file
	// shortened while it is read faults: Parse ends with a read error when
	// its reader meets the lost part; a sink or caller reading a piece of
	// it then faults too, a panic it may recover where it has set
	// debug.SetPanicOnFault (harness parse does).
	Mapped []byte
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
// pipe or FIFO (an *os.File, blocking or not) waits for its writer;
// another reader is checked around each read. sink, o.Flush and
// o.EstimateCost are all called on the calling goroutine, which may
// recover what they panic with.
//
// Parse reads r ahead of the sink, but no read of r starts once it has
// returned, also when a callback panicked; what was read past the line
// the sink panicked at is dropped. A read of an *os.File in flight then
// is over before Parse returns (a pipe's, a FIFO's or a terminal's is
// woken), so what its writer writes next is the caller's to read. One
// that cannot be ended, of another io.Reader or of a socket (read on a
// goroutine of its own), goes on after Parse returns until r gives it
// something, which is dropped.
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
	var price func(*event.Usage)
	var priceLine func([]event.Body)
	if o.EstimateCost != nil {
		pr := &pricer{estimate: o.EstimateCost, model: model}
		price, priceLine = pr.price, pr.line
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
	regular := isRegular(r)
	in := &fence{r: r}
	f, isFile := r.(*os.File)
	var wake, release func()
	if isFile && !regular {
		in.r, wake, release = cancellable(ctx, f)
	}
	// Normalize's reader may be in a read as Parse returns (a sink that
	// panicked): woken, and waited for where it is a file's (a regular
	// file's read ends by itself), no read of r is made after Parse.
	defer func() {
		if wake != nil {
			wake()
		}
		in.end(isFile)
		if release != nil {
			release()
		}
	}()
	// A capture has no clock of its own: parsers time tool calls from the
	// lines' timestamps by default (adapters.WallClocked).
	readErr := adapters.Normalize(ctxReader{ctx, in}, p, s, adapters.NormalizeOptions{
		MaxLine:   o.MaxLine,
		Batch:     func() { at = now() },
		Idle:      o.Flush,
		Regular:   regular,
		Bodies:    priceLine, // on this goroutine: the caller recovers what EstimateCost panics with
		Mapped:    o.Mapped,
		Cancelled: ctx.Err,
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

// cancellable returns a reader of f (a pipe, a FIFO, a terminal) whose
// read that waits for a writer a cancelled ctx ends; wake, which ends
// such a read as the parse ends (a sink panicked: Normalize's reader is
// left in it); and release, to call once no read is in flight:
//
//   - f itself when its reads take a deadline (in Go's poller: os.Pipe's,
//     a FIFO opened non-blocking), set at ctx's cancel and by wake;
//   - else, on Linux, f opened anew through /proc/self/fd (a pipe or a
//     FIFO: a new open file description of the same pipe), non-blocking
//     and so in the poller. os.Stdin and a FIFO opened blocking are not,
//     and their deadline fails ("file type does not support deadline").
//     O_NONBLOCK is a flag of the description: set on f's own (or on a
//     dup of it, which shares it) it would be the whole pipeline's, and
//     a process reading the same pipe (the shell that handed it on, the
//     caller's next read of f) would get EAGAIN for the wait it expects;
//   - else (a socket, no /proc) f read on a goroutine of its own, left
//     to its read on cancel and by wake: what that read brings is
//     dropped, as it came after the parse.
func cancellable(ctx context.Context, f *os.File) (r io.Reader, wake, release func()) {
	var own *os.File // f opened anew, closed at the end
	rf := f
	if f.SetReadDeadline(time.Time{}) != nil {
		own = reopen(f)
		if own == nil {
			ar := &abandoning{ctx: ctx, r: f, stop: make(chan struct{})}
			return ar, func() { close(ar.stop) }, func() {}
		}
		rf = own
	}
	set := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = rf.SetReadDeadline(time.Now())
		close(set)
	})
	wake = func() {
		if !stop() {
			<-set // its deadline is not set after release's
		}
		_ = rf.SetReadDeadline(time.Now())
	}
	release = func() {
		if own != nil {
			_ = own.Close()
			return
		}
		_ = rf.SetReadDeadline(time.Time{}) // the caller's file, as it was
	}
	return rf, wake, release
}

// reopen opens the pipe or FIFO f anew, non-blocking (a FIFO's open
// waits for no writer then), and returns it when its reads take a
// deadline; nil where it cannot (no /proc, a socket, a device the poller
// refuses).
func reopen(f *os.File) *os.File {
	st, err := f.Stat()
	if err != nil || st.Mode()&(os.ModeNamedPipe|os.ModeCharDevice) == 0 {
		return nil
	}
	// Not f.Fd(), which would also set f's description blocking.
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	fd := -1
	if rc.Control(func(v uintptr) { fd = int(v) }) != nil {
		return nil
	}
	g, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(fd), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil
	}
	if gst, err := g.Stat(); err != nil || !os.SameFile(st, gst) || g.SetReadDeadline(time.Time{}) != nil {
		_ = g.Close()
		return nil
	}
	return g
}

// abandoning reads r on a goroutine, a read at a time, into a buffer of
// its own: a cancelled ctx ends a Read that waits, and the read in flight
// is left to finish by itself (then its goroutine ends), writing into
// nothing the caller still has.
type abandoning struct {
	ctx  context.Context
	r    io.Reader
	stop chan struct{} // closed as the parse ends: a Read waits no more
	buf  []byte
	done chan readDone // the read in flight's, if any
}

type readDone struct {
	n   int
	err error
}

func (a *abandoning) Read(p []byte) (int, error) {
	if a.done == nil {
		if cap(a.buf) < len(p) {
			a.buf = make([]byte, len(p))
		}
		buf, done := a.buf[:len(p)], make(chan readDone, 1)
		a.done = done
		go func() {
			n, err := a.r.Read(buf)
			done <- readDone{n, err}
		}()
	}
	select {
	case d := <-a.done:
		a.done = nil
		return copy(p, a.buf[:d.n]), d.err
	case <-a.ctx.Done():
		select {
		case d := <-a.done: // read by the cancel: not lost
			a.done = nil
			return copy(p, a.buf[:d.n]), d.err
		default:
			return 0, a.ctx.Err()
		}
	case <-a.stop:
		return 0, errParseOver
	}
}

// errParseOver ends a read of Parse's input made as Parse ends or after.
var errParseOver = errors.New("harness: the parse is over")

// fence is Parse's input, read by Normalize's reader, which a sink that
// panics leaves behind: once end is called, no read of r starts.
type fence struct {
	r    io.Reader
	mu   sync.Mutex // held by each read
	over atomic.Bool
}

func (f *fence) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.over.Load() {
		return 0, errParseOver
	}
	return f.r.Read(p)
}

// end ends the reading of r; with wait, it also waits for the read in
// flight, which must end by itself or have been woken.
func (f *fence) end(wait bool) {
	f.over.Store(true)
	if wait {
		f.mu.Lock() // once the read in flight is over
		f.mu.Unlock()
	}
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

// pricer prices the usage the lines report without a cost as a live run
// does (Run.estimate): for the run's model, then for the one the agent
// names in its session_start. What the parser's Flush gives goes to
// Stream.Emit, which prices it with the Stream's Price (price), as a live
// run's is. Both line and price run on Parse's caller's
// goroutine (adapters.NormalizeOptions.Bodies, the Stream's Price), one
// at a time, the lines in order.
type pricer struct {
	estimate func(model string, u event.Usage) (float64, bool)
	model    string
}

// line prices the bodies of one line, before the Stream has them.
func (p *pricer) line(bodies []event.Body) {
	for _, b := range bodies {
		switch v := b.(type) {
		case *event.SessionStart:
			if v.Model != "" {
				p.model = v.Model
			}
		case *event.Usage:
			p.price(v)
		case *event.Result:
			p.price(&v.Usage)
		}
	}
}

// price prices u, when it has no cost, for the model of the lines seen so
// far.
func (p *pricer) price(u *event.Usage) {
	if u.CostUSD != 0 || u.IsZero() {
		return
	}
	if usd, ok := p.estimate(p.model, *u); ok {
		u.CostUSD, u.CostEstimated = usd, true
	}
}
