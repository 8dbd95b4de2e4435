package serve_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBearerSchemeAnyCase: the auth scheme's name is case-insensitive
// (RFC 7235 2.1), so "bearer <token>" is the token as "Bearer <token>"
// is: it was 401. Another scheme, or the wrong token, still is.
func TestBearerSchemeAnyCase(t *testing.T) {
	f := newFixture(t, "serve-gated")
	tok := f.api.Token
	for _, c := range []struct {
		auth string
		want int
	}{
		{"Bearer " + tok, http.StatusNotFound},
		{"bearer " + tok, http.StatusNotFound},
		{"BEARER " + tok, http.StatusNotFound},
		{"bEaReR  " + tok, http.StatusNotFound},
		{"Basic " + tok, http.StatusUnauthorized},
		{"Bearer" + tok, http.StatusUnauthorized},
		{"bearer wrong-token-0123456789", http.StatusUnauthorized},
		{tok, http.StatusUnauthorized},
	} {
		res := f.api.Do(t, t.Context(), "POST", "/api/runs/run_none/cancel", "", map[string]string{"Authorization": c.auth})
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Equal(t, c.want, res.StatusCode, "%q: %s", c.auth, b)
	}
}
