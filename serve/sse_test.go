package serve_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/logger"
)

// TestSSECorruptedLines: the lines of a corrupted log keep the stream's
// framing and order. A raw CR in a line was written inside its data
// field, where an SSE client ends the field; it now ends a data line and
// starts another. A seq past int64 was taken as the largest seq, and
// every valid event after it was skipped; that line now has no seq (no
// id), and the events after it are sent.
func TestSSECorruptedLines(t *testing.T) {
	f := newFixture(t, "serve-lines")
	require.NoError(t, os.MkdirAll(f.dir, 0o700))
	const run = "run_corrupt"
	log := strings.Join([]string{
		`{"v":1,"type":"message","run":"run_corrupt","seq":1,"text":"has` + "\r" + `carriage"}`,
		`{"v":1,"type":"message","run":"run_corrupt","seq":99999999999999999999999}`,
		`{"v":1,"type":"message","run":"run_corrupt","seq":2}`,
		`{"v":1,"type":"result","run":"run_corrupt","seq":3,"status":"success"}`,
	}, "\n") + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, run+logger.ExtEvents), []byte(log), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, run+logger.ExtMeta), []byte(`{"run":"run_corrupt","status":"success"}`), 0o600))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res := f.api.Events(t, ctx, run, nil)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NotContains(t, string(b), "\r")
	want := "id: 1\n" +
		`data: {"v":1,"type":"message","run":"run_corrupt","seq":1,"text":"has` + "\n" + `data: carriage"}` + "\n\n" +
		`data: {"v":1,"type":"message","run":"run_corrupt","seq":99999999999999999999999}` + "\n\n" +
		"id: 2\n" + `data: {"v":1,"type":"message","run":"run_corrupt","seq":2}` + "\n\n" +
		"id: 3\n" + `data: {"v":1,"type":"result","run":"run_corrupt","seq":3,"status":"success"}` + "\n\n" +
		"event: end\n" + `data: {"last_event_id":3}` + "\n\n"
	require.Equal(t, want, string(b))
}
