package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServeMockBadCwd: a run with a scripted model and a cwd that is no
// directory is refused as one without: the library's message, not the
// mock's ("mock: workdir … is not a directory").
func TestServeMockBadCwd(t *testing.T) {
	home := isolateWith(t, fakeClaude("hang-in-tool"))
	api, _ := serveInProcess(t, home)
	bad := filepath.Join(home, "nonexist")
	var bodies []string
	for _, mock := range []string{"", `,"mock":"tool"`} {
		res := api.Do(t, t.Context(), "POST", "/api/runs", `{"agent":"claude","prompt":"x","cwd":`+strconv.Quote(bad)+mock+`}`, api.Auth())
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s", b)
		bodies = append(bodies, string(b))
	}
	want, err := json.Marshal(map[string]string{"error": "cwd " + strconv.Quote(bad) + " is not a directory"})
	require.NoError(t, err)
	require.JSONEq(t, string(want), bodies[0])
	require.Equal(t, bodies[0], bodies[1])
}
