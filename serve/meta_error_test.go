package serve_test

import (
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/logger"
)

// TestMetaErrorSaid: a run whose meta file is no meta of it is listed as
// rebuilt from its event log, and the list and the run's summary say why
// (harness sessions list says it on stderr): a client otherwise sees a
// run without prompt or argv and cannot tell a damaged store from a run
// started without them. Once the meta is whole again, nothing is said.
func TestMetaErrorSaid(t *testing.T) {
	f := newFixture(t, "serve-lines")
	require.NoError(t, os.MkdirAll(f.dir, 0o700))
	past := time.Now().Add(-time.Hour)
	for _, id := range []string{"run_good", "run_bad", "run_claim", "run_fifo", "run_gone"} {
		s, err := logger.Open(f.dir, id, logger.Meta{Agent: "claude", Start: past, PromptPreview: "fix " + id})
		require.NoError(t, err)
		require.NoError(t, s.Close(logger.Meta{Status: "success", End: past.Add(time.Minute)}))
	}
	meta := func(id string) string { return filepath.Join(f.dir, id+logger.ExtMeta) }
	good, err := os.ReadFile(meta("run_bad"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(meta("run_bad"), []byte(`{"run":"run_bad","agent":`), 0o600))
	require.NoError(t, os.WriteFile(meta("run_claim"), []byte(`{"run":"run_good","agent":"claude"}`), 0o600))
	require.NoError(t, os.Remove(meta("run_fifo")))
	require.NoError(t, syscall.Mkfifo(meta("run_fifo"), 0o600))
	require.NoError(t, os.Remove(meta("run_gone")))
	for _, id := range []string{"run_bad", "run_claim"} { // settled: the index keeps them as bad, unread
		require.NoError(t, os.Chtimes(meta(id), past, past))
	}

	list := func() map[string]string {
		got := map[string]string{}
		for _, r := range f.api.JSON(t, "/api/runs", http.StatusOK)["runs"].([]any) {
			r := r.(map[string]any)
			why, _ := r["meta_error"].(string)
			got[r["run"].(string)] = why
		}
		return got
	}
	want := map[string]string{"run_good": "", "run_bad": "malformed", "run_claim": "malformed", "run_fifo": "not a regular file", "run_gone": "missing"}
	require.Equal(t, want, list())
	require.Equal(t, want, list(), "the index's second read, of metas it keeps as bad, says the same")
	for id, why := range want {
		got, _ := f.api.JSON(t, "/api/runs/"+id, http.StatusOK)["meta_error"].(string)
		require.Equal(t, why, got, id)
	}

	require.NoError(t, os.WriteFile(meta("run_bad"), good, 0o600))
	want["run_bad"] = ""
	require.Equal(t, want, list(), "a meta repaired is the file's again")
	require.Equal(t, "fix run_bad", f.api.JSON(t, "/api/runs/run_bad", http.StatusOK)["prompt_preview"])
}
