package mcpserver

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/rpcline"
	"github.com/agentharness/harness/internal/syncio"
)

// newHoldInput is ServeStdio's input over the lines, holding the end of
// them for at most hold.
func newHoldInput(lines string, hold time.Duration) *input {
	return &input{lines: rpcline.NewReader(strings.NewReader(lines), maxLine), replies: &syncio.Queue{W: io.Discard, Max: maxReplies},
		log: slog.New(slog.DiscardHandler), ended: make(chan struct{}), broken: make(chan struct{}), quit: make(chan struct{}), holdMax: hold}
}

// readEnd reads in to its end, failing the test if that takes more than
// a bound on a hang.
func readEnd(t *testing.T, in *input) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(in)
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the end of the input is held for ever")
	}
}

// TestStdioHoldEnd: the end of the input reaches the SDK once the calls
// handed on are answered; a call never answered holds it no longer than
// holdMax (a backstop: the SDK answers every call).
func TestStdioHoldEnd(t *testing.T) {
	t.Parallel()
	const ping = `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"
	in := newHoldInput(ping, time.Hour)
	var out bytes.Buffer
	go func() {
		<-in.ended // the input ended with the call in flight: answer it
		_, _ = sdkOutput{w: &out, in: in}.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	}()
	readEnd(t, in)

	readEnd(t, newHoldInput(ping, time.Millisecond))
}
