// Package linescan reads newline-delimited lines of any size with a cap: a
// line longer than the cap is cut, the cut is reported, and reading goes on
// with the next line. It never fails on content (invalid UTF-8, NUL bytes,
// a last line without a newline) and its memory is bounded by the cap.
package linescan

import (
	"bytes"
	"errors"
	"io"
)

// DefaultMax is the default line cap: 16 MiB.
const DefaultMax = 16 << 20

// Func receives each line without its newline (nor a trailing '\r'), valid
// only during the call. dropped is the number of bytes cut from the line's
// end because it was longer than the cap; 0 for most lines. A non-nil error
// stops the scan and is returned by Scan.
type Func func(line []byte, dropped int64) error

// Scan reads r to EOF, calling fn for each line. A final line without a
// newline is still delivered, also when a read error cuts it short. It
// returns nil at EOF, or the first read error or error from fn. It reads r
// only when every line read so far has been delivered.
func Scan(r io.Reader, max int, fn Func) error {
	if max <= 0 {
		max = DefaultMax
	}
	s := scanner{r: r, max: max, fn: fn, buf: make([]byte, bufSize)}
	return s.scan()
}

// ScanBytes is Scan over data, the whole input already in memory (a file
// mapped into it): fn gets views of data, not copies, so a line stays
// valid after the call for as long as data does (a line cut to the cap
// too). Every progressStep bytes of lines delivered it calls progress
// with the offset reached, if set; an error of progress stops the scan
// and is returned.
func ScanBytes(data []byte, max int, fn Func, progress func(off int) error) error {
	if max <= 0 {
		max = DefaultMax
	}
	s := scanner{max: max, fn: fn, buf: data, end: len(data), err: io.EOF}
	if progress != nil {
		s.progress, s.nextProgress = progress, progressStep
	}
	return s.scan()
}

// progressStep is how often ScanBytes reports its progress, in bytes.
const progressStep = 1 << 20

// ScanGrowing is Scan for a stream that may flood, such as an agent's
// stdout: once growAfter reads in a row have filled its buffer, the
// buffer grows to LargeBufSize for the rest of the stream, so that a
// flood is read in fewer, larger reads. Each read of a full pipe wakes
// its writer: with the pipe widened to a MiB as well (the process
// package does), a 1 GiB flood through harness run took 2.45 -> 2.12 s
// of CPU with the session log and 1.70 -> 1.66 s with --no-log (medians
// of 6 interleaved runs, the agent's CPU included); reads of 256 or 512
// KiB gained less. A stream that never fills a read keeps the small
// buffer.
func ScanGrowing(r io.Reader, max int, fn Func) error {
	if max <= 0 {
		max = DefaultMax
	}
	s := scanner{r: r, max: max, fn: fn, buf: make([]byte, bufSize), grow: true}
	return s.scan()
}

// bufSize is the size of a Scan's buffer, and of its reads.
const bufSize = 64 << 10

// LargeBufSize is what a ScanGrowing's buffer grows to, after growAfter
// full reads in a row: also the size the process package gives the pipe
// it reads, so that one read can empty it.
const LargeBufSize = 1 << 20

const growAfter = 4

// maxEmptyReads is how many reads in a row may return nothing before
// Scan gives up with io.ErrNoProgress (as bufio does).
const maxEmptyReads = 100

// scanner is one Scan. It finds the lines in its buffer itself, where a
// bufio.Reader's ReadSlice per line, and the checks around it, cost 60 to
// 90 instructions a line more (callgrind: 0.8 % of a harness parse of
// codex's short lines; BenchmarkScan).
type scanner struct {
	r   io.Reader
	max int
	fn  Func
	buf []byte
	// buf[start:end] is read and not yet delivered; buf[start:scanned]
	// holds no newline.
	start, scanned, end int
	err                 error  // of the last read, once there was one
	long                []byte // assembles a line longer than buf
	dropped             int64  // cut from the line being assembled
	// grow: the buffer grows (ScanGrowing) once fullReads reads in a
	// row have filled it.
	grow      bool
	fullReads int
	// progress is ScanBytes's, called when start passes nextProgress.
	progress     func(off int) error
	nextProgress int
}

func (s *scanner) scan() error {
	for {
		// Deliver every line read before reading again.
		for {
			i := bytes.IndexByte(s.buf[s.scanned:s.end], '\n')
			if i < 0 {
				break
			}
			nl := s.scanned + i
			line := s.buf[s.start:nl]
			s.start, s.scanned = nl+1, nl+1
			if err := s.deliver(line); err != nil {
				return err
			}
			if s.progress != nil && s.start >= s.nextProgress {
				s.nextProgress = s.start + progressStep
				if err := s.progress(s.start); err != nil {
					return err
				}
			}
		}
		s.scanned = s.end
		if s.err != nil {
			// What was read of the last line before the end of input
			// or a read error: nothing read is lost.
			if rest := s.buf[s.start:s.end]; len(rest) > 0 || len(s.long) > 0 || s.dropped > 0 {
				if err := s.deliver(rest); err != nil {
					return err
				}
			}
			if errors.Is(s.err, io.EOF) {
				return nil
			}
			return s.err
		}
		if s.end-s.start == len(s.buf) {
			// The buffer holds part of a longer line.
			if s.long == nil {
				s.long = make([]byte, 0, 2*len(s.buf))
			}
			s.long, s.dropped = appendCapped(s.long, s.buf, s.max, s.dropped)
			s.start, s.scanned, s.end = 0, 0, 0
		}
		s.read()
	}
}

// read reads more after what the buffer holds, moving that to its start.
func (s *scanner) read() {
	if s.start > 0 {
		n := copy(s.buf, s.buf[s.start:s.end])
		s.start, s.scanned, s.end = 0, n, n
	}
	if s.grow && s.fullReads >= growAfter {
		s.grow = false
		s.buf = append(make([]byte, 0, LargeBufSize), s.buf[:s.end]...)[:LargeBufSize]
	}
	for range maxEmptyReads {
		n, err := s.r.Read(s.buf[s.end:])
		if s.grow {
			if s.end+n == len(s.buf) {
				s.fullReads++
			} else {
				s.fullReads = 0
			}
		}
		s.end += n
		if err != nil {
			s.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	s.err = io.ErrNoProgress
}

// deliver calls fn with line, the end of a longer one when one is being
// assembled, cut to the cap and without a trailing '\r'.
func (s *scanner) deliver(line []byte) error {
	long, dropped := len(s.long) > 0 || s.dropped > 0, s.dropped
	if long {
		s.long, dropped = appendCapped(s.long, line, s.max, dropped)
		line = s.long
	} else if len(line) > s.max {
		line, dropped = line[:s.max], int64(len(line)-s.max)
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	err := s.fn(line, dropped)
	if long {
		s.long, s.dropped = s.long[:0], 0
		if cap(s.long) > 1<<20 { // don't pin a huge line's memory
			s.long = nil
		}
	}
	return err
}

func appendCapped(dst, chunk []byte, max int, dropped int64) ([]byte, int64) {
	room := max - len(dst)
	if room <= 0 {
		return dst, dropped + int64(len(chunk))
	}
	if len(chunk) > room {
		dropped += int64(len(chunk) - room)
		chunk = chunk[:room]
	}
	// Grow in one step to 1 MiB, then fourfold: append's small steps
	// would allocate several times the line on the way to a huge one, and
	// going straight to the cap made every line of a few MiB cost the
	// whole cap (60 lines of 4 MB held 32 MB at once).
	if need := len(dst) + len(chunk); need > cap(dst) {
		c := 1 << 20
		for c < need {
			c *= 4
		}
		grown := make([]byte, len(dst), min(max, c))
		copy(grown, dst)
		dst = grown
	}
	return append(dst, chunk...), dropped
}
