package linescan

import (
	"bytes"
	"io"
	"runtime"
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
		})
	}
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
