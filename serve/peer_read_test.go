//go:build linux

package serve

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLoopbackReadsOwnUIDOnly: on a loopback listener, reads without the
// token are the server's own uid's; another uid's need the token (401),
// or are refused when the server has none (403), as the store they would
// read is private to the server's uid.
func TestLoopbackReadsOwnUIDOnly(t *testing.T) {
	const token = "peer-test-token-0123456789abcdef"
	for _, tok := range []string{token, ""} {
		srv := httptest.NewUnstartedServer(New(Config{Dir: t.TempDir(), Token: tok, Open: true}))
		srv.Config.ConnContext = ConnContext
		srv.Start()
		defer srv.Close()
		resp, err := http.Get(srv.URL + "/api/runs")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "our own uid reads without the token")
		if tok == "" {
			require.Equal(t, "status 403", asOtherUser(t, peerGetEnv+"="+srv.URL+"/api/runs"))
			continue
		}
		require.Equal(t, "status 401", asOtherUser(t, peerGetEnv+"="+srv.URL+"/api/runs/latest"))
		require.Equal(t, "status 200", asOtherUser(t, peerGetEnv+"="+srv.URL+"/api/runs?token="+token))
	}
}
