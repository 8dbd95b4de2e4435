package main

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestParseWidensItsPipes: parse reading a pipe, and writing to one,
// makes each hold a MiB (or pipe-max-size, when lower): a flood piped in
// wakes it, and its events wake their reader, less often. What it writes
// is what it writes to a buffer from the file.
func TestParseWidensItsPipes(t *testing.T) {
	t.Parallel()
	limit, err := os.ReadFile("/proc/sys/fs/pipe-max-size")
	require.NoError(t, err)
	max, err := strconv.Atoi(strings.TrimSpace(string(limit)))
	require.NoError(t, err)
	want := 64 << 10 // left as it was
	if max >= 1<<20 {
		want = 1 << 20
	}
	in := "../../testdata/claude/edits.jsonl"
	capture, err := os.ReadFile(in)
	require.NoError(t, err)

	var fromFile, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"parse", "--agent", "claude", in}, nil, &fromFile, &stderr), stderr.String())

	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	defer inR.Close()
	go func() { _, _ = inW.Write(capture); inW.Close() }()
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	defer outR.Close()
	got := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(outR); got <- b }()
	status := run([]string{"parse", "--agent", "claude", "-"}, inR, outW, &stderr)
	require.NoError(t, outW.Close())
	require.Equal(t, 0, status, stderr.String())
	require.Equal(t, want, pipeSize(t, inR), "stdin's pipe")
	require.Equal(t, want, pipeSize(t, outR), "stdout's pipe")
	// Each parse is a run of its own: its id and clock differ.
	own := regexp.MustCompile(`"run":"[^"]*","seq":(\d+),"ts":\d+`)
	require.Equal(t, own.ReplaceAllString(fromFile.String(), "$1"), own.ReplaceAllString(string(<-got), "$1"))
}

// pipeSize is how many bytes the pipe f is an end of holds.
func pipeSize(t *testing.T, f *os.File) int {
	c, err := f.SyscallConn()
	require.NoError(t, err)
	var size int
	require.NoError(t, c.Control(func(fd uintptr) { size, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) }))
	require.NoError(t, err)
	return size
}
