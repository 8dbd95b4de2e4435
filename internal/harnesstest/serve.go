package harnesstest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/serve"
)

// ServeAPI is a client of the HTTP API of 'harness serve' at URL (no
// trailing slash), holding the server's token.
type ServeAPI struct {
	URL, Token string
}

// Auth is the header that carries the token.
func (a ServeAPI) Auth() map[string]string {
	return map[string]string{"Authorization": "Bearer " + a.Token}
}

// Do sends method path with body and the headers hdr (a Host header
// names the host asked for).
func (a ServeAPI) Do(t testing.TB, ctx context.Context, method, path, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, a.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
		if k == "Host" {
			req.Host = v
		}
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return res
}

// Start starts a run (body is the JSON request) and returns it; the
// server must accept it.
func (a ServeAPI) Start(t testing.TB, body string) serve.RunInfo {
	t.Helper()
	res := a.Do(t, t.Context(), "POST", "/api/runs", body, a.Auth())
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	require.Equal(t, http.StatusCreated, res.StatusCode, "%s", b)
	var ri serve.RunInfo
	require.NoError(t, json.Unmarshal(b, &ri))
	require.True(t, strings.HasPrefix(ri.Run, "run_"), ri.Run)
	return ri
}

// Events opens the event stream of run, asked for with hdr.
func (a ServeAPI) Events(t testing.TB, ctx context.Context, run string, hdr map[string]string) *http.Response {
	t.Helper()
	return a.Do(t, ctx, "GET", "/api/runs/"+run+"/events", "", hdr)
}

// JSON gets path, which must answer status with a JSON object, and
// returns the object.
func (a ServeAPI) JSON(t testing.TB, path string, status int) map[string]any {
	t.Helper()
	res := a.Do(t, t.Context(), "GET", path, "", nil)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	require.Equal(t, status, res.StatusCode, "%s", b)
	require.Equal(t, "application/json", res.Header.Get("Content-Type"))
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "%s", b)
	return m
}
