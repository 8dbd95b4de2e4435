package syncio

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestQueue: a Write returns at once while W blocks, past Max bytes
// waiting one is dropped, and Wait returns once W took the rest, in
// order.
func TestQueue(t *testing.T) {
	t.Parallel()
	r, w := io.Pipe()
	defer r.Close() // a write still blocked fails
	q := &Queue{W: w, Max: 8}
	wrote := make(chan error, 1)
	go func() {
		for _, s := range []string{"one\n", "two\n"} {
			if _, err := q.Write([]byte(s)); err != nil { // the pipe is not read: W blocks
				wrote <- err
				return
			}
		}
		_, err := q.Write([]byte("x"))
		wrote <- err
	}()
	select {
	case err := <-wrote:
		require.ErrorIs(t, err, ErrQueueFull, "over Max bytes waiting")
	case <-time.After(10 * time.Second):
		t.Fatal("a Write waits for W")
	}

	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		got <- string(b)
	}()
	q.Wait()
	require.NoError(t, w.Close())
	require.Equal(t, "one\ntwo\n", <-got)

	var buf bytes.Buffer
	q = &Queue{W: &buf, Max: 8}
	q.Wait() // nothing queued
	_, err := q.Write([]byte("three\n"))
	require.NoError(t, err)
	q.Wait()
	require.Equal(t, "three\n", buf.String())
}
