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

// TestForgedMeta: a meta is only that of the run its file name names. A
// meta whose "run" was "../outside" made it the latest run, whose native
// log and stream were the files outside the store; one claiming another
// run's id listed that run twice. Now each is a run of its own files,
// with a missing meta (status unknown).
func TestForgedMeta(t *testing.T) {
	f := newFixture(t, "serve-lines")
	require.NoError(t, os.MkdirAll(f.dir, 0o700))
	outside := filepath.Join(filepath.Dir(f.dir), "outside")
	require.NoError(t, os.WriteFile(outside+logger.ExtNative, []byte("secret outside the store\n"), 0o600))
	require.NoError(t, os.WriteFile(outside+logger.ExtEvents, []byte(`{"v":1,"type":"result","run":"x","seq":1,"text":"secret outside the store"}`+"\n"), 0o600))

	past := time.Now().Add(-time.Hour)
	s, err := logger.Open(f.dir, "run_real", logger.Meta{Agent: "claude", Start: past})
	require.NoError(t, err)
	require.NoError(t, s.Close(logger.Meta{Status: "success", End: past.Add(time.Minute)}))
	// The forged metas claim the newest start: latest, were they believed.
	for id, claims := range map[string]string{"run_zforged": "../outside", "run_claim": "run_real"} {
		meta := `{"run":"` + claims + `","agent":"forged","status":"success","start":"2099-01-01T00:00:00Z"}`
		require.NoError(t, os.WriteFile(filepath.Join(f.dir, id+logger.ExtMeta), []byte(meta), 0o600))
	}
	old := past.Add(-time.Hour) // run_claim is the oldest by its file: run_zforged is the latest
	require.NoError(t, os.Chtimes(filepath.Join(f.dir, "run_claim"+logger.ExtMeta), old, old))

	runs := f.api.JSON(t, "/api/runs", http.StatusOK)["runs"].([]any)
	got := map[string]string{}
	for _, r := range runs {
		r := r.(map[string]any)
		got[r["run"].(string)] = r["status"].(string) + " " + r["agent"].(string)
	}
	require.Len(t, runs, 3)
	require.Equal(t, map[string]string{"run_real": "success claude", "run_claim": "unknown ", "run_zforged": "unknown "}, got)
	require.Equal(t, "run_zforged", f.api.JSON(t, "/api/runs/latest", http.StatusOK)["run"])

	for _, path := range []string{"/api/runs/latest/native", "/api/runs/latest/events", "/api/runs/run_zforged/native"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res := f.api.Do(t, ctx, "GET", path, "", nil)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		require.NoError(t, err, path)
		require.Equal(t, http.StatusNotFound, res.StatusCode, "%s: %s", path, b)
		require.NotContains(t, string(b), "secret", path)
	}
}
