//go:build unix

package serve_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/logger"
)

// TestEventsLinkOutOfStore: a run's event log that is a symbolic link
// out of the store is never read, and its stream is 404 like a FIFO's.
// It was a 200 with an empty body, no end: a run with no events whose
// stream a client waits on, or reconnects to, for ever.
func TestEventsLinkOutOfStore(t *testing.T) {
	f := newFixture(t, "serve-lines")
	require.NoError(t, os.MkdirAll(f.dir, 0o700))
	host := filepath.Join(filepath.Dir(f.dir), "id_rsa")
	require.NoError(t, os.WriteFile(host, []byte(`{"v":1,"type":"result","run":"x","seq":1,"text":"secret of the host"}`+"\n"), 0o600))
	require.NoError(t, os.Symlink(host, filepath.Join(f.dir, "run_linkout"+logger.ExtEvents)))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res := f.api.Do(t, ctx, "GET", "/api/runs/run_linkout/events", "", nil)
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, res.StatusCode, "%s", b)
	require.JSONEq(t, `{"error":"run run_linkout has no event log"}`, string(b))
}
