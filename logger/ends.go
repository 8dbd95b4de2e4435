package logger

import (
	"bytes"
	"fmt"
	"io"
)

// Ends are the first and the last lines of a run's event log: what a
// reader that wants a finished run's session_start and result, and not
// the events between, needs of a log of any size.
type Ends struct {
	// First is the first line, without its newline; nil when the log has
	// no newline, or its first line is longer than the window ReadEnds
	// was given.
	First []byte
	// Last is the last line, without its newline; nil when the log does
	// not end with a newline (an unfinished line: a writer is at it, or
	// died in it), or its last line is longer than the window. A log of
	// one line has it as both.
	Last []byte
	// Size is the log's size when it was read: where a Tail that read its
	// lines would be (OpenTailAt), when Last is set.
	Size int64
}

// endsProbe is the window ReadEnds tries first: a result or a
// session_start line is far shorter, most of the time.
const endsProbe = 16 << 10

// ReadEnds reads the first and the last lines of run id's event log in
// dir (an id, not a prefix), reading at most window+2 bytes at each end of
// the file whatever its size: a line longer than window is not returned.
// A log that is not a regular file is refused (ErrNotRegular), as
// OpenFile does. The file may grow while it is read: the lines are those
// of the size it had when opened.
func ReadEnds(dir, id string, window int) (Ends, error) { return readEnds(dir, id, window, true) }

// ReadLast is ReadEnds without the first line (First is nil), for a
// reader that wants only the result: it reads nothing of the log's head,
// which may take up to window bytes to find no newline in.
func ReadLast(dir, id string, window int) (Ends, error) { return readEnds(dir, id, window, false) }

// readEnds is ReadEnds, reading the first line only when first is set.
func readEnds(dir, id string, window int, first bool) (Ends, error) {
	f, err := OpenFile(dir, id, ExtEvents)
	if err != nil {
		return Ends{}, fmt.Errorf("logger: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Ends{}, fmt.Errorf("logger: %w", err)
	}
	e := Ends{Size: fi.Size()}
	var buf []byte
	if first {
		for _, w := range windows(window) {
			n := min(int64(w)+1, e.Size)
			if buf, err = readAt(f, buf, n, 0); err != nil {
				return Ends{}, err
			}
			if i := bytes.IndexByte(buf, '\n'); i >= 0 {
				e.First = bytes.Clone(buf[:i])
				break
			}
			if n == e.Size {
				break // no newline in the log
			}
		}
	}
	for _, w := range windows(window) {
		// The line, its newline, and the newline before it.
		n := min(int64(w)+2, e.Size)
		if buf, err = readAt(f, buf, n, e.Size-n); err != nil {
			return Ends{}, err
		}
		if n == 0 || buf[n-1] != '\n' {
			break // an unfinished last line
		}
		i := bytes.LastIndexByte(buf[:n-1], '\n')
		if i < 0 && n < e.Size {
			continue // the line starts before what was read
		}
		if line := buf[i+1 : n-1]; len(line) <= w {
			e.Last = bytes.Clone(line)
		}
		break
	}
	return e, nil
}

// windows are the windows ReadEnds tries, the probe first.
func windows(window int) []int {
	if window <= endsProbe {
		return []int{max(window, 0)}
	}
	return []int{endsProbe, window}
}

// readAt reads n bytes of f at off into buf (grown as needed); fewer (a
// log truncated while it is read) is io.ErrUnexpectedEOF.
func readAt(f io.ReaderAt, buf []byte, n, off int64) ([]byte, error) {
	if int64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if k, err := f.ReadAt(buf, off); int64(k) < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("logger: %w", err)
	}
	return buf, nil
}
