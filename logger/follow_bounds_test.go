package logger

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestTailDropsOverlongLine: a line longer than the stream allows was
// kept whole by a Tail (an unfinished one of 200 MB took three clients'
// memory from 275 MB to 1.5 GB) and returned; it is now dropped as it is
// read, up to its newline, and the lines around it are returned exactly.
// A Tail opened at the Pos of one stopped inside it drops its rest
// without reading again what was read.
func TestTailDropsOverlongLine(t *testing.T) {
	l := newLogFile(t, "run_long")
	line1, line2, line3 := eventLine(l.run, 1, "text_delta"), eventLine(l.run, 2, "text_delta"), eventLine(l.run, 3, "result")
	atCap := `{"v":1,"type":"text_delta","run":"run_long","seq":9,"text":"` // a line as long as allowed
	atCap += strings.Repeat("a", event.MaxLineBytes-len(atCap)-2) + `"}` + "\n"
	long := strings.Repeat("x", event.MaxLineBytes+1) + "\n"
	_, err := l.f.WriteString(line1 + long + line2 + atCap)
	require.NoError(t, err)

	tl, err := OpenTail(l.dir, l.run)
	require.NoError(t, err)
	defer tl.Close()
	next := func() string {
		t.Helper()
		b, err := tl.Next()
		require.NoError(t, err)
		return string(b) + "\n"
	}
	require.Equal(t, line1, next())
	require.Equal(t, line2, next(), "the line over the cap is dropped")
	require.Equal(t, 1, tl.Dropped())
	require.Equal(t, int64(len(line1+long+line2)), tl.Offset())
	require.Equal(t, atCap, next(), "a line of MaxLineBytes is whole")

	// An unfinished one: three times the cap, no newline yet.
	before := int64(len(line1 + long + line2 + atCap))
	tail := strings.Repeat("y", 3*event.MaxLineBytes)
	_, err = l.f.WriteString(tail)
	require.NoError(t, err)
	_, err = tl.Next()
	require.ErrorIs(t, err, io.EOF)
	require.LessOrEqual(t, cap(tl.partial), event.MaxLineBytes+64<<10, "the unfinished line is not kept")
	pos := tl.Pos()
	require.Equal(t, TailPos{Offset: before + int64(len(tail)), InLongLine: true}, pos)
	r, err := tl.renewed()
	require.NoError(t, err)
	require.False(t, r, "the dropped bytes count as read")

	_, err = l.f.WriteString("yy\n" + line3)
	require.NoError(t, err)
	require.Equal(t, line3, next())
	require.Equal(t, 2, tl.Dropped())
	end := before + int64(len(tail)+len("yy\n")+len(line3))
	require.Equal(t, end, tl.Offset())

	// From where the first stopped: the rest of the long line is dropped.
	t2, err := OpenTailPos(l.dir, l.run, pos)
	require.NoError(t, err)
	defer t2.Close()
	b, err := t2.Next()
	require.NoError(t, err)
	require.Equal(t, line3, string(b)+"\n")
	require.Equal(t, end, t2.Offset())
	require.Equal(t, TailPos{Offset: end}, t2.Pos())
}

// TestFollowDropsOverlongLine: a follow sends every line of the log
// exactly but one over the cap, which it drops.
func TestFollowDropsOverlongLine(t *testing.T) {
	l := newLogFile(t, "run_follow_long")
	lines := []string{eventLine(l.run, 1, "text_delta"), eventLine(l.run, 2, "text_delta"),
		eventLine(l.run, 3, "text_delta"), eventLine(l.run, 4, "result")}
	junk := strings.Repeat("z", 2*event.MaxLineBytes) + "\n"
	_, err := l.f.WriteString(lines[0] + lines[1] + junk + lines[2] + lines[3])
	require.NoError(t, err)
	var got strings.Builder
	var seqs seqsOf
	err = Follow(deadline(t), l.dir, l.run, FollowOptions{Ended: never}, func(seq int64, line []byte) error {
		seqs.add(seq)
		got.Write(line)
		got.WriteByte('\n')
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, upTo(4), seqs.seqs)
	require.Equal(t, strings.Join(lines, ""), got.String())
}
