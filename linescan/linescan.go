// Package linescan reads newline-delimited lines of any size with a cap: a
// line longer than the cap is cut, the cut is reported, and reading goes on
// with the next line. It never fails on content (invalid UTF-8, NUL bytes,
// a last line without a newline) and its memory is bounded by the cap.
package linescan

import (
	"bufio"
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
// returns nil at EOF, or the first read error or error from fn.
func Scan(r io.Reader, max int, fn Func) error {
	if max <= 0 {
		max = DefaultMax
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // assembles a line longer than the reader's buffer
	var dropped int64
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case err == nil || (!errors.Is(err, bufio.ErrBufferFull) && (len(chunk) > 0 || len(long) > 0 || dropped > 0)):
			// A line, or what was read of the last one before the end of
			// input or a read error: nothing read is lost.
			line := chunk
			if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
				line = chunk[:len(chunk)-1]
			}
			if long != nil || dropped > 0 {
				long, dropped = appendCapped(long, line, max, dropped)
				line = long
			} else if len(line) > max {
				line, dropped = line[:max], int64(len(line)-max)
			}
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			if ferr := fn(line, dropped); ferr != nil {
				return ferr
			}
			long, dropped = long[:0], 0
			if cap(long) > 1<<20 { // don't pin a huge line's memory
				long = nil
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
		case errors.Is(err, bufio.ErrBufferFull):
			if long == nil {
				long = make([]byte, 0, 2*len(chunk))
			}
			long, dropped = appendCapped(long, chunk, max, dropped)
		case errors.Is(err, io.EOF):
			return nil
		default:
			return err
		}
	}
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
