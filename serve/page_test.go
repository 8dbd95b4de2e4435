package serve_test

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPageRoutes: every error is JSON, outside /api/ too (ServeMux
// answered a text 404, and a text 405 for POST /), and whatever serves
// the page's HTML carries its Content-Security-Policy: /assets/ served
// index.html without it.
func TestPageRoutes(t *testing.T) {
	f := newFixture(t, "serve-lines")
	const csp = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:"
	for _, tc := range []struct {
		method, path string
		status       int
		ctype        string
	}{
		{"GET", "/", 200, "text/html; charset=utf-8"},
		{"GET", "/runs/latest", 200, "text/html; charset=utf-8"},
		{"GET", "/assets/app.js", 200, "text/javascript; charset=utf-8"},
		{"POST", "/", 404, "application/json"},
		{"DELETE", "/runs/x", 404, "application/json"},
		{"GET", "/nothing", 404, "application/json"},
		{"GET", "/assets/", 404, "application/json"},
		{"GET", "/assets/vendor/", 404, "application/json"},
		{"GET", "/assets/nope.js", 404, "application/json"},
	} {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			res := f.api.Do(t, t.Context(), tc.method, tc.path, "", nil)
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			require.Equal(t, tc.status, res.StatusCode, "%s", b)
			require.Equal(t, tc.ctype, res.Header.Get("Content-Type"), "%s", b)
			if tc.status != 200 {
				var e struct{ Error string }
				require.NoError(t, json.Unmarshal(b, &e), "%s", b)
				require.NotEmpty(t, e.Error)
				return
			}
			require.Equal(t, csp, res.Header.Get("Content-Security-Policy"))
			require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
		})
	}
}
