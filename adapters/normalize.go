package adapters

import (
	"errors"
	"io"
	"sync/atomic"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/mapfile"
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
	// Mapped, if set, is the whole of r, a regular file mapped into
	// memory (mapfile.Map): the lines are read from it and r is not
	// read. They are views of it, not copies, so the parser (LinesKept)
	// and the events may keep pieces of them: the caller keeps it mapped
	// for as long as the events are used. The pages behind the reader
	// are given back as it goes (mapfile.Release). A read of a part of
	// it that the file no longer has (shortened meanwhile) ends the
	// reading with ErrMappedShrank; one by the caller's sink faults there.
	//
	// Measured on harness parse of the 200 MB corpora, medians of 7
	// interleaved runs, CPU per event, read -> mapped: codex 1.559 ->
	// 1.332 µs, cursor 1.856 -> 1.561, opencode 1.878 -> 1.557, gemini
	// 1.340 -> 1.194, claude 3.636 -> 3.243 (a slow hour of the VM,
	// whose kernel copied the page cache at 1-2 GB/s: 15-20 % of the
	// CPU of a parse that read the file).
	Mapped []byte
	// Cancelled, if set, is asked every MiB of a mapped file (which has
	// no reads to check around): an error ends the reading with it.
	Cancelled func() error
}

// ErrMappedShrank ends the reading of a mapped file that was shortened
// while it was read.
var ErrMappedShrank = errors.New("the file was shortened while it was read")

// prefaultAhead is how far ahead of the reader the pages of a mapped
// file are mapped (mapfile.Prefault), a MiB at a time: the reader's own
// faults cost claude's parse 6 % more CPU (11 interleaved runs).
const prefaultAhead = 2 << 20

// releaseLag is how far behind the reader the pages of a mapped file are
// given back: past the lines queued ahead of the Stream (maxAheadBytes),
// whose pieces the Stream still reads.
const releaseLag = 4 << 20

// Limits of one batch of parsed lines; a batch also ends whenever the
// input must be read again, so a live stream is never held back.
const (
	// batchLines: from a regular file a batch ends only when full, at
	// batchLines lines or batchBytes of them. Each hand-off may wake the
	// other goroutine's thread, which costs a VM's kernel more than
	// parsing a few lines: at 256 lines, harness parse of claude's 200 MB
	// corpus switched context 3300 times and spent 14 % of its CPU in
	// the switches and wake-ups (perf); at 4096, 1512 times. 4096
	// against 256 (and 1 MiB of lines), medians of 9 interleaved runs, CPU
	// per event: claude 1.785 -> 1.597 µs, codex 1.051 -> 0.994, cursor
	// 1.151 -> 1.105, opencode 1.151 -> 1.047, gemini 0.889 -> 0.847. At
	// 512 KiB of lines claude's batches hold ~900 lines: 1.558 µs at
	// 1 MiB, 1.531 at 512 KiB (5 runs).
	batchLines = 4096
	batchBytes = 512 << 10 // of lines parsed (what their bodies hold comes from them)
	// batchesAhead is how many batches may queue before the Stream: room
	// for the reader to run ahead while the Stream's sink is held up, so
	// that the cores stay busy on a shared machine.
	batchesAhead = 8
	// maxBatches is how many batches there are at most: one at each of the
	// two stages and batchesAhead queued between them. Past it the reader
	// waits for one to come back rather than make another (made only to
	// be dropped later).
	maxBatches = 2 + batchesAhead
	// maxAheadBytes bounds the lines parsed into the batches between
	// the reader and the Stream: past it the reader waits for one to come
	// back, so that a stream of long lines (a batch each, up to the line
	// cap), or what their bodies hold of them, is not held maxBatches
	// times over. What is ahead is live heap, which parse's memory limit
	// follows (cmd/harness paceMemoryLimit): at 8 MiB with batches of 1
	// MiB, codex's peak RSS at 800 MB of stream was 52.9 MB against 41.6
	// MB at 200 MB; at 2 MiB, 46.4 against 41.7.
	maxAheadBytes = 2 << 20
)

// Normalize reads a whole native stdout stream from r and writes what p
// makes of it to s, then flushes p. Lines longer than MaxLine are cut and
// reported with a line_truncated warning. It returns a read error, never a
// content error, and does not Finish s.
//
// Reading and parsing run on their own goroutine, a batch of lines ahead of
// the Stream and its sink, which run on the caller's: on a file the two
// halves of the work share the machine's cores. The Stream sees exactly
// what a line-by-line Parse would give it, in the same order. A sink that
// panics leaves no goroutine of Normalize's behind: it ends at its next
// hand-off (its read in flight ends first).
//
// Two stages, not three: parsing each line as it is read, on the reading
// goroutine, took less CPU than reading ahead of a third goroutine that
// applied what was read (the split of adapters' read and apply steps),
// which copied every line into its batch and handed each batch on once
// more. harness parse of the 200 MB corpora, medians of 7 interleaved
// runs on a 2-vCPU VM, CPU per event, three stages -> two: claude 1.692
// -> 1.577 µs, codex 1.003 -> 0.872, cursor 1.222 -> 1.084, opencode
// 1.116 -> 1.010, gemini 0.807 -> 0.736; wall time codex 685 -> 610 ms,
// gemini 607 -> 579, cursor 531 -> 531, opencode 400 -> 411, claude 224
// -> 279 (still 21 times jq's).
func Normalize(r io.Reader, p Parser, s *event.Stream, o NormalizeOptions) error {
	full := make(chan *batch, batchesAhead)
	free := make(chan *batch, maxBatches)
	// stop is closed as Normalize returns or panics: the goroutines that
	// would hand it more stop instead of waiting for it forever.
	stop := make(chan struct{})
	defer close(stop)
	var readErr error
	var ahead atomic.Int64 // lines parsed into the batches sent on and not yet back
	if o.Mapped != nil {
		if k, ok := p.(LinesKept); ok {
			k.LinesStay()
		}
	}
	go func() {
		defer close(full)
		readErr = parseBatches(r, p, s.Raw(), o, full, free, stop, &ahead)
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
		ahead.Add(-int64(b.size))
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

// parseBatches reads r (or o.Mapped) line by line, parses each line with
// p into the current batch and hands batches to full: when one is full,
// and before every read of r that may wait (any read, unless o.Regular).
// ahead counts the lines parsed into the batches handed on and not yet
// back in free. Once stop is closed (Normalize is gone) it hands nothing
// more and returns errStopped.
func parseBatches(r io.Reader, p Parser, keepLines bool, o NormalizeOptions, full, free chan *batch, stop chan struct{}, ahead *atomic.Int64) error {
	cur, made := &batch{}, 1
	send := func() error {
		if len(cur.lines) == 0 {
			return nil
		}
		held := ahead.Add(int64(cur.size))
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
	each := func(line []byte, dropped int64) error {
		cur.size += len(line)
		if dropped > 0 {
			cur.cuts = append(cur.cuts, cutLine{len(cur.lines), LineTruncated(len(line), dropped)})
		}
		var known bool
		cur.bodies, known = p.Parse(cur.bodies, line)
		// An unparsed line's text goes into its warning (a preview).
		if keepLines || !known {
			cur.text = append(cur.text, line...)
		}
		cur.lines = append(cur.lines, parsedLine{textTo: len(cur.text), to: int32(len(cur.bodies)), unparsed: !known})
		if len(cur.lines) >= batchLines || cur.size >= batchBytes {
			return send()
		}
		return nil
	}
	var err error
	switch {
	case o.Mapped != nil:
		err = scanMapped(o.Mapped, o.MaxLine, each, stop, o.Cancelled)
	case o.Regular:
		err = linescan.Scan(r, o.MaxLine, each)
	default:
		// Read as an agent's stdout is (linescan.ScanGrowing): a flood
		// piped in (cat capture | harness parse) is read a MiB at a time
		// once it keeps the pipe full, a live trickle as it comes. The
		// batch handed on before each read is then up to batchBytes,
		// not 64 KiB: fewer hand-offs (see Regular).
		err = linescan.ScanGrowing(beforeRead{r: r, hook: send}, o.MaxLine, each)
	}
	// What was read before an error is still handed on.
	if serr := send(); err == nil {
		err = serr
	}
	return err
}

// scanMapped scans a mapped file, and gives its pages back behind the
// reader; a fault reading it (the file was shortened) ends the scan with
// ErrMappedShrank, the lines before it delivered.
func scanMapped(mapped []byte, maxLine int, each linescan.Func, stop chan struct{}, cancelled func() error) (err error) {
	defer mapfile.Catching(mapped, func() { err = ErrMappedShrank })()
	released, prefaulted := 0, prefaultAhead
	mapfile.Prefault(mapped, 0, prefaulted)
	return linescan.ScanBytes(mapped, maxLine, each, func(off int) error {
		if off+prefaultAhead > prefaulted {
			mapfile.Prefault(mapped, prefaulted, off+prefaultAhead)
			prefaulted = off + prefaultAhead
		}
		if off-releaseLag > released {
			mapfile.Release(mapped, released, off-releaseLag)
			released = off - releaseLag
		}
		select {
		case <-stop:
			return errStopped
		default:
		}
		if cancelled != nil {
			return cancelled()
		}
		return nil
	})
}

// errStopped ends the reading of a Normalize that is gone.
var errStopped = errors.New("adapters: normalize stopped")

// batch is what the parsing goroutine made of consecutive lines.
type batch struct {
	lines  []parsedLine
	bodies []event.Body
	text   []byte // the lines themselves, when the Stream emits native events
	size   int    // of the lines parsed
	cuts   []cutLine
}

// parsedLine is where a line's bodies and text end in its batch's; they
// start where the line before's end. It is small: at batchLines lines a
// batch's lines were 192 KB at 48 bytes a line, written to cold memory
// (the batches take turns, the stream's bytes in between), 6.5 % of a
// cursor parse (perf).
type parsedLine struct {
	textTo   int   // its text
	to       int32 // its bodies (each made of some of the batch's bytes: far fewer than 2^31)
	unparsed bool
}

// cutLine is the warning for a line of the batch that was cut.
type cutLine struct {
	line int
	w    *event.Warning
}

func (b *batch) emit(s *event.Stream, bodies func([]event.Body)) {
	from, textFrom, cuts := 0, 0, b.cuts
	for i, pl := range b.lines {
		if len(cuts) > 0 && cuts[0].line == i {
			s.Emit(cuts[0].w)
			cuts = cuts[1:]
		}
		to := int(pl.to)
		if bodies != nil && to > from {
			bodies(b.bodies[from:to])
		}
		s.Line(event.StreamStdout, b.text[textFrom:pl.textTo], pl.unparsed, b.bodies[from:to])
		from, textFrom = to, pl.textTo
	}
}

func (b *batch) reset() {
	// The Stream holds the bodies now; don't pin them, nor one huge line.
	clear(b.bodies)
	if cap(b.text) > 4*batchBytes {
		b.text = nil
	}
	clear(b.cuts)
	b.bodies, b.lines, b.text, b.size, b.cuts = b.bodies[:0], b.lines[:0], b.text[:0], 0, b.cuts[:0]
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
