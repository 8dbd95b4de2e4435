package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestModelsUpdateCacheWriteFailure: a good --from file whose cache
// cannot be written (here a file where the cache's directory belongs; a
// full disk or a read-only directory alike) is a failure, exit 1, in one
// line naming the cache: it exited 2, a usage error, which it is not.
func TestModelsUpdateCacheWriteFailure(t *testing.T) {
	home := isolate(t)
	src := filepath.Join(home, "models.toml")
	require.NoError(t, os.WriteFile(src, []byte("[aliases.fast]\nclaude = \"claude-x\"\n"), 0o600))
	blocker := filepath.Join(home, ".cache", "harness")
	require.NoError(t, os.MkdirAll(filepath.Dir(blocker), 0o700))
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))

	r := invoke(t, "", "models", "update", "--from", src)
	require.Equal(t, exitAgentFailed, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Equal(t, "harness: registry: update: cannot write the model cache "+filepath.Join(blocker, "models.toml")+": mkdir "+blocker+": not a directory\n", r.stderr)
}
