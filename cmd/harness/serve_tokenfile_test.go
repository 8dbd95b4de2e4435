//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTokenFileNotRegular: a token file that is a FIFO is refused at once
// (exit 2, one line), where its open waited for a writer and serve hung
// before it said anything; so is a directory.
func TestTokenFileNotRegular(t *testing.T) {
	home := isolate(t)
	fifo := filepath.Join(home, "token.fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	t.Cleanup(func() {
		// A failing test leaves the command in the open: a writer lets it go.
		if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			f.Close()
		}
	})
	dir := filepath.Join(home, "token.dir")
	require.NoError(t, os.Mkdir(dir, 0o700))
	for _, tc := range []struct{ cmd, file, msg string }{
		{"serve", fifo, ": not a regular file (a FIFO)"},
		{"mcp", fifo, ": not a regular file (a FIFO)"},
		{"serve", dir, ": not a regular file (a directory)"},
	} {
		t.Run(tc.cmd+"/"+filepath.Ext(tc.file)[1:], func(t *testing.T) {
			done := make(chan result, 1)
			go func() { done <- invoke(t, "", tc.cmd, "--listen", "127.0.0.1:0", "--token-file", tc.file) }()
			var r result
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s blocked on its token file", tc.cmd)
			}
			require.Equal(t, exitUsage, r.code, r.stderr)
			require.Contains(t, r.stderr, tc.msg)
			require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
		})
	}
}

// A missing token file that is a dangling link is not followed: serve
// refuses it (exit 2, one line) and makes no file where it points; it
// wrote its fresh token there before.
func TestTokenFileDanglingLinkNotFollowed(t *testing.T) {
	home := isolate(t)
	target := filepath.Join(home, "elsewhere", "token")
	require.NoError(t, os.Mkdir(filepath.Dir(target), 0o755))
	link := filepath.Join(home, "token")
	require.NoError(t, os.Symlink(target, link))
	done := make(chan result, 1)
	go func() { done <- invoke(t, "", "serve", "--listen", "127.0.0.1:0", "--token-file", link) }()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("serve took the link and is serving")
	}
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "--token-file "+link+": a link to no file")
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
	_, err := os.Lstat(target)
	require.True(t, os.IsNotExist(err), "a token file was made where the link points")
}
