package serve_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/serve"
)

// TestNonCanonicalPathJSON: a path with an empty, "." or ".." element,
// and /api or /assets without their slash, were answered by ServeMux with
// a 307 and an HTML body (a redirect to another path: /api/runs//native
// to run "native"). Each is no endpoint, page nor asset: a JSON 404 with
// no redirect, and the page's own paths are served as before.
func TestNonCanonicalPathJSON(t *testing.T) {
	const token = "test-token-0123456789abcdef"
	srv := serve.New(serve.Config{Dir: t.TempDir(), Token: token})
	t.Cleanup(func() { srv.Close() })
	do := func(method, path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec
	}
	for _, tc := range []struct{ method, path string }{
		{"GET", "/api/runs//native"},
		{"GET", "/api/runs/x/../y"},
		{"GET", "/api/./runs"},
		{"POST", "/api/runs//cancel"},
		{"POST", "/api//runs"},
		{"GET", "/api"},
		{"POST", "/api"},
		{"GET", "//"},
		{"GET", "/runs//latest"},
		{"GET", "/assets"},
		{"GET", "/assets/./app.js"},
		{"GET", "/assets//app.js"},
	} {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			rec := do(tc.method, tc.path)
			require.Equal(t, 404, rec.Code, "%s", rec.Body)
			require.Empty(t, rec.Header().Get("Location"))
			require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			var e struct{ Error string }
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e), "%s", rec.Body)
			require.Equal(t, "no such endpoint: "+tc.method+" "+tc.path, e.Error)
		})
	}
	for path, ctype := range map[string]string{
		"/":              "text/html; charset=utf-8",
		"/runs/latest":   "text/html; charset=utf-8",
		"/bench":         "text/html; charset=utf-8",
		"/bench/r1":      "text/html; charset=utf-8",
		"/assets/app.js": "text/javascript; charset=utf-8",
		"/api/runs":      "application/json",
	} {
		rec := do("GET", path)
		require.Equal(t, 200, rec.Code, "%s: %s", path, rec.Body)
		require.Equal(t, ctype, rec.Header().Get("Content-Type"), path)
	}
}
