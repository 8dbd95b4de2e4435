package adapters

import (
	"errors"
	"io"
	"sync/atomic"

	"github.com/agentharness/harness/adapters/internal/readahead"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/linescan"
)

// NormalizeOptions configures Normalize. The zero value is usable.
type NormalizeOptions struct {
	MaxLine int // line cap; 0 = linescan.DefaultMax
	// Batch, if set, is called before the events of each batch of lines
	// reach the Stream: a caller that reads its clock once per batch
	// rather than once per event reads it here.
	Batch func()
	// Idle, if set, is called whenever Normalize is about to wait for the
	// next events (every line read so far has reached the Stream, or is
	// being parsed): a writer that buffers the events writes them out
	// here, so a live pipe sees each event as soon as its line was read.
	Idle func()
	// Regular says that r is a regular file, whose reads never wait for a
	// writer: a batch then ends only when full, not before every read
	// (64 KiB: every 130 lines of claude's), and the goroutines hand on a
	// batch half as often. Measured on `harness parse` of the 100 MB
	// claude corpus, medians of 6 runs: 1.29 -> 1.22 µs of CPU an event
	// (gemini 0.85 -> 0.82), the rest of each hand-off being the runtime
	// waking and parking the other goroutine's thread.
	Regular bool
	// Bodies, if set, is given the bodies of each line, in order, just
	// before the Stream has them, on the caller's goroutine: a callback
	// of the caller's called there (Parse prices usage with
	// ParseOptions.EstimateCost) panics where the caller's recover
	// reaches it, not on the reading goroutine, where it would kill the
	// program.
	Bodies func(bodies []event.Body)
}

// Limits of one batch of parsed lines; a batch also ends whenever the
// input must be read again, so a live stream is never held back.
const (
	// batchLines is also how many lines a read-ahead parser's slots
	// hold, a kilobyte a line for claude: at 1024 the slots of the
	// batches took 6 MB of a parse's heap, and the collector ran more
	// often under parse's memory limit (codex, 200 MB: 41 collections
	// against 34 at 256, and 1.7 % more instructions).
	batchLines = 256
	batchBytes = 1 << 20 // of lines kept (for native events, or a read-ahead parser (adapters/internal/readahead))
	// batchesAhead is how many batches may queue before each of the last
	// two stages: room for a stage to run ahead while another is held
	// up, so that the cores stay busy on a shared machine. At 2, the
	// 200 MB corpora took (medians of 9 interleaved runs, 2-vCPU Intel
	// VM) gemini 711 ms, codex 686 and cursor 478; at 8, 602, 634 and
	// 441 ms, for the same CPU (±3 %) and, but for claude's slots
	// (32.6 -> 40.5 MB), the same peak RSS.
	batchesAhead = 8
	// maxBatches is how many batches there are at most: one at each of the
	// three stages and batchesAhead queued before each of the last two.
	// Past it the reader waits for one to come back rather than make
	// another (a megabyte or two each, made only to be dropped later).
	maxBatches = 3 + 2*batchesAhead
	// maxAheadBytes bounds the lines held by the batches between the
	// reader and the Stream: past it the reader waits for one to come
	// back, so that a stream of long lines (a batch each, up to the line
	// cap) is not held maxBatches times over.
	maxAheadBytes = 8 << 20
	// longLine is the length past which a line's read-ahead slot is
	// cleared once applied. Shorter lines' slots are left as they are
	// until read into again: what they pin (views of a batch's text, or
	// of the blocks a parser copies lines into) is little, and most of
	// it kept by later lines anyway. Clearing every slot cost claude,
	// whose parser clears a slot as it reads into it, 95 instructions
	// a line (1 %; callgrind).
	longLine = 64 << 10
)

// Normalize reads a whole native stdout stream from r and writes what p
// makes of it to s, then flushes p. Lines longer than MaxLine are cut and
// reported with a line_truncated warning. It returns a read error, never a
// content error, and does not Finish s.
//
// Reading and parsing run on their own goroutine, a batch of lines ahead of
// the Stream and its sink, which run on the caller's: on a file the two
// halves of the work share the machine's cores. A read-ahead parser's
// reading and applying run on two goroutines. The Stream sees exactly what
// a line-by-line Parse would give it, in the same order. A sink that
// panics leaves no goroutine of Normalize's behind: they end at their
// next hand-off (the reader's read in flight ends first).
func Normalize(r io.Reader, p Parser, s *event.Stream, o NormalizeOptions) error {
	full := make(chan *batch, batchesAhead)
	free := make(chan *batch, maxBatches)
	// stop is closed as Normalize returns or panics: the goroutines that
	// would hand it more stop instead of waiting for it forever.
	stop := make(chan struct{})
	defer close(stop)
	var readErr error
	read := full
	if ra, ok := p.(readahead.Parser); ok {
		// A third goroutine applies what the first read: three stages,
		// which the scheduler spreads over the cores as their loads
		// come.
		read = make(chan *batch, batchesAhead)
		go func() {
			defer close(full)
			for b := range read {
				b.apply(ra)
				select {
				case full <- b:
				case <-stop:
					return
				}
			}
		}()
	}
	var ahead atomic.Int64 // text of the batches sent on and not yet back
	go func() {
		defer close(read)
		readErr = parseBatches(r, p, s.Raw(), o.MaxLine, o.Regular, read, free, stop, &ahead)
	}()
	for {
		var b *batch
		select {
		case b = <-full:
		default:
			if o.Idle != nil {
				o.Idle()
			}
			b = <-full
		}
		if b == nil {
			break
		}
		if o.Batch != nil {
			o.Batch()
		}
		b.emit(s, o.Bodies)
		ahead.Add(-int64(len(b.text)))
		b.reset()
		free <- b // never waits: it has room for every batch
	}
	// The producer is done (full is closed): p is ours again.
	s.Emit(p.Flush(nil)...)
	return readErr
}

// waitingForBatch, set only by a test (never while a Normalize runs), is
// called whenever the reader is about to wait for a batch to come back.
var waitingForBatch func()

// parseBatches reads r line by line, parses each line with p into the
// current batch and hands batches to full: when one is full, and before
// every read of r that may wait (any read, unless r is regular). ahead
// counts the text of the batches handed on and not yet back in free. Once
// stop is closed (Normalize is gone) it hands nothing more and returns
// errStopped.
func parseBatches(r io.Reader, p Parser, keepLines bool, maxLine int, regular bool, full, free chan *batch, stop chan struct{}, ahead *atomic.Int64) error {
	ra, _ := p.(readahead.Parser)
	cur, made := &batch{}, 1
	send := func() error {
		if len(cur.lines) == 0 {
			return nil
		}
		held := ahead.Add(int64(len(cur.text)))
		select {
		case full <- cur:
		case <-stop:
			return errStopped
		}
		if made == maxBatches || held >= maxAheadBytes {
			if waitingForBatch != nil {
				waitingForBatch()
			}
			select {
			case cur = <-free:
			case <-stop:
				return errStopped
			}
			return nil
		}
		select {
		case cur = <-free:
		default:
			cur, made = &batch{}, made+1
		}
		return nil
	}
	var in io.Reader = beforeRead{r: r, hook: send}
	if regular {
		in = r
	}
	err := linescan.Scan(in, maxLine, func(line []byte, dropped int64) error {
		pl := parsedLine{from: len(cur.bodies)}
		if dropped > 0 {
			pl.truncated = LineTruncated(len(line), dropped)
		}
		if ra != nil {
			// Only read here; applied in order on the other side. The
			// batch's copy of the line stays as it is until then.
			if cur.slots == nil {
				cur.slots = ra.Slots(batchLines)
			}
			from := len(cur.text)
			cur.text = append(cur.text, line...)
			pl.lineFrom, pl.lineTo = from, len(cur.text)
			ra.Read(cur.slots, len(cur.lines), cur.text[from:len(cur.text):len(cur.text)])
		} else {
			var known bool
			cur.bodies, known = p.Parse(cur.bodies, line)
			pl.to, pl.unparsed = len(cur.bodies), !known
		}
		// An unparsed line's text goes into its warning (a preview).
		if (keepLines || pl.unparsed) && ra == nil {
			pl.lineFrom = len(cur.text)
			cur.text = append(cur.text, line...)
			pl.lineTo = len(cur.text)
		}
		cur.lines = append(cur.lines, pl)
		if len(cur.lines) >= batchLines || len(cur.text) >= batchBytes {
			return send()
		}
		return nil
	})
	// What was read before an error is still handed on.
	if serr := send(); err == nil {
		err = serr
	}
	return err
}

// errStopped ends the reading of a Normalize that is gone.
var errStopped = errors.New("adapters: normalize stopped")

// batch is what the parsing goroutine made of consecutive lines.
type batch struct {
	lines  []parsedLine
	bodies []event.Body
	text   []byte          // the lines themselves, when the Stream emits native events
	slots  readahead.Slots // the lines as read, for a read-ahead parser
}

type parsedLine struct {
	from, to         int // its bodies
	lineFrom, lineTo int // its text
	unparsed         bool
	truncated        *event.Warning // the line was cut
}

func (b *batch) emit(s *event.Stream, bodies func([]event.Body)) {
	for _, pl := range b.lines {
		if pl.truncated != nil {
			s.Emit(pl.truncated)
		}
		if bodies != nil && pl.to > pl.from {
			bodies(b.bodies[pl.from:pl.to])
		}
		s.Line(event.StreamStdout, b.text[pl.lineFrom:pl.lineTo], pl.unparsed, b.bodies[pl.from:pl.to])
	}
}

// apply turns the lines a read-ahead parser read into bodies, in order.
func (b *batch) apply(ra readahead.Parser) {
	for i := range b.lines {
		pl := &b.lines[i]
		pl.from = len(b.bodies)
		var known bool
		b.bodies, known = ra.Apply(b.bodies, b.slots, i)
		pl.to, pl.unparsed = len(b.bodies), !known
		if pl.lineTo-pl.lineFrom > longLine {
			b.slots.Clear(i, i+1)
		}
	}
}

func (b *batch) reset() {
	// The Stream holds the bodies now; don't pin them, nor one huge line
	// (nor, in read-ahead slots, views of it).
	clear(b.bodies)
	if cap(b.text) > 4*batchBytes {
		b.text = nil
		if b.slots != nil {
			b.slots.Clear(0, len(b.lines))
		}
	}
	b.bodies, b.lines, b.text = b.bodies[:0], b.lines[:0], b.text[:0]
}

// beforeRead calls hook before each read of r; an error of hook's ends
// the reading.
type beforeRead struct {
	r    io.Reader
	hook func() error
}

func (b beforeRead) Read(p []byte) (int, error) {
	if err := b.hook(); err != nil {
		return 0, err
	}
	return b.r.Read(p)
}
