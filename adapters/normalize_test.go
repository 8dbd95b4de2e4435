package adapters_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// echoParser turns each line into a text delta of the line, calls a line
// starting with "?" unknown, and flushes a message counting the lines.
type echoParser struct{ n int }

func (p *echoParser) Parse(dst []event.Body, line []byte) ([]event.Body, bool) {
	p.n++
	if bytes.HasPrefix(line, []byte("?")) {
		return dst, false
	}
	return append(dst, &event.TextDelta{Text: string(line)}), true
}

func (p *echoParser) Flush(dst []event.Body) []event.Body {
	return append(dst, &event.Message{Role: event.RoleAssistant, Text: fmt.Sprint(p.n, " lines")})
}

// echoStream is the stream both sides of a comparison write into.
func echoStream(t *testing.T, raw bool, out *bytes.Buffer) *event.Stream {
	enc := event.NewEncoder(out)
	return event.NewStream(event.StreamConfig{Run: adaptertest.RunID, Start: event.SessionStart{Agent: "echo"},
		Now: func() time.Time { return time.UnixMilli(1) }, Raw: raw,
		Sink: func(ev event.Event) { require.NoError(t, enc.Encode(ev)) }})
}

func normalizeTo(t *testing.T, r io.Reader, raw bool, o adapters.NormalizeOptions) (string, error) {
	return normalizeWith(t, &echoParser{}, r, raw, o)
}

func normalizeWith(t *testing.T, p adapters.Parser, r io.Reader, raw bool, o adapters.NormalizeOptions) (string, error) {
	t.Helper()
	var out bytes.Buffer
	s := echoStream(t, raw, &out)
	err := adapters.Normalize(r, p, s, o)
	s.Finish(event.Outcome{NoProcess: true})
	return out.String(), err
}

// lineByLine is what Normalize must give: each line to the Stream in turn.
func lineByLine(t *testing.T, in string, raw bool, maxLine int) string {
	t.Helper()
	var out bytes.Buffer
	s := echoStream(t, raw, &out)
	p := &echoParser{}
	lines := strings.Split(in, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for _, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if len(l) > maxLine {
			require.NoError(t, s.Emit(adapters.LineTruncated(maxLine, int64(len(l)-maxLine))))
			l = l[:maxLine]
		}
		bodies, known := p.Parse(nil, []byte(l))
		require.NoError(t, s.Line(event.StreamStdout, []byte(l), !known, bodies))
	}
	require.NoError(t, s.Emit(p.Flush(nil)...))
	s.Finish(event.Outcome{NoProcess: true})
	return out.String()
}

func TestNormalizeGivesTheStreamEachLineInOrder(t *testing.T) {
	t.Parallel()
	// Enough lines to fill several batches, some long enough to end a
	// batch by size, unknown lines, CRLF, and one line over the cap.
	var b strings.Builder
	for i := range 5000 {
		switch {
		case i%997 == 0:
			b.WriteString(strings.Repeat("L", 300<<10) + "\n")
		case i%13 == 0:
			b.WriteString("?unknown " + fmt.Sprint(i) + "\n")
		case i%7 == 0:
			b.WriteString("crlf " + fmt.Sprint(i) + "\r\n")
		default:
			b.WriteString("line " + fmt.Sprint(i) + "\n")
		}
	}
	b.WriteString("no final newline")
	in := b.String()
	const maxLine = 200 << 10
	for _, raw := range []bool{false, true} {
		want := lineByLine(t, in, raw, maxLine)
		readers := map[string]func() io.Reader{
			"whole":    func() io.Reader { return strings.NewReader(in) },
			"half":     func() io.Reader { return iotest.HalfReader(strings.NewReader(in)) },
			"one-byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(in[:64<<10])) },
		}
		for name, r := range readers {
			for _, regular := range []bool{false, true} {
				t.Run(fmt.Sprint(name, " raw=", raw, " regular=", regular), func(t *testing.T) {
					exp := want
					if name == "one-byte" {
						exp = lineByLine(t, in[:64<<10], raw, maxLine)
					}
					got, err := normalizeWith(t, &echoParser{}, r(), raw, adapters.NormalizeOptions{MaxLine: maxLine, Regular: regular})
					require.NoError(t, err)
					require.Equal(t, exp, got)
					require.NoError(t, event.CheckNDJSON([]byte(got)))
				})
			}
		}
	}
}

// TestNormalizeFillsBatchesFromARegularFile: from a regular file a batch
// ends when full, not before each read, however short the reads.
func TestNormalizeFillsBatchesFromARegularFile(t *testing.T) {
	t.Parallel()
	in := strings.Repeat("short line\n", 10000)
	for regular, want := range map[bool]func(int) bool{
		true:  func(n int) bool { return n == 3 },  // 4096 lines a batch
		false: func(n int) bool { return n > 100 }, // a batch before each read of a byte
	} {
		var batches int
		s := event.NewStream(event.StreamConfig{Run: adaptertest.RunID, Start: event.SessionStart{Agent: "echo"}, Sink: func(event.Event) {}})
		r := iotest.OneByteReader(strings.NewReader(in))
		require.NoError(t, adapters.Normalize(r, &echoParser{}, s, adapters.NormalizeOptions{Regular: regular, Batch: func() { batches++ }}))
		require.True(t, want(batches), "regular=%v: %d batches", regular, batches)
	}
}

func TestNormalizeKeepsWhatWasReadBeforeAnError(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	r := io.MultiReader(strings.NewReader("a\nb\n?c\npartial"), iotest.ErrReader(boom))
	got, err := normalizeTo(t, r, false, adapters.NormalizeOptions{})
	require.ErrorIs(t, err, boom)
	require.Equal(t, lineByLine(t, "a\nb\n?c\npartial\n", false, 1<<20), got, "every line read, the cut one too, and the flush")
}

// TestNormalizeHoldsNothingBackOnALivePipe: each line's events reach the
// Stream, and Idle is called, before the next line is written.
func TestNormalizeHoldsNothingBackOnALivePipe(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	seen := make(chan string, 10)
	idle := make(chan struct{}, 10)
	s := event.NewStream(event.StreamConfig{Run: adaptertest.RunID, Start: event.SessionStart{Agent: "echo"}, Sink: func(ev event.Event) {
		if d, ok := ev.Body.(*event.TextDelta); ok {
			seen <- d.Text
		}
	}})
	var batches int
	done := make(chan error, 1)
	go func() {
		done <- adapters.Normalize(pr, &echoParser{}, s, adapters.NormalizeOptions{
			Batch: func() { batches++ },
			Idle:  func() { idle <- struct{}{} },
		})
	}()
	for i := range 3 {
		line := fmt.Sprint("live ", i)
		_, err := io.WriteString(pw, line+"\n")
		require.NoError(t, err)
		select {
		case got := <-seen:
			require.Equal(t, line, got)
		case <-time.After(10 * time.Second):
			t.Fatalf("line %d was held back", i)
		}
		select {
		case <-idle:
		case <-time.After(10 * time.Second):
			t.Fatalf("Idle was not called after line %d", i)
		}
	}
	require.NoError(t, pw.Close())
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Normalize did not return at the end of input")
	}
	require.Equal(t, 3, batches, "one batch per line read alone")
}

// TestNormalizeConcurrentRuns: each Normalize has its own goroutine and
// state; many at once share nothing (run under -race).
func TestNormalizeConcurrentRuns(t *testing.T) {
	t.Parallel()
	in := strings.Repeat("x\n?y\n", 3000)
	want := map[bool]string{false: lineByLine(t, in, false, 1<<20), true: lineByLine(t, in, true, 1<<20)}
	var wg sync.WaitGroup
	for i := range 8 { // with the lines kept (raw) and without
		wg.Go(func() {
			got, err := normalizeWith(t, &echoParser{}, strings.NewReader(in), i%2 == 1, adapters.NormalizeOptions{})
			require.NoError(t, err)
			require.Equal(t, want[i%2 == 1], got)
		})
	}
	wg.Wait()
}

// countingEcho is echoParser counting the lines it parsed; allRead is
// closed at the line numbered all.
type countingEcho struct {
	echoParser
	read    atomic.Int64
	all     int64
	allRead chan struct{}
}

func (p *countingEcho) Parse(dst []event.Body, line []byte) ([]event.Body, bool) {
	if p.read.Add(1) == p.all {
		close(p.allRead)
	}
	return p.echoParser.Parse(dst, line)
}

// TestNormalizeBoundsTheLinesAhead: while the Stream's sink is held up,
// the reader goes on only until the batches handed on hold 2 MiB of
// parsed lines (their bodies hold them: the lines themselves are not
// kept, the stream is not raw), however many batches it may make: long
// lines (a batch each) are not held a batch count over. Not parallel: it
// sets Normalize's hook.
func TestNormalizeBoundsTheLinesAhead(t *testing.T) {
	const lineLen, lines = 2 << 20, 16 // fewer lines than batches
	in := strings.Repeat(strings.Repeat("x", lineLen-1)+"\n", lines)
	p := &countingEcho{all: lines, allRead: make(chan struct{})}
	waiting := make(chan int64, 1) // the lines read when the reader first waits
	defer adapters.SetWaitingForBatch(func() {
		select {
		case waiting <- p.read.Load():
		default:
		}
	})()
	release := make(chan struct{})
	s := event.NewStream(event.StreamConfig{Run: adaptertest.RunID, Start: event.SessionStart{Agent: "echo"},
		Sink: func(event.Event) { <-release }})
	done := make(chan error, 1)
	go func() {
		done <- adapters.Normalize(strings.NewReader(in), p, s, adapters.NormalizeOptions{Regular: true})
	}()
	// The reader either waits for a batch back, or reads every line while
	// the sink is held.
	var read int64
	select {
	case read = <-waiting:
	case <-p.allRead:
		read = lines
	}
	close(release)
	require.NoError(t, <-done)
	require.Equal(t, int64(lines), p.read.Load())
	require.LessOrEqual(t, read, int64(2<<20/lineLen+1), "lines read while the sink was held")
}
