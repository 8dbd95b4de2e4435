package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSessionsDirUnreadable: a --dir the user cannot read gave exit 1 for
// list, prune (after "removed 0 run(s)") and replay, and 2 for show,
// reparse and export. It is the user's mistake, as a --dir that is no
// directory: 2 for each, one line saying why, nothing read. A symlink
// loop and a path through a file fail as the directory's mode does (the
// same open; a mode does not stop root, who runs this test).
func TestSessionsDirUnreadable(t *testing.T) {
	home := isolate(t)
	loop := filepath.Join(home, "loop")
	require.NoError(t, os.Symlink("loop", loop))
	file := filepath.Join(home, "afile")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	for dir, why := range map[string]error{loop: syscall.ELOOP, filepath.Join(file, "sessions"): syscall.ENOTDIR} {
		for _, args := range [][]string{
			{"list"}, {"list", "--json"}, {"prune", "--older-than", "1h"}, {"prune", "--older-than", "1h", "--dry-run"},
			{"show", "x"}, {"replay", "x"}, {"reparse", "x"}, {"export", "x"}, {"export", "--format", "atif", "x"},
		} {
			r := invoke(t, "", append([]string{"sessions", "--dir", dir}, args...)...)
			require.Equal(t, exitUsage, r.code, "%v: %s", args, r.stderr)
			require.Empty(t, r.stdout, "%v", args)
			require.Equal(t, "harness: sessions: "+dir+" cannot be read: "+why.Error()+"\n", r.stderr, "%v", args)
		}
	}
}
