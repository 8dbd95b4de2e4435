package logger

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/tidwall/gjson"
)

// WithEventHook sets a function called with each event line (redacted,
// with its newline) right after it reached the disk (with
// WithBufferedEvents, at Flush), in the order the lines were written. It runs under the session's lock: it must not block, and the
// slice is only valid during the call. A live view uses it to learn at
// once that the log grew.
func WithEventHook(fn func(line []byte)) Option { return func(s *Session) { s.onEvent = fn } }

// Tail reads the complete lines of a run's event log while another
// process (or goroutine) may still be appending to it. A line is only
// returned once its newline is on the disk, so a reader never sees half
// a line; the bytes of an unfinished last line are kept for the next call.
// A Tail is not safe for concurrent use.
type Tail struct {
	f       *os.File
	r       *bufio.Reader
	partial []byte
	line    []byte
	offset  int64 // bytes of complete lines returned so far
}

// OpenTail opens the event log of run (an id, not a prefix) in dir.
func OpenTail(dir, run string) (*Tail, error) { return OpenTailAt(dir, run, 0) }

// OpenTailAt opens the event log of run in dir at offset, which must be the
// start of a line (an Offset a Tail returned).
func OpenTailAt(dir, run string, offset int64) (*Tail, error) {
	if err := validRunID(run); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, run+ExtEvents))
	if err != nil {
		return nil, fmt.Errorf("logger: %w", err)
	}
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			f.Close()
			return nil, fmt.Errorf("logger: %w", err)
		}
	}
	return &Tail{f: f, r: bufio.NewReaderSize(f, 64<<10), offset: offset}, nil
}

// Next returns the next complete line, without its newline, or io.EOF when
// the file holds no further complete line yet. The slice is valid until
// the next call.
func (t *Tail) Next() ([]byte, error) {
	chunk, err := t.r.ReadSlice('\n')
	for errors.Is(err, bufio.ErrBufferFull) {
		t.partial = append(t.partial, chunk...)
		chunk, err = t.r.ReadSlice('\n')
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			t.partial = append(t.partial, chunk...)
			return nil, io.EOF
		}
		return nil, fmt.Errorf("logger: %w", err)
	}
	line := chunk
	if len(t.partial) > 0 {
		t.line = append(append(t.line[:0], t.partial...), chunk...)
		t.partial = t.partial[:0]
		line = t.line
	}
	t.offset += int64(len(line))
	return line[:len(line)-1], nil
}

// Offset is the number of bytes of the complete lines returned so far.
func (t *Tail) Offset() int64 { return t.offset }

// Close closes the file.
func (t *Tail) Close() error { return t.f.Close() }

// LineSeq returns the seq and type of an event line; seq is -1 when the
// line has none. Lines harness wrote start with the envelope in its order
// (v, type, run, seq), read without a JSON parser; any other line is
// parsed.
func LineSeq(line []byte) (seq int64, typ string) {
	if seq, typ, ok := envelope(line); ok {
		return seq, typ
	}
	res := gjson.GetManyBytes(line, "seq", "type")
	seq = -1
	if res[0].Type == gjson.Number {
		seq = res[0].Int()
	}
	return seq, res[1].Str
}

// FollowOptions tune Follow. The zero value polls the disk every 100 ms
// and ends when the run's meta says it is no longer running.
type FollowOptions struct {
	// After skips the lines whose seq is at most After (0: from the start).
	After int64
	// Wake, when set, returns a channel closed when the log may have grown
	// (a session hook of the writer); the disk is still polled, slower.
	Wake func() <-chan struct{}
	// Poll is how often the disk is read when nothing wakes the reader.
	Poll time.Duration
	// Ended reports whether the writer is done; by default, whether the
	// run's meta no longer says running, or its harness process is gone
	// (StatusLost). Follow returns when it is and no
	// complete line is left.
	Ended func() bool
	// CaughtUp, when set, is called each time every complete line on the
	// disk has been delivered, before Follow waits for more: a writer
	// flushes what it buffered there. An error ends Follow with it.
	CaughtUp func() error
}

// Follow calls fn with each line (without its newline) of run's event log
// whose seq is after o.After: those already on the disk first, then each
// new one as the writer appends it, until fn has been given the result
// event, or the writer is done and no line is left (a harness that died
// before its result), or ctx ends (its error is returned), or fn fails
// (its error is returned). Lines are delivered whole and in order.
func Follow(ctx context.Context, dir, run string, o FollowOptions, fn func(seq int64, line []byte) error) error {
	t, err := OpenTail(dir, run)
	if err != nil {
		return err
	}
	defer t.Close()
	if o.Poll <= 0 {
		o.Poll = 100 * time.Millisecond
	}
	if o.Ended == nil {
		o.Ended = func() bool { return loadMeta(dir, run).Status != StatusRunning }
	}
	var timer *time.Timer
	for {
		var wake <-chan struct{}
		if o.Wake != nil {
			wake = o.Wake() // taken before reading, so a write after the read wakes us
		}
		for {
			line, err := t.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			seq, typ := LineSeq(line)
			if seq >= 0 && seq <= o.After {
				continue
			}
			if err := fn(seq, line); err != nil {
				return err
			}
			if typ == "result" {
				return nil
			}
		}
		if o.Ended() {
			// The writer may have appended its last lines between the read
			// and the check: read once more before ending.
			if line, err := t.Next(); err == nil {
				seq, typ := LineSeq(line)
				if seq < 0 || seq > o.After {
					if err := fn(seq, line); err != nil {
						return err
					}
				}
				if typ == "result" {
					return nil
				}
				continue
			}
			return nil
		}
		if o.CaughtUp != nil {
			if err := o.CaughtUp(); err != nil {
				return err
			}
		}
		if timer == nil {
			timer = time.NewTimer(o.Poll)
			defer timer.Stop()
		} else {
			timer.Reset(o.Poll)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		case <-timer.C:
		}
	}
}

// envelope reads {"v":1,"type":"T","run":"R","seq":N, at the start of
// line; ok is false for anything else.
func envelope(line []byte) (seq int64, typ string, ok bool) {
	const head = `{"v":1,"type":"`
	if !bytes.HasPrefix(line, []byte(head)) {
		return 0, "", false
	}
	rest := line[len(head):]
	i := bytes.IndexByte(rest, '"')
	if i < 0 {
		return 0, "", false
	}
	typ, rest = string(rest[:i]), rest[i+1:]
	if !bytes.HasPrefix(rest, []byte(`,"run":"`)) {
		return 0, "", false
	}
	rest = rest[len(`,"run":"`):]
	if i = bytes.IndexByte(rest, '"'); i < 0 {
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
