package logger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// TestFollowTornWrites: a log appended to in pieces (a line split across
// writes, as a crash or a slow disk leaves it) is read line by line,
// never half a line, until the result; what is read is what was written.
func TestFollowTornWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run_x"+ExtEvents)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	defer f.Close()
	var want strings.Builder
	for i := 1; i <= 300; i++ {
		typ := "text_delta"
		if i == 300 {
			typ = "result"
		}
		fmt.Fprintf(&want, `{"v":1,"type":%q,"run":"run_x","seq":%d,"text":"%s"}`+"\n", typ, i, strings.Repeat("é", i%37))
	}
	data := want.String()
	go func() {
		// Write in chunks of 7 bytes, yielding between them.
		for i := 0; i < len(data); i += 7 {
			f.WriteString(data[i:min(i+7, len(data))])
			if i%91 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	var got strings.Builder
	ended := func() bool { return false } // the meta never says: only the result ends it
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = Follow(ctx, dir, "run_x", FollowOptions{Poll: time.Millisecond, Ended: ended}, func(seq int64, line []byte) error {
		require.Equal(t, byte('}'), line[len(line)-1], "a whole line: %q", line)
		got.Write(line)
		got.WriteByte('\n')
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, data, got.String())
}

// TestFollowAfter skips what the client had, and a writer that ends
// without a result ends the follow.
func TestFollowAfter(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "run_y", Meta{Agent: "claude"}, WithRedactor(NewRedactor(nil)))
	require.NoError(t, err)
	for i := 1; i <= 5; i++ {
		require.NoError(t, s.WriteEvent(fmt.Appendf(nil, `{"v":1,"type":"message","run":"run_y","seq":%d}`, i)))
	}
	require.NoError(t, s.Close(Meta{Status: "error"}))
	var seqs []int64
	err = Follow(context.Background(), dir, "run_y", FollowOptions{After: 3}, func(seq int64, _ []byte) error {
		seqs = append(seqs, seq)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []int64{4, 5}, seqs)
}

// TestEventHook: the hook sees each line as written to the disk.
func TestEventHook(t *testing.T) {
	dir := t.TempDir()
	var seen []string
	s, err := Open(dir, "run_z", Meta{Agent: "claude"}, WithRedactor(NewRedactor(nil)),
		WithEventHook(func(line []byte) { seen = append(seen, string(line)) }))
	require.NoError(t, err)
	require.NoError(t, s.WriteEvent([]byte(`{"seq":1}`)))
	require.NoError(t, s.Close(Meta{}))
	require.Equal(t, []string{"{\"seq\":1}\n"}, seen)
}

// FuzzLineSeq: the envelope fast path agrees with a JSON parser on every
// line it accepts, and nothing panics.
func FuzzLineSeq(f *testing.F) {
	f.Add([]byte(`{"v":1,"type":"result","run":"run_x","seq":42,"ts":1}`))
	f.Add([]byte(`{"v":1,"type":"x","run":"r","seq":7}`))
	f.Add([]byte(`{"seq":3,"type":"usage"}`))
	f.Add([]byte(`{"v":1,"type":"x","run":"r","seq":99999999999999999999}`))
	f.Add([]byte(`{"v":1,"type":"","run":"","seq":9227000000000000000}`)) // 19 digits, over MaxInt64
	f.Add([]byte(`{"v":1,"type":"\b","run":"","seq":0}`))                 // an escape: the parser's
	f.Add([]byte(`{"v":1,"type":"x","run":"a\"","seq":1,"seq":2}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		seq, typ, ok := envelope(line)
		if !ok || !gjson.ValidBytes(line) {
			LineSeq(line)
			return
		}
		res := gjson.GetManyBytes(line, "seq", "type")
		if res[0].Int() != seq || res[1].Str != typ {
			t.Fatalf("%q: fast path %d %q, parser %d %q", line, seq, typ, res[0].Int(), res[1].Str)
		}
	})
}

// TestBufferedEvents: with WithBufferedEvents, event lines reach the disk
// (and the hook) at Flush, not one write each.
func TestBufferedEvents(t *testing.T) {
	dir := t.TempDir()
	var seen []string
	s, err := Open(dir, "run_b", Meta{Agent: "claude"}, WithRedactor(NewRedactor(nil)), WithBufferedEvents(),
		WithEventHook(func(line []byte) { seen = append(seen, string(line)) }))
	require.NoError(t, err)
	require.NoError(t, s.WriteEvent([]byte(`{"seq":1}`)))
	require.NoError(t, s.WriteEvent([]byte(`{"seq":2}`)))
	data, err := os.ReadFile(filepath.Join(dir, "run_b"+ExtEvents))
	require.NoError(t, err)
	require.Empty(t, data)
	require.Empty(t, seen)
	require.NoError(t, s.Flush())
	data, err = os.ReadFile(filepath.Join(dir, "run_b"+ExtEvents))
	require.NoError(t, err)
	require.Equal(t, "{\"seq\":1}\n{\"seq\":2}\n", string(data))
	require.Equal(t, []string{"{\"seq\":1}\n", "{\"seq\":2}\n"}, seen)
	require.NoError(t, s.Close(Meta{}))
}

// The deadlines of these tests only turn a follow that never ends into a
// failure; nothing waits on time.

// logFile is a run's event log written by hand, as another process
// would: no session, no hook.
type logFile struct {
	dir, run, path string
	f              *os.File
}

func newLogFile(t *testing.T, run string) *logFile {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, run+ExtEvents)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return &logFile{dir: dir, run: run, path: path, f: f}
}

func eventLine(run string, seq int, typ string) string {
	return fmt.Sprintf(`{"v":1,"type":%q,"run":%q,"seq":%d,"text":"line %d"}`+"\n", typ, run, seq, seq)
}

// write appends the lines of seqs from to to (the last one the result
// when result is set), in one write.
func (l *logFile) write(t *testing.T, from, to int, result bool) {
	t.Helper()
	var b strings.Builder
	for i := from; i <= to; i++ {
		typ := "text_delta"
		if result && i == to {
			typ = "result"
		}
		b.WriteString(eventLine(l.run, i, typ))
	}
	_, err := l.f.WriteString(b.String())
	require.NoError(t, err)
}

func deadline(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var never = func() bool { return false }

// seqsOf collects the seqs a follow delivers; read once the follow
// returned.
type seqsOf struct{ seqs []int64 }

func (s *seqsOf) add(seq int64) { s.seqs = append(s.seqs, seq) }

// requireEach checks that each follow got the seqs 1 to n, once each, in
// order.
func requireEach(t *testing.T, n int, got ...*seqsOf) {
	t.Helper()
	for i, g := range got {
		require.Equal(t, upTo(n), g.seqs, "follow %d", i)
	}
}

func upTo(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i + 1)
	}
	return out
}

// followWriting follows l with poll, writing line by line up to the
// result at 5, each once the follower waits for it, and returns the seqs
// delivered.
func followWriting(t *testing.T, l *logFile, poll time.Duration) []int64 {
	t.Helper()
	l.write(t, 1, 1, false)
	next := 2
	var got seqsOf
	err := Follow(deadline(t), l.dir, l.run, FollowOptions{Poll: poll, Ended: never,
		CaughtUp: func() error {
			if next <= 5 {
				l.write(t, next, next, next == 5)
				next++
			}
			return nil
		}}, func(seq int64, _ []byte) error { got.add(seq); return nil })
	require.NoError(t, err)
	return got.seqs
}

// TestFollowLateJoiner: a follower that starts while the feed runs
// replays the log from the disk and goes on from the feed without a
// line lost or twice.
func TestFollowLateJoiner(t *testing.T) {
	l := newLogFile(t, "run_l")
	l.write(t, 1, 2, false)
	var fs Feeds
	var first, late seqsOf
	lateDone := make(chan error, 1)
	err := fs.Follow(deadline(t), l.dir, l.run, FollowOptions{Poll: time.Hour, Ended: never},
		func(seq int64, _ []byte) error {
			first.add(seq)
			switch seq {
			case 2: // the first follower is caught up: more lines, then another follower
				l.write(t, 3, 50, false)
			case 10:
				go func() {
					lateDone <- fs.Follow(deadline(t), l.dir, l.run, FollowOptions{Poll: time.Hour, Ended: never},
						func(seq int64, _ []byte) error {
							late.add(seq)
							if seq == 50 {
								l.write(t, 51, 100, true)
							}
							return nil
						})
				}()
			}
			return nil
		})
	require.NoError(t, err)
	require.NoError(t, <-lateDone)
	requireEach(t, 100, &first, &late)
}

// TestFollowFallsBehindWindow: a follower that stops taking lines while
// more than the feed keeps are written reads them from the disk when it
// goes on, from where it was.
func TestFollowFallsBehindWindow(t *testing.T) {
	l := newLogFile(t, "run_b")
	l.write(t, 1, 1, false)
	fs := Feeds{window: 512}
	caught := make(chan struct{}, 2)
	release := make(chan struct{})
	var slow, fast seqsOf
	slowDone := make(chan error, 1)
	opts := func(once *bool) FollowOptions {
		return FollowOptions{Poll: time.Hour, Ended: never, CaughtUp: func() error {
			if !*once {
				*once = true
				caught <- struct{}{}
			}
			return nil
		}}
	}
	var slowOnce, fastOnce bool
	go func() {
		slowDone <- fs.Follow(deadline(t), l.dir, l.run, opts(&slowOnce), func(seq int64, _ []byte) error {
			slow.add(seq)
			if seq == 2 {
				<-release // stuck while the rest is written
			}
			return nil
		})
	}()
	go func() {
		<-caught // both caught up on line 1 and reading the feed
		<-caught
		l.write(t, 2, 300, true)
	}()
	require.NoError(t, fs.Follow(deadline(t), l.dir, l.run, opts(&fastOnce), func(seq int64, _ []byte) error {
		fast.add(seq)
		return nil
	}))
	close(release)
	require.NoError(t, <-slowDone)
	requireEach(t, 300, &fast, &slow)
}

// TestFollowSlowFollowerKeepsItsLines: a follower stuck on a line of the
// feed while the window dropped the lines after it lost them: it held
// the window's own lines, which the feed clears as it drops them, and
// took those for lines of seq 0, already delivered. It now takes the
// feed's lines one at a time. The window's array is cleared only when
// a new line fits in it, so batches of several sizes are tried.
func TestFollowSlowFollowerKeepsItsLines(t *testing.T) {
	for n := 8; n <= 24; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) { followStuckWhileDropped(t, n) })
	}
}

// followStuckWhileDropped writes lines 2 to n+1 in one write, and while a
// follower is stuck on line 2 of them, one long enough that the window
// drops about half of them.
func followStuckWhileDropped(t *testing.T, n int) {
	l := newLogFile(t, "run_s")
	l.write(t, 1, 1, false)
	fs := Feeds{window: 2000}
	caught := make(chan struct{}, 2)
	stuck, release := make(chan struct{}), make(chan struct{})
	opts := func(once *bool) FollowOptions {
		return FollowOptions{Poll: time.Hour, Ended: never, CaughtUp: func() error {
			if !*once {
				*once = true
				caught <- struct{}{}
			}
			return nil
		}}
	}
	var slow, fast seqsOf
	var slowOnce, fastOnce bool
	slowDone := make(chan error, 1)
	go func() {
		slowDone <- fs.Follow(deadline(t), l.dir, l.run, opts(&slowOnce), func(seq int64, _ []byte) error {
			slow.add(seq)
			if seq == 2 {
				close(stuck)
				<-release
			}
			return nil
		})
	}()
	go func() {
		<-caught // both read line 1 and follow the feed
		<-caught
		l.write(t, 2, n+1, false)
		<-stuck
		long := fmt.Sprintf(`{"v":1,"type":"text_delta","run":%q,"seq":%d,"text":%q}`+"\n", l.run, n+2, strings.Repeat("x", 2000-n*30))
		_, err := l.f.WriteString(long)
		require.NoError(t, err)
	}()
	require.NoError(t, fs.Follow(deadline(t), l.dir, l.run, opts(&fastOnce), func(seq int64, _ []byte) error {
		fast.add(seq)
		if seq == int64(n+2) { // the feed holds the long line: it dropped the old ones
			close(release)
			l.write(t, n+3, n+3, true)
		}
		return nil
	}))
	require.NoError(t, <-slowDone)
	requireEach(t, n+3, &fast, &slow)
}

// TestFollowRotated: a log renamed away and replaced by a new one (which
// here repeats the old one's last line) is read to its end, then the new
// one from its start; no line is lost or delivered twice.
func TestFollowRotated(t *testing.T) {
	l := newLogFile(t, "run_r")
	l.write(t, 1, 2, false)
	var got seqsOf
	err := Follow(deadline(t), l.dir, l.run, FollowOptions{Poll: time.Hour, Ended: never}, func(seq int64, _ []byte) error {
		got.add(seq)
		if seq == 2 {
			l.write(t, 3, 3, false) // the old log's last line, written just before its rotation
			require.NoError(t, os.Rename(l.path, l.path+".1"))
			var b strings.Builder
			for i := 3; i <= 6; i++ {
				typ := "text_delta"
				if i == 6 {
					typ = "result"
				}
				b.WriteString(eventLine(l.run, i, typ))
			}
			require.NoError(t, os.WriteFile(l.path, []byte(b.String()), 0o600))
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, upTo(6), got.seqs)
}

// TestFollowTruncated: a log truncated and written again from its start
// (repeating what was read) is read again from its start, the lines
// already delivered skipped.
func TestFollowTruncated(t *testing.T) {
	l := newLogFile(t, "run_t")
	pad := strings.Repeat("x", 200) // the old lines are longer than what replaces them
	for i := 1; i <= 3; i++ {
		_, err := fmt.Fprintf(l.f, `{"v":1,"type":"text_delta","run":"run_t","seq":%d,"text":%q}`+"\n", i, pad)
		require.NoError(t, err)
	}
	var got seqsOf
	err := Follow(deadline(t), l.dir, l.run, FollowOptions{Poll: time.Hour, Ended: never}, func(seq int64, _ []byte) error {
		got.add(seq)
		if seq == 3 {
			require.NoError(t, l.f.Truncate(0))
			l.write(t, 2, 5, true)
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, upTo(5), got.seqs)
}

// TestFollowBeforeMeta: a log whose meta is not written yet is a run
// starting, not one that ended: its follower waits for its lines.
func TestFollowBeforeMeta(t *testing.T) {
	l := newLogFile(t, "run_m") // no meta: Ended is the default
	var got seqsOf
	err := Follow(deadline(t), l.dir, l.run, FollowOptions{
		CaughtUp: func() error {
			if len(got.seqs) == 0 {
				l.write(t, 1, 3, true)
			}
			return nil
		}}, func(seq int64, _ []byte) error { got.add(seq); return nil })
	require.NoError(t, err)
	require.Equal(t, upTo(3), got.seqs)
}
