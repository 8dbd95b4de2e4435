package logger

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentharness/harness/event"
	"github.com/stretchr/testify/require"
)

// TestFloodReservesBlocks: in a flood, the native log's blocks are
// allocated ahead of its writes while its size is only what was written;
// Close gives the blocks past the end back.
func TestFloodReservesBlocks(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "run_r", Meta{Agent: "claude"}, WithRedactor(NewRedactor(nil)))
	require.NoError(t, err)
	path := filepath.Join(dir, "run_r"+ExtNative)
	line := []byte(`{"text":"` + strings.Repeat("y", 1000) + `"}`)
	var want bytes.Buffer
	for i := 0; s.natBuf.run < floodWrites+2; i++ {
		l := fmt.Appendf(nil, "%d %s", i, line)
		want.Write(append(l, '\n'))
		require.NoError(t, s.WriteNative(event.StreamStdout, l))
	}
	size, allocated := fileBlocks(t, path)
	require.Equal(t, s.natBuf.written, size, "readers see what was written, no more")
	require.Greater(t, s.natBuf.reserved, size+1<<20)
	require.GreaterOrEqual(t, allocated, s.natBuf.reserved, "blocks reserved past the end")
	require.NoError(t, s.Close(Meta{}))
	size, allocated = fileBlocks(t, path)
	require.Equal(t, int64(want.Len()), size)
	require.Less(t, allocated, size+64<<10, "Close gave the reserved blocks back")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want.Bytes(), got))
}

// fileBlocks returns the size of the file at path and the bytes of its
// allocated blocks.
func fileBlocks(t *testing.T, path string) (size, allocated int64) {
	fi, err := os.Stat(path)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	return fi.Size(), st.Blocks * 512
}
