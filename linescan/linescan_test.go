package linescan

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

type got struct {
	line    string
	dropped int64
}

func scanAll(t *testing.T, in string, max int) []got {
	t.Helper()
	var out []got
	err := Scan(iotest.HalfReader(strings.NewReader(in)), max, func(l []byte, d int64) error {
		out = append(out, got{string(l), d})
		return nil
	})
	require.NoError(t, err)
	return out
}

func TestScan(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 200<<10)
	cases := []struct {
		name string
		in   string
		max  int
		want []got
	}{
		{"empty", "", 10, nil},
		{"lines", "a\nbb\n", 10, []got{{"a", 0}, {"bb", 0}}},
		{"no-trailing-newline", "a\nlast", 10, []got{{"a", 0}, {"last", 0}}},
		{"crlf", "a\r\nb\r\n", 10, []got{{"a", 0}, {"b", 0}}},
		{"blank-lines-kept", "\n\na\n", 10, []got{{"", 0}, {"", 0}, {"a", 0}}},
		{"cut-short", "0123456789abc\nok\n", 10, []got{{"0123456789", 3}, {"ok", 0}}},
		{"cut-beyond-buffer", big + "\nnext\n", 100 << 10, []got{{big[:100<<10], 100 << 10}, {"next", 0}}},
		{"long-under-cap", big + "\n", 1 << 20, []got{{big, 0}}},
		{"long-last-line-cut", big, 1000, []got{{big[:1000], int64(len(big) - 1000)}}},
		{"invalid-utf8", "\xff\xfe{\x00}\n", 10, []got{{"\xff\xfe{\x00}", 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, scanAll(t, c.in, c.max))
			// ScanBytes gives the same lines, each a view of its input.
			data := []byte(c.in)
			var out []got
			require.NoError(t, ScanBytes(data, c.max, func(l []byte, d int64) error {
				if len(l) > 0 {
					at := &l[0]
					require.True(t, within(data, at), "a line of ScanBytes is not a view of its input")
				}
				out = append(out, got{string(l), d})
				return nil
			}, nil))
			require.Equal(t, c.want, out)
		})
	}
}

// within reports whether p points into data.
func within(data []byte, p *byte) bool {
	for i := range data {
		if &data[i] == p {
			return true
		}
	}
	return false
}

func TestScanBytesProgress(t *testing.T) {
	t.Parallel()
	line := strings.Repeat("x", 1023) + "\n"
	data := []byte(strings.Repeat(line, 3<<10)) // 3 MiB
	var offs []int
	lines := 0
	err := ScanBytes(data, 0, func([]byte, int64) error { lines++; return nil }, func(off int) error {
		offs = append(offs, off)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 3<<10, lines)
	require.Equal(t, []int{1 << 20, 2 << 20, 3 << 20}, offs, "progress at each MiB of lines delivered")

	stop := errors.New("stop")
	lines = 0
	err = ScanBytes(data, 0, func([]byte, int64) error { lines++; return nil }, func(int) error { return stop })
	require.ErrorIs(t, err, stop)
	require.Equal(t, 1<<10, lines, "no line after progress failed")
}

func TestScanStopsOnCallbackError(t *testing.T) {
	t.Parallel()
	stop := bytes.ErrTooLarge
	n := 0
	err := Scan(strings.NewReader("a\nb\nc\n"), 0, func([]byte, int64) error { n++; return stop })
	require.ErrorIs(t, err, stop)
	require.Equal(t, 1, n)
}

func TestScanReadError(t *testing.T) {
	t.Parallel()
	err := Scan(iotest.ErrReader(iotest.ErrTimeout), 0, func([]byte, int64) error { return nil })
	require.ErrorIs(t, err, iotest.ErrTimeout)

	// What was read before the error is delivered, the cut line too.
	var got []string
	r := io.MultiReader(strings.NewReader("a\nhalf a li"), iotest.ErrReader(iotest.ErrTimeout))
	err = Scan(r, 0, func(l []byte, _ int64) error { got = append(got, string(l)); return nil })
	require.ErrorIs(t, err, iotest.ErrTimeout)
	require.Equal(t, []string{"a", "half a li"}, got)
}

// A line of a few MiB costs about its own size, not the cap: 60 open tool
// calls of 4 MB each once held 32 MB at a time, two 16 MiB buffers.
func TestScanLongLineCostsItsSize(t *testing.T) {
	line := strings.Repeat("z", 4_000_000)
	in := strings.NewReader(line + "\n" + line + "\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := 0
	require.NoError(t, Scan(in, 0, func(l []byte, d int64) error {
		require.Len(t, l, len(line))
		require.Zero(t, d)
		n++
		return nil
	}))
	runtime.ReadMemStats(&after)
	require.Equal(t, 2, n)
	allocated := after.TotalAlloc - before.TotalAlloc
	require.Less(t, allocated, uint64(2*2*len(line)), "two lines of %d bytes allocated %d bytes", len(line), allocated)
}

func BenchmarkScan(b *testing.B) {
	line := strings.Repeat("y", 300) + "\n"
	data := []byte(strings.Repeat(line, 10000))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Scan(bytes.NewReader(data), 0, func([]byte, int64) error { return nil })
	}
}

// scanBufio is Scan as it was, on a bufio.Reader of size bytes: the fuzz
// test holds Scan's own scanner to it.
func scanBufio(r io.Reader, max, size int, fn Func) error {
	br := bufio.NewReaderSize(r, size)
	var long []byte
	var dropped int64
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case err == nil || (!errors.Is(err, bufio.ErrBufferFull) && (len(chunk) > 0 || len(long) > 0 || dropped > 0)):
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
			if cap(long) > 1<<20 {
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

// stingy returns at most n bytes a read, then, after the data, err.
type stingy struct {
	data  []byte
	n     int
	empty int // reads that return nothing, before each that returns data
	err   error
	eager bool // err comes with the last data
	k     int
}

func (s *stingy) Read(p []byte) (int, error) {
	if s.k < s.empty {
		s.k++
		return 0, nil
	}
	s.k = 0
	if len(s.data) == 0 {
		return 0, s.err
	}
	n := copy(p[:min(len(p), s.n)], s.data)
	s.data = s.data[n:]
	if len(s.data) == 0 && s.eager {
		return n, s.err
	}
	return n, nil
}

func FuzzScanMatchesBufio(f *testing.F) {
	f.Add([]byte("a\nbb\r\n\nccc"), uint8(3), uint8(16), uint8(1), uint8(0), uint8(0), uint8(0))
	f.Add([]byte(strings.Repeat("x", 100)+"\n"+strings.Repeat("y", 40)+"\r\nz\n"), uint8(50), uint8(16), uint8(7), uint8(1), uint8(1), uint8(5))
	f.Add([]byte(strings.Repeat("0123456789\r", 9)), uint8(200), uint8(17), uint8(64), uint8(2), uint8(2), uint8(0))
	f.Add([]byte("\n\n\r\n"+strings.Repeat("q", 33)), uint8(1), uint8(16), uint8(3), uint8(0), uint8(1), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, max, size, chunk, empty, errKind, stopAt uint8) {
		m, sz := int(max)+1, int(size%64)+16 // bufio's smallest buffer is 16 bytes
		errs := []error{io.EOF, iotest.ErrTimeout, io.ErrUnexpectedEOF}
		reader := func() io.Reader {
			return &stingy{data: data, n: int(chunk) + 1, empty: int(empty % 3), err: errs[int(errKind)%len(errs)], eager: errKind&8 != 0}
		}
		stop := errors.New("stop")
		type call struct {
			line    string
			dropped int64
		}
		run := func(scan func(io.Reader, Func) error) ([]call, error) {
			var calls []call
			err := scan(reader(), func(l []byte, d int64) error {
				calls = append(calls, call{string(l), d})
				if stopAt > 0 && len(calls) == int(stopAt) {
					return stop
				}
				return nil
			})
			return calls, err
		}
		want, wantErr := run(func(r io.Reader, fn Func) error { return scanBufio(r, m, sz, fn) })
		for _, grow := range []bool{false, true} {
			got, gotErr := run(func(r io.Reader, fn Func) error {
				s := scanner{r: r, max: m, fn: fn, buf: make([]byte, sz), grow: grow}
				return s.scan()
			})
			require.Equal(t, want, got, "grow=%v", grow)
			require.Equal(t, wantErr, gotErr, "grow=%v", grow)
		}
		if errs[int(errKind)%len(errs)] == io.EOF {
			// The same input whole in memory, as a mapped file is.
			got, gotErr := run(func(_ io.Reader, fn Func) error { return ScanBytes(data, m, fn, nil) })
			require.Equal(t, want, got, "ScanBytes")
			require.Equal(t, wantErr, gotErr, "ScanBytes")
		}
	})
}

// sizes is an endless stream of 100-byte lines that records the size of
// each read, filling it whole, or with at most most bytes when most > 0.
type sizes struct {
	most  int
	reads []int
	left  int // reads before EOF
}

func (s *sizes) Read(p []byte) (int, error) {
	if s.left == 0 {
		return 0, io.EOF
	}
	s.left--
	s.reads = append(s.reads, len(p))
	n := len(p)
	if s.most > 0 {
		n = min(n, s.most)
	}
	for i := range n {
		p[i] = 'x'
		if i%100 == 99 {
			p[i] = '\n'
		}
	}
	return n, nil
}

// TestScanGrowingReadsAFloodInLargeReads: ScanGrowing's reads grow to
// LargeBufSize once growAfter of them came back full, and never when
// the reads come back short; Scan's never grow.
func TestScanGrowingReadsAFloodInLargeReads(t *testing.T) {
	t.Parallel()
	count := func(l []byte, _ int64) error { return nil }
	flood := &sizes{left: 20}
	require.NoError(t, ScanGrowing(flood, 0, count))
	require.Equal(t, bufSize, flood.reads[0])
	require.Greater(t, flood.reads[growAfter], LargeBufSize-100, "%v", flood.reads)
	require.Greater(t, flood.reads[len(flood.reads)-1], LargeBufSize-100)

	trickle := &sizes{left: 20, most: 1000}
	require.NoError(t, ScanGrowing(trickle, 0, count))
	require.LessOrEqual(t, slices.Max(trickle.reads), bufSize, "%v", trickle.reads)

	plain := &sizes{left: 20}
	require.NoError(t, Scan(plain, 0, count))
	require.LessOrEqual(t, slices.Max(plain.reads), bufSize)
}

func TestScanNoProgress(t *testing.T) {
	t.Parallel()
	var got []string
	err := Scan(io.MultiReader(strings.NewReader("a\nb"), nothing{}), 0, func(l []byte, _ int64) error {
		got = append(got, string(l))
		return nil
	})
	require.ErrorIs(t, err, io.ErrNoProgress)
	require.Equal(t, []string{"a", "b"}, got)
}

// nothing is a reader that never returns anything, nor an error.
type nothing struct{}

func (nothing) Read([]byte) (int, error) { return 0, nil }
