package serve_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunRequestTrailingData: a POST /api/runs body is one JSON object
// and nothing after it but space. The decoder read the first object and
// left the rest, so a body with garbage or a second object after it
// started a run (201).
func TestRunRequestTrailingData(t *testing.T) {
	f := newFixture(t, "serve-lines", "SERVE_TEST_LINES=1")
	req := `{"agent":"claude","prompt":"x","cwd":` + strconv.Quote(t.TempDir()) + `}`
	for name, body := range map[string]string{
		"garbage":       req + " trailing garbage",
		"second-object": req + `{"agent":"codex"}`,
		"closing-brace": req + "}",
	} {
		t.Run(name, func(t *testing.T) {
			res := f.api.Do(t, t.Context(), "POST", "/api/runs", body, f.api.Auth())
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s", b)
			var e struct{ Error string }
			require.NoError(t, json.Unmarshal(b, &e), "%s", b)
			require.Contains(t, e.Error, "bad run request: data after the JSON object")
		})
	}
	require.Empty(t, f.api.JSON(t, "/api/runs", http.StatusOK)["runs"], "no run was started")

	started := f.api.Start(t, req+" \n") // space after the object is no data
	waitStatus(t, f, started.Run)
}
