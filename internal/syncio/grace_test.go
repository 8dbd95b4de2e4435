package syncio

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGraceWriter: a write waits for its reader until End; after, one
// that nobody reads is abandoned after the grace, and every later write
// fails at once. Writes that go through are whole.
func TestGraceWriter(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	g := &GraceWriter{W: &buf, Grace: time.Hour}
	_, err := g.Write([]byte("one\n"))
	require.NoError(t, err)
	g.End()
	g.End() // twice is once
	_, err = g.Write([]byte("two\n"))
	require.NoError(t, err, "a reader that still reads is written to after End")
	require.Equal(t, "one\ntwo\n", buf.String())

	r, w := io.Pipe() // nobody reads r
	defer r.Close()
	stuck := &GraceWriter{W: w, Grace: 10 * time.Millisecond}
	done := make(chan error, 1)
	go func() { _, err := stuck.Write([]byte("never read\n")); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("a write returned before End: %v", err)
	case <-time.After(50 * time.Millisecond): // it waits for its reader
	}
	stuck.End()
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrAbandoned)
	case <-time.After(10 * time.Second):
		t.Fatal("the write was not abandoned after the grace")
	}
	_, err = stuck.Write([]byte("later\n"))
	require.ErrorIs(t, err, ErrAbandoned, "every later write fails at once")
}
