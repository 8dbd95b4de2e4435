package logger

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/agentharness/harness/event"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
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

// TestFloodWritesBehind: in a flood, the native log is sent to the disk
// step by step and a step the disk holds is dropped from the page cache
// at the next one; the file still reads back whole.
func TestFloodWritesBehind(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "run_b", Meta{Agent: "claude"}, WithRedactor(NewRedactor(nil)))
	require.NoError(t, err)
	path := filepath.Join(dir, "run_b"+ExtNative)
	line := []byte(`{"text":"` + strings.Repeat("y", 1000) + `"}`)
	var want bytes.Buffer
	i := 0
	writeUntil := func(done func() bool) {
		for ; !done(); i++ {
			l := fmt.Appendf(nil, "%d %s", i, line)
			want.Write(append(l, '\n'))
			require.NoError(t, s.WriteNative(event.StreamStdout, l))
		}
	}
	writeUntil(func() bool { return s.natBuf.behind >= 2*behindStep })
	// Once the disk has every page written so far, the next step drops
	// the one before it: then none of its pages is left in memory.
	require.NoError(t, s.native.Sync())
	from, to := s.natBuf.behind, s.natBuf.behind
	writeUntil(func() bool { return s.natBuf.behind > to })
	require.Equal(t, from, s.natBuf.dropped)
	resident := residentPages(t, path, s.natBuf.dropped-behindStep, s.natBuf.dropped)
	require.Zero(t, resident, "pages of a step the disk held, left in the page cache")

	require.NoError(t, s.Close(Meta{}))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want.Bytes(), got), "the file reads back as written")
}

// residentPages counts the whole pages of the file at path, in [from,
// to), that are in the page cache.
func residentPages(t *testing.T, path string, from, to int64) int {
	page := int64(os.Getpagesize())
	from, to = (from+page-1)/page*page, to/page*page
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), from, int(to-from), unix.PROT_READ, unix.MAP_SHARED)
	require.NoError(t, err)
	defer unix.Munmap(m)
	vec := make([]byte, int64(len(m))/page)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0])))
	require.Zero(t, errno, "mincore")
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}
