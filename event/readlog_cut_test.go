package event

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// zeros reads as n zero bytes, holding none.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), z.n)]
	clear(p)
	z.n -= int64(len(p))
	return len(p), nil
}

// TestReadLogLongCutLine: a last line without its newline is cut however
// long it is: three lines, then 512 MiB of zeros (a log whose harness
// died, on a disk that kept its size) are the three lines and cut, read
// without holding the zeros. Over 4 MiB it was bufio.Scanner's "token too
// long", and export failed. A line over the cap that ends in a newline
// is still an error naming it.
func TestReadLogLongCutLine(t *testing.T) {
	data, err := os.ReadFile("../testdata/claude/tool.golden.ndjson")
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	head := strings.Join(lines[:3], "")

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	evs, cut, err := ReadLog(io.MultiReader(strings.NewReader(head), &zeros{512 << 20}))
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.True(t, cut)
	require.Len(t, evs, 3)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(32<<20), "bytes allocated reading the zeros")

	// ReadAll takes no cut: the line is an error there.
	_, err = ReadAll(io.MultiReader(strings.NewReader(head), &zeros{5 << 20}))
	require.ErrorIs(t, err, bufio.ErrTooLong)
	require.ErrorContains(t, err, "line 4: ")

	// Ended by a newline, the line is not cut: an error, whatever follows.
	for _, rest := range []string{"", lines[3]} {
		long := io.MultiReader(strings.NewReader(head), &zeros{5 << 20}, strings.NewReader("\n"+rest))
		evs, cut, err = ReadLog(long)
		require.ErrorIs(t, err, bufio.ErrTooLong)
		require.ErrorContains(t, err, "line 4: ")
		require.False(t, cut)
		require.Len(t, evs, 3)
	}

	// Up to the cap, a line is decoded as before: here, one that does not.
	evs, cut, err = ReadLog(strings.NewReader(head + strings.Repeat(" ", 4*MaxLineBytes-1) + "\n" + lines[3]))
	require.ErrorContains(t, err, "line 4: event: decode")
	require.False(t, cut)
	require.Len(t, evs, 3)
}

// scanLog is readAll as bufio.Scanner read it, under its 4 MiB cap: the
// reference for the lines it splits.
func scanLog(r io.Reader, cutOK bool) (evs []Event, cut bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4*MaxLineBytes)
	unterminated := false
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		n, tok, err := bufio.ScanLines(data, atEOF)
		unterminated = atEOF && n == len(data) && n > 0 && data[n-1] != '\n'
		return n, tok, err
	})
	for n := 1; sc.Scan(); n++ {
		ev, err := Decode(sc.Bytes())
		if errors.Is(err, ErrUnknownType) {
			continue
		}
		if err != nil {
			if cutOK && unterminated {
				return evs, true, nil
			}
			return evs, false, fmt.Errorf("line %d: %w", n, err)
		}
		evs = append(evs, ev)
	}
	return evs, false, sc.Err()
}

// FuzzReadLogSplitsAsScanner: under the cap, readAll splits and decodes
// lines as bufio.Scanner did (CRLF, empty lines, a last line without its
// newline), for ReadLog and ReadAll.
func FuzzReadLogSplitsAsScanner(f *testing.F) {
	data, err := os.ReadFile("../testdata/claude/tool.golden.ndjson")
	require.NoError(f, err)
	f.Add(data)
	f.Add(data[:len(data)-30])
	f.Add(bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")))
	f.Add(append(append([]byte{}, data...), '\n'))
	f.Add(append(append([]byte{}, data...), '\r'))
	f.Add([]byte("\n"))
	f.Add([]byte("\r"))
	f.Add([]byte("{\n{"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, cutOK := range []bool{false, true} {
			want, wantCut, wantErr := scanLog(bytes.NewReader(data), cutOK)
			got, gotCut, gotErr := readAll(iotestHalf{bytes.NewReader(data)}, cutOK)
			require.Equal(t, wantCut, gotCut)
			require.Equal(t, len(want), len(got))
			require.Equal(t, wantErr != nil, gotErr != nil, "%v / %v", wantErr, gotErr)
			if wantErr != nil {
				require.Equal(t, wantErr.Error(), gotErr.Error())
			}
			for i := range want {
				w, _ := want[i].MarshalJSON()
				g, _ := got[i].MarshalJSON()
				require.Equal(t, string(w), string(g))
			}
		}
	})
}

// iotestHalf reads at most half of what is asked (at least a byte), so
// that lines reach readAll in pieces.
type iotestHalf struct{ r io.Reader }

func (h iotestHalf) Read(p []byte) (int, error) {
	n, err := h.r.Read(p[:max(1, len(p)/2)])
	if errors.Is(err, io.EOF) && n > 0 {
		return n, nil
	}
	return n, err
}
