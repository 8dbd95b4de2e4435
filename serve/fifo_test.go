//go:build unix

package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFIFOInStore: a FIFO among the session files is never opened: the
// run list, every summary and the FIFO run's own endpoints answer at
// once. The open of a FIFO waited for a writer, holding the lock of all
// the summaries, so that the list and every summary hung behind it.
func TestFIFOInStore(t *testing.T) {
	f := newFixture(t, "serve-lines", "SERVE_TEST_LINES=3")
	run := f.start(t)
	waitStatus(t, f, run)
	mkfifos(t, filepath.Join(f.dir, "run_fifolog.ndjson"), filepath.Join(f.dir, "run_fifolog.native.jsonl"),
		filepath.Join(f.dir, "run_fifometa.meta.json"))
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "run_fifometa.ndjson"), nil, 0o600))

	for _, tc := range []struct {
		path   string
		status int
		want   string // in the body
	}{
		{"/api/runs/run_fifolog", 200, `"status":"unknown"`},
		{"/api/runs/" + run, 200, `"status":"success"`},
		{"/api/runs/run_fifometa", 200, `"run":"run_fifometa"`},
		{"/api/runs", 200, `"run":"run_fifolog"`},
		{"/api/runs/run_fifolog/events", 404, `"error":"run run_fifolog has no event log"`},
		{"/api/runs/run_fifolog/native", 404, `"error":"run run_fifolog has no native log"`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res := f.api.Do(t, ctx, "GET", tc.path, "", nil)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		require.NoError(t, err, tc.path)
		require.Equal(t, tc.status, res.StatusCode, "%s: %s", tc.path, b)
		require.True(t, json.Valid(b), "%s: %s", tc.path, b)
		require.Contains(t, string(b), tc.want, tc.path)
	}
}

// mkfifos makes a FIFO at each path; at the end of the test each is
// opened for writing once, so that an open the server is stuck in
// returns (else a failing test would hang in the server's close).
func mkfifos(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		require.NoError(t, syscall.Mkfifo(p, 0o600))
		t.Cleanup(func() {
			if f, err := os.OpenFile(p, os.O_RDWR, 0); err == nil { // O_RDWR: no wait for a reader
				f.Close()
			}
		})
	}
}
