//go:build unix

package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBenchReportNotRegular: a stored report's file that is a FIFO is
// never opened (its open waited for a writer: the request hung), and one
// that is no report is 404, as the list leaves it out, with a message
// naming the id, not the host's path (it was 500 with the path).
func TestBenchReportNotRegular(t *testing.T) {
	f := newFixture(t, "serve-lines")
	require.NoError(t, os.MkdirAll(f.bench, 0o700))
	mkfifos(t, filepath.Join(f.bench, "fifo.json"))
	require.NoError(t, os.WriteFile(filepath.Join(f.bench, "corrupt.json"), []byte(`{"runs": [`), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(f.bench, "dir.json"), 0o700))
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/api/bench/fifo", 404, "bench: report fifo: not a bench JSON report: not a regular file (a FIFO)"},
		{"/api/bench/corrupt", 404, "bench: report corrupt: not a bench JSON report: unexpected end of JSON input"},
		{"/api/bench/dir", 404, "bench: report dir: not a bench JSON report: not a regular file (a directory)"},
		{"/api/bench", 200, ""},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res := f.api.Do(t, ctx, "GET", tc.path, "", nil)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		require.NoError(t, err, tc.path)
		require.Equal(t, tc.status, res.StatusCode, "%s: %s", tc.path, b)
		var body struct {
			Error   string `json:"error"`
			Reports []any  `json:"reports"`
		}
		require.NoError(t, json.Unmarshal(b, &body), "%s: %s", tc.path, b)
		require.Equal(t, tc.want, body.Error, tc.path)
		require.NotContains(t, string(b), f.bench, tc.path)
		require.Empty(t, body.Reports, tc.path)
	}
}
