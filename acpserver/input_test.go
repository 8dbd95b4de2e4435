package acpserver

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPromptWithoutIDIsDropped: a session/prompt without an id (or with a
// null one) never reaches the SDK, which would take it for a notification
// and run the prompt on its notification goroutine, unanswerable, with
// every session/cancel waiting behind it. A warning says so; the next
// line goes on.
func TestPromptWithoutIDIsDropped(t *testing.T) {
	next := `{"jsonrpc":"2.0","id":7,"method":"session/cancel","params":{"sessionId":"s1"}}` + "\n"
	for _, prompt := range []string{
		`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":null,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}`,
	} {
		var logs, out bytes.Buffer
		in := newInput(strings.NewReader(prompt+"\n"+next), &output{}, nil, slog.New(slog.NewTextHandler(&logs, nil)))
		in.out.W = &out
		close(in.gate)
		got, err := io.ReadAll(in)
		require.NoError(t, err)
		require.Equal(t, next, string(got), "only the line after the prompt reaches the SDK")
		require.Contains(t, logs.String(), "without an id")
		require.Empty(t, out.String(), "a notification gets no answer")
	}
}
