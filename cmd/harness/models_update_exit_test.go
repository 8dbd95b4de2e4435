package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestModelsUpdateFetchFailure: a URL that cannot be fetched is a
// failure, exit 1, not a usage error (it exited 2), and its one line
// shows no query value (?token=… was printed whole, twice). A --from
// file that is not there stays a usage error.
func TestModelsUpdateFetchFailure(t *testing.T) {
	home := isolate(t)
	const secret = "T0KEN-s3cret"
	r := invoke(t, "", "models", "update", "--from", "http://127.0.0.1:1/models.toml?token="+secret) // nothing listens on port 1
	require.Equal(t, exitAgentFailed, r.code, r.stderr)
	require.NotContains(t, r.stderr, secret)
	require.Contains(t, r.stderr, "harness: registry: update from http://127.0.0.1:1/models.toml?token=***: ")
	_, err := os.Stat(filepath.Join(home, ".cache", "harness", "models.toml"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing written")

	r = invoke(t, "", "models", "update", "--from", filepath.Join(home, "none.toml"))
	require.Equal(t, exitUsage, r.code, r.stderr)
}
