package registry

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUpdateFetchErrorMasksTheQuery: a failed fetch is a *FetchError (the
// CLI's exit 1, not a usage error), and no error of Update shows a query
// value of its URL, where a download's key is (?token=…): Go's *url.Error
// and the "update from" prefix showed it whole. A models file that is
// wrong is not a FetchError.
func TestUpdateFetchErrorMasksTheQuery(t *testing.T) {
	t.Parallel()
	const secret = "T0KEN-s3cret"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad.toml" {
			w.Write([]byte("not toml"))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	cache := filepath.Join(t.TempDir(), "models.toml")
	for name, from := range map[string]string{
		"refused":   "http://127.0.0.1:1/models.toml?token=" + secret, // nothing listens on port 1
		"not-found": srv.URL + "/models.toml?token=" + secret,
		"password":  "http://user:" + secret + "@127.0.0.1:1/models.toml?token=" + secret,
	} {
		_, err := Update(from, cache, nil)
		var fe *FetchError
		require.ErrorAs(t, err, &fe, name)
		require.NotContains(t, err.Error(), secret, name)
		require.Contains(t, err.Error(), "models.toml?token=***", name)
	}
	_, err := Update(srv.URL+"/bad.toml?token="+secret, cache, nil)
	require.Error(t, err)
	require.NotContains(t, err.Error(), secret)
	var fe *FetchError
	require.False(t, errors.As(err, &fe), "a file that does not parse is not a fetch error: %v", err)
}
