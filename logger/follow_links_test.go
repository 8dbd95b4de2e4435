//go:build unix

package logger

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTailRefusesLinkOut: a log that is a symbolic link out of the store
// is not tailed nor followed (serve's stream, its list's tally, mcp).
func TestTailRefusesLinkOut(t *testing.T) {
	t.Parallel()
	host := filepath.Join(t.TempDir(), "id_rsa")
	require.NoError(t, os.WriteFile(host, []byte(`{"v":1,"type":"result","seq":1,"status":"success"}`+"\n"), 0o600))
	dir := t.TempDir()
	require.NoError(t, os.Symlink(host, Path(dir, "run_01OUT", ExtEvents)))
	_, err := OpenTail(dir, "run_01OUT")
	require.ErrorIs(t, err, ErrNotRegular)
	err = Follow(context.Background(), dir, "run_01OUT", FollowOptions{}, func(int64, []byte) error {
		t.Fatal("a line of the host file")
		return nil
	})
	require.ErrorIs(t, err, ErrNotRegular)
}
