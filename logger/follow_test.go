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
