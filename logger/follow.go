package logger

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/event"
)

// WithEventHook sets a function called with each event line (redacted,
// with its newline) right after it reached the disk (with
// WithBufferedEvents, at Flush), in the order the lines were written. It
// runs under the session's lock: it must not block, and the slice is only
// valid during the call. A live view in the writer's process uses it to
// learn at once that readers of the log can see a new line.
func WithEventHook(fn func(line []byte)) Option { return func(s *Session) { s.onEvent = fn } }

// Tail reads the complete lines of a run's event log while another
// process (or goroutine) may still be appending to it. A line is only
// returned once its newline is on the disk, so a reader never sees half
// a line; the bytes of an unfinished last line are kept for the next call.
// A line longer than the stream allows (event.MaxLineBytes: a corrupted
// log) is not returned: its bytes are dropped up to its newline as they
// are read, so a Tail holds at most that much whatever the log holds.
// A Tail is not safe for concurrent use.
type Tail struct {
	dir     string // the store; the log is run's
	run     string
	path    string
	f       *os.File
	r       *bufio.Reader
	maxLine int
	partial []byte
	offset  int64 // bytes of complete lines read so far
	long    bool  // dropping a line over maxLine, up to its newline
	skipped int64 // bytes of that line dropped since offset
	dropped int   // lines dropped for their length
}

// TailPos is where a Tail stands in its log: a Tail opened there
// (OpenTailPos) reads on as that one would, without reading again what
// it judged.
type TailPos struct {
	// Offset is past the complete lines read, and past what was read of
	// a line too long to return.
	Offset int64
	// InLongLine: Offset is inside such a line, whose rest up to its
	// newline is dropped.
	InLongLine bool
}

// OpenTail opens the event log of run (an id, not a prefix) in dir.
func OpenTail(dir, run string) (*Tail, error) { return OpenTailAt(dir, run, 0) }

// OpenTailAt opens the event log of run in dir at offset, which must be the
// start of a line (an Offset a Tail returned).
func OpenTailAt(dir, run string, offset int64) (*Tail, error) {
	return OpenTailPos(dir, run, TailPos{Offset: offset})
}

// OpenTailPos opens the event log of run in dir at p (a Pos a Tail
// returned).
func OpenTailPos(dir, run string, p TailPos) (*Tail, error) {
	if err := validRunID(run); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, run+ExtEvents)
	f, err := OpenFile(dir, run, ExtEvents) // not through a link out of the store
	if err != nil {
		return nil, fmt.Errorf("logger: %w", err)
	}
	if p.Offset > 0 {
		if _, err := f.Seek(p.Offset, io.SeekStart); err != nil {
			f.Close()
			return nil, fmt.Errorf("logger: %w", err)
		}
	}
	return &Tail{dir: dir, run: run, path: path, f: f, r: bufio.NewReaderSize(f, 64<<10), maxLine: event.MaxLineBytes,
		offset: p.Offset, long: p.InLongLine}, nil
}

// Next returns the next complete line, without its newline, or io.EOF when
// the file holds no further complete line yet. The slice is valid until
// the next call.
func (t *Tail) Next() ([]byte, error) {
	for {
		chunk, err := t.r.ReadSlice('\n')
		complete := err == nil
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("logger: %w", err)
		}
		n := len(t.partial) + len(chunk) // the line so far, with its newline once complete
		if complete {
			n--
		}
		if !t.long && n > t.maxLine {
			t.long, t.skipped, t.partial = true, int64(len(t.partial)), t.partial[:0]
		}
		switch {
		case t.long:
			t.skipped += int64(len(chunk))
			if complete {
				t.offset += t.skipped
				t.long, t.skipped = false, 0
				t.dropped++
			}
		case !complete:
			t.partial = append(t.partial, chunk...)
		default:
			line := chunk
			if len(t.partial) > 0 {
				line = append(t.partial, chunk...)
				t.partial = line[:0] // its bytes are the caller's until the next call
			}
			t.offset += int64(len(line))
			return line[:len(line)-1], nil
		}
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
	}
}

// Offset is the number of bytes of the complete lines read so far: the
// start of the line Next reads next.
func (t *Tail) Offset() int64 { return t.offset }

// Pos is where the Tail stands, for OpenTailPos.
func (t *Tail) Pos() TailPos {
	return TailPos{Offset: t.offset + t.skipped, InLongLine: t.long}
}

// Dropped is how many lines Next dropped for being longer than the stream
// allows.
func (t *Tail) Dropped() int { return t.dropped }

// Close closes the file.
func (t *Tail) Close() error { return t.f.Close() }

// renewed is called when Next found no further line: it reports whether
// the file was truncated below what was read, or its path now names
// another file (the log was rotated or replaced); then the Tail reads the
// path again from its start, as tail -F does: what the old file held was
// read, the bytes of a line it never finished are dropped, and what a
// writer appends to it from now on is not seen.
func (t *Tail) renewed() (bool, error) {
	fi, err := t.f.Stat()
	if err != nil {
		return false, fmt.Errorf("logger: %w", err)
	}
	pi, err := os.Stat(t.path)
	replaced := err == nil && !os.SameFile(fi, pi) // a log removed and not replaced: keep reading it
	if !replaced && fi.Size() >= t.offset+t.skipped+int64(len(t.partial)) {
		return false, nil
	}
	f, err := OpenFile(t.dir, t.run, ExtEvents)
	if err != nil {
		return false, fmt.Errorf("logger: %w", err)
	}
	t.f.Close()
	t.f, t.offset, t.partial = f, 0, t.partial[:0]
	t.long, t.skipped = false, 0
	t.r.Reset(f)
	return true, nil
}

// LineSeq returns the seq and type of an event line; seq is -1 when the
// line has none, or none that is a seq (an integer from 0 to
// math.MaxInt64): a line of a corrupted log, which is then delivered
// without a place in the order rather than with a made-up one. Lines
// harness wrote start with the envelope in its order (v, type, run, seq),
// read without a JSON parser; any other line is parsed.
func LineSeq(line []byte) (seq int64, typ string) {
	if seq, typ, ok := envelope(line); ok {
		return seq, typ
	}
	res := gjson.GetManyBytes(line, "seq", "type")
	seq = -1
	if res[0].Type == gjson.Number {
		// Not res[0].Int(): it clamps a seq past int64 to the largest one,
		// above which no later line would be delivered; nor a fraction or
		// an exponent, which no writer of the stream produces.
		if n, err := strconv.ParseInt(res[0].Raw, 10, 64); err == nil && n >= 0 {
			seq = n
		}
	}
	return seq, res[1].Str
}

// FollowOptions tune Follow. The zero value is woken by the kernel at
// each write where the directory can be watched (inotify), reads the
// disk every 100 ms besides (and only then where it cannot), and ends
// when the run's meta says it is no longer running.
type FollowOptions struct {
	// After skips the lines whose seq is at most After (0: from the start).
	After int64
	// Wake, when set, returns a channel closed when the log may have grown
	// (a session hook of the writer, in this process); the directory is
	// then not watched, and the disk is still read every Poll.
	Wake func() <-chan struct{}
	// Poll is how often the disk is read when nothing wakes the reader: it
	// bounds the delay where no notification comes (no inotify, its limits
	// reached, a writer on another machine of a network file system).
	Poll time.Duration
	// Ended reports whether the writer is done; by default, whether the
	// run's meta no longer says running, or its harness process is gone
	// (StatusLost); a log with no meta yet is a run starting, unless it
	// has not been written to for metaGrace. Follow returns when it is and
	// no complete line is left.
	Ended func() bool
	// CaughtUp, when set, is called each time every complete line on the
	// disk has been delivered, before Follow waits for more, and at least
	// every Poll while nothing arrives: a writer flushes what it buffered
	// there. An error ends Follow with it.
	CaughtUp func() error
}

// metaGrace is how long a log with no meta is taken for a run still
// starting: its writer creates the log, then the meta.
const metaGrace = 10 * time.Second

func (o FollowOptions) orDefaults(dir, run string) FollowOptions {
	if o.Poll <= 0 {
		o.Poll = 100 * time.Millisecond
	}
	if o.Ended == nil {
		o.Ended = func() bool {
			m, stored := readMetaFile(dir, run)
			if stored {
				return m.Status != StatusRunning
			}
			fi, err := os.Stat(filepath.Join(dir, run+ExtEvents))
			return err != nil || time.Since(fi.ModTime()) > metaGrace
		}
	}
	return o
}

// Follow calls fn with each line (without its newline) of run's event log
// whose seq is after o.After: those already on the disk first, then each
// new one as the writer appends it, until fn has been given the result
// event, or the writer is done and no line is left (a harness that died
// before its result), or ctx ends (its error is returned), or fn fails
// (its error is returned). Lines are delivered whole, in order, and once:
// a line whose seq is not above the last one delivered is skipped, so a
// log truncated and written again, or replaced by one that repeats it
// (rotated), is read on without a line twice. Follows of one log in one
// process share one reader of the file (see Feeds).
func Follow(ctx context.Context, dir, run string, o FollowOptions, fn func(seq int64, line []byte) error) error {
	return sharedFeeds.Follow(ctx, dir, run, o, fn)
}

// sharedFeeds serves Follow.
var sharedFeeds Feeds

// Feeds shares the reading of event logs among their followers: the
// follows of one run's log through a Feeds are served by one reader of
// the file, which keeps the lines it read last (feedWindow bytes) for all
// of them, so that a write costs one read of the disk however many
// follow, and the followers wake once for the lines of a wake-up rather
// than each reading the disk. A follower replaying the log's past, or one
// that fell further behind than the window, reads the disk on its own
// until it reaches the lines the feed holds. The options of the follow
// that started the reader (Wake, Poll, Ended) drive it until the last
// follow of the run ends. The zero value is ready for use.
type Feeds struct {
	window int // bytes of lines a feed keeps; feedWindow when 0
	mu     sync.Mutex
	by     map[feedKey]*feed
}

type feedKey struct{ dir, run string }

// feedWindow is how many bytes of recent lines a feed keeps.
const feedWindow = 4 << 20

// Follow is the package's Follow, sharing the reader with the other
// follows of fs.
func (fs *Feeds) Follow(ctx context.Context, dir, run string, o FollowOptions, fn func(seq int64, line []byte) error) error {
	t, err := OpenTail(dir, run)
	if err != nil {
		return err
	}
	o = o.orDefaults(dir, run)
	f := fs.join(feedKey{filepath.Clean(dir), run}, o)
	defer fs.leave(f)
	fl := &follower{f: f, t: t, o: o, fn: fn, hi: o.After, last: -1}
	defer func() {
		if fl.t != nil {
			fl.t.Close()
		}
	}()
	return fl.follow(ctx)
}

func (fs *Feeds) join(k feedKey, o FollowOptions) *feed {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f := fs.by[k]
	if f == nil {
		f = &feed{key: k, o: o, window: cmp.Or(fs.window, feedWindow), anchor: -1, changed: make(chan struct{})}
		if fs.by == nil {
			fs.by = map[feedKey]*feed{}
		}
		fs.by[k] = f
	}
	f.refs++
	f.followers.Add(1)
	return f
}

// leave ends a follow; the last one of a run stops its reader.
func (fs *Feeds) leave(f *feed) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f.followers.Add(-1)
	if f.refs--; f.refs > 0 {
		return
	}
	delete(fs.by, f.key)
	f.mu.Lock()
	if f.stop != nil {
		f.stop()
	}
	f.mu.Unlock()
}

// feed is the one reader of a run's log in a Feeds, and the lines it read
// last.
type feed struct {
	key    feedKey
	o      FollowOptions
	window int
	refs   int // guarded by Feeds.mu

	followers atomic.Int64 // refs, for the feed's reader

	mu      sync.Mutex
	started bool
	stop    context.CancelFunc
	lines   []feedLine
	base    int64 // index of lines[0] among all the lines the feed read
	size    int   // bytes in lines
	anchor  int64 // seq of the line just before lines[0]; -1: unknown
	atStart bool  // lines[0] is the first line of the log
	file    os.FileInfo
	gen     int  // times the log was truncated or replaced under the feed
	done    bool // the result was read, or the writer is done: no line will come
	err     error
	changed chan struct{} // closed (and replaced) to wake the followers, and at the end
}

type feedLine struct {
	seq    int64
	result bool
	gen    int
	end    int64 // offset just after the line in the file of its generation
	line   []byte
}

// wakeCost is about what waking a follower for new lines costs: its
// goroutine, its write to its client, the client's read; 40 µs of CPU in
// BenchmarkLiveFanout on a loaded 2-CPU machine, where 100 followers woken
// for each line of 1000 a second took 1.4 ms of CPU a line, more than the
// machine had. A feed wakes its followers at most every followers ×
// wakeCost, so that however fast lines come, waking them takes about a
// CPU at most: one follower is woken for each line at once (50 µs), 100
// every 5 ms with all the lines since.
const wakeCost = 50 * time.Microsecond

// read is the feed's reader: it reads the log at each wake-up until the
// result, the writer's end, a read error or stop.
func (f *feed) read(ctx context.Context, t *Tail) {
	defer t.Close()
	var w *watchSub
	if f.o.Wake == nil {
		if w = watchRun(f.key.dir, f.key.run); w != nil {
			defer w.close()
		}
	}
	var kick <-chan struct{}
	if w != nil {
		kick = w.kick
	}
	poll, pace := time.NewTimer(f.o.Poll), time.NewTimer(time.Hour)
	defer poll.Stop()
	defer pace.Stop()
	var paced <-chan time.Time // pace.C while lines wait for their wake-up
	var woke time.Time
	check := true // look for the writer's end this round
	for {
		var wake <-chan struct{}
		if f.o.Wake != nil {
			wake = f.o.Wake() // taken before reading, so a write after the read wakes us
		}
		n, ended, err := f.round(t, check)
		if ended {
			f.end(t, err)
			return
		}
		if n > 0 && paced == nil {
			if d := time.Duration(f.followers.Load())*wakeCost - time.Since(woke); d > 0 {
				pace.Reset(d)
				paced = pace.C
			} else {
				f.wake()
				woke = time.Now()
			}
		}
		poll.Reset(f.o.Poll)
		select {
		case <-ctx.Done():
			return
		case <-paced:
			paced = nil
			f.wake()
			woke, check = time.Now(), false
		case <-wake:
			check = true
		case <-poll.C:
			check = true
		case <-kick:
			// Writes alone cannot end a run; anything else may have.
			check = w.take()&whyOther != 0 || !w.alive()
		}
	}
}

// round reads what the log gained since the last round (n lines). ended is
// true when no line will come: the result was read, the log could not be
// read (err), or, when check is set, the writer is done.
func (f *feed) round(t *Tail, check bool) (n int, ended bool, err error) {
	for {
		m, result, err := f.readLines(t)
		n += m
		if err != nil || result {
			return n, true, err
		}
		if m > 0 && !check {
			return n, false, nil
		}
		// Nothing new after a wake-up, or a look for the end: the log may
		// have been truncated or replaced.
		renewed, err := t.renewed()
		if err != nil {
			return n, true, err
		}
		if !renewed {
			break
		}
		f.renew(t)
	}
	if check && f.o.Ended() {
		// The writer may have appended its last lines between the read
		// and the check.
		m, _, err := f.readLines(t)
		return n + m, true, err
	}
	return n, false, nil
}

// readLines reads the complete lines the log holds past t and adds them;
// result is true when one was the result.
func (f *feed) readLines(t *Tail) (n int, result bool, err error) {
	var add []feedLine
	for {
		line, err := t.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.add(add)
			return len(add), false, err
		}
		seq, typ := LineSeq(line)
		add = append(add, feedLine{seq: seq, result: typ == "result", end: t.Offset(), line: bytes.Clone(line)})
		if typ == "result" {
			result = true
			break
		}
	}
	f.add(add)
	return len(add), result, nil
}

// add appends lines to the window and drops the oldest past its size.
func (f *feed) add(lines []feedLine) {
	if len(lines) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range lines {
		lines[i].gen = f.gen
		f.size += len(lines[i].line)
	}
	f.lines = append(f.lines, lines...)
	k := 0
	for f.size > f.window && k < len(f.lines)-1 {
		f.size -= len(f.lines[k].line)
		f.anchor = f.lines[k].seq
		k++
	}
	if k > 0 {
		clear(f.lines[:k]) // let the old lines go before the array does
		f.lines, f.base, f.atStart = f.lines[k:], f.base+int64(k), false
	}
}

// wake tells the followers waiting for lines that there are more.
func (f *feed) wake() {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.changed)
	f.changed = make(chan struct{})
}

// renew notes that the feed reads the log's path anew.
func (f *feed) renew(t *Tail) {
	fi, _ := t.f.Stat()
	f.mu.Lock()
	f.gen++
	f.file = fi
	f.mu.Unlock()
}

// end closes the log, then tells the followers that no line will come.
func (f *feed) end(t *Tail, err error) {
	t.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done, f.err = true, err
	close(f.changed)
}

// watch returns the channel closed when the feed next changes.
func (f *feed) watch() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

// at returns a copy of the line at index pos, when the feed holds it
// (ok); fell is true when it is no longer kept. A copy, one at a time:
// add clears the lines it drops, in place, while a follower may still be
// delivering the lines before them.
func (f *feed) at(pos int64) (l feedLine, ok, fell, done bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case pos < f.base:
		return feedLine{}, false, true, f.done, f.err
	case pos < f.base+int64(len(f.lines)):
		return f.lines[pos-f.base], true, false, f.done, f.err
	}
	return feedLine{}, false, false, f.done, f.err
}

// Where a follower that read the disk to its end stands against the feed.
type attachment int

const (
	attached attachment = iota // the feed holds the lines after its last one
	behind                     // the feed has not read that far yet
	ahead                      // the feed is past it: the disk holds more
)

// attach finds where the lines of a follower that read the disk to its
// end continue in the feed: after the line of its last seq, which the
// feed holds or reads next. The first follower to get there starts the
// feed with its Tail (took).
func (f *feed) attach(fl *follower) (pos int64, took bool, at attachment) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.started {
		f.started = true
		f.anchor, f.atStart = fl.last, !fl.readAny
		f.file, _ = fl.t.f.Stat()
		ctx, cancel := context.WithCancel(context.Background())
		f.stop = cancel
		go f.read(ctx, fl.t)
		return f.base, true, attached
	}
	if !fl.readAny {
		if f.atStart {
			return f.base, false, attached
		}
		return -1, false, ahead
	}
	if fl.last < 0 { // a line with no seq cannot be found again: the disk it is
		return -1, false, ahead
	}
	if fl.last == f.anchor {
		return f.base, false, attached
	}
	newest := f.anchor
	for i := len(f.lines) - 1; i >= 0; i-- {
		seq := f.lines[i].seq
		if seq == fl.last {
			return f.base + int64(i) + 1, false, attached
		}
		if seq >= 0 && newest == f.anchor {
			newest = seq
		}
	}
	if newest < fl.last && !f.done {
		return -1, false, behind
	}
	return -1, false, ahead
}

// resume opens the log for a follower that fell behind the window, where
// the last line it took ended when that is still the log's path.
func (f *feed) resume(fl *follower) (*Tail, error) {
	t, err := OpenTail(f.key.dir, f.key.run)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	file, gen := f.file, f.gen
	f.mu.Unlock()
	if fi, err := t.f.Stat(); err == nil && file != nil && fl.gen == gen && os.SameFile(fi, file) && fi.Size() >= fl.end {
		if _, err := t.f.Seek(fl.end, io.SeekStart); err == nil {
			t.offset = fl.end
			t.r.Reset(t.f)
		}
	}
	return t, nil
}

// follower is one Follow: it reads the disk (t) until it reaches the
// feed's lines, then the feed (from pos).
type follower struct {
	f  *feed
	t  *Tail // nil while it reads the feed
	o  FollowOptions
	fn func(seq int64, line []byte) error

	hi      int64 // the highest seq delivered (or skipped as After)
	pos     int64 // index in the feed of its next line
	last    int64 // seq of the last line read, -1 for none
	readAny bool
	gen     int   // the generation of the last line taken from the feed,
	end     int64 // and where it ends
}

func (fl *follower) follow(ctx context.Context) error {
	timer := time.NewTimer(fl.o.Poll)
	defer timer.Stop()
	for {
		changed := fl.f.watch() // taken before reading, so a change after the read wakes us
		var done, wait bool
		var err error
		if fl.t != nil {
			done, wait, err = fl.fromDisk()
		} else {
			done, wait, err = fl.fromFeed()
		}
		if done || err != nil {
			return err
		}
		if !wait {
			continue
		}
		if fl.o.CaughtUp != nil {
			if err := fl.o.CaughtUp(); err != nil {
				return err
			}
		}
		timer.Reset(fl.o.Poll)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-timer.C:
		}
	}
}

// deliver hands a line to fn unless its seq was delivered or skipped
// already; done is true once fn has had the result.
func (fl *follower) deliver(seq int64, result bool, line []byte) (done bool, err error) {
	fl.last, fl.readAny = seq, true
	if seq >= 0 {
		if seq <= fl.hi {
			return false, nil
		}
		fl.hi = seq
	}
	return result, fl.fn(seq, line)
}

// fromDisk reads the log to its end on the follower's own, then joins the
// feed where its lines go on.
func (fl *follower) fromDisk() (done, wait bool, err error) {
	n := 0
	for {
		line, err := fl.t.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return false, false, err
		}
		n++
		seq, typ := LineSeq(line)
		if done, err := fl.deliver(seq, typ == "result", line); done || err != nil {
			return done, false, err
		}
	}
	if renewed, err := fl.t.renewed(); renewed || err != nil {
		return false, false, err
	}
	pos, took, at := fl.f.attach(fl)
	switch at {
	case attached:
		if !took {
			fl.t.Close()
		}
		fl.t, fl.pos = nil, pos
		return false, false, nil
	case behind:
		return false, true, nil
	}
	fl.f.mu.Lock()
	ended := fl.f.done
	fl.f.mu.Unlock()
	return ended, n == 0, nil // ahead: read on while the disk has lines
}

// fromFeed delivers the lines the feed holds past the follower.
func (fl *follower) fromFeed() (done, wait bool, err error) {
	for n := 0; ; n++ {
		l, ok, fell, ended, ferr := fl.f.at(fl.pos)
		switch {
		case fell:
			fl.t, err = fl.f.resume(fl)
			return false, false, err
		case !ok && n > 0:
			return false, false, nil
		case !ok:
			return ended, !ended, ferr
		}
		fl.pos++
		fl.gen, fl.end = l.gen, l.end
		if done, err := fl.deliver(l.seq, l.result, l.line); done || err != nil {
			return done, false, err
		}
	}
}

// envelope reads {"v":1,"type":"T","run":"R","seq":N, at the start of
// line; ok is false for anything else, and for a type or run with an
// escape in it (harness writes none): only a JSON parser reads those.
func envelope(line []byte) (seq int64, typ string, ok bool) {
	const head = `{"v":1,"type":"`
	if !bytes.HasPrefix(line, []byte(head)) {
		return 0, "", false
	}
	rest := line[len(head):]
	i := bytes.IndexByte(rest, '"')
	if i < 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return 0, "", false
	}
	typ, rest = string(rest[:i]), rest[i+1:]
	if !bytes.HasPrefix(rest, []byte(`,"run":"`)) {
		return 0, "", false
	}
	rest = rest[len(`,"run":"`):]
	if i = bytes.IndexByte(rest, '"'); i < 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return 0, "", false
	}
	rest = rest[i+1:]
	if !bytes.HasPrefix(rest, []byte(`,"seq":`)) {
		return 0, "", false
	}
	rest = rest[len(`,"seq":`):]
	// At most 18 digits: every 18-digit number fits an int64, not every
	// 19-digit one; a longer seq is the JSON parser's.
	n := 0
	for n < len(rest) && n < 18 && rest[n] >= '0' && rest[n] <= '9' {
		seq = seq*10 + int64(rest[n]-'0')
		n++
	}
	if n == 0 || n == len(rest) || (rest[n] != ',' && rest[n] != '}') {
		return 0, "", false
	}
	return seq, typ, true
}
