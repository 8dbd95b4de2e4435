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

// TestParseWidensItsStdoutPipe: parse writing to a pipe makes the pipe
// hold a MiB (or pipe-max-size, when lower), so that the command reading
// the events is woken less often; what it reads is what parse writes to
// a file.
func TestParseWidensItsStdoutPipe(t *testing.T) {
	t.Parallel()
	limit, err := os.ReadFile("/proc/sys/fs/pipe-max-size")
	require.NoError(t, err)
	max, err := strconv.Atoi(strings.TrimSpace(string(limit)))
	require.NoError(t, err)
	in := "../../testdata/claude/edits.jsonl"

	var want, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"parse", "--agent", "claude", in}, nil, &want, &stderr), stderr.String())

	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	got := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(r); got <- b }()
	status := run([]string{"parse", "--agent", "claude", in}, nil, w, &stderr)
	c, err := r.SyscallConn()
	require.NoError(t, err)
	var size int
	require.NoError(t, c.Control(func(fd uintptr) { size, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) }))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Equal(t, 0, status, stderr.String())
	if max >= 1<<20 {
		require.Equal(t, 1<<20, size)
	} else {
		require.Equal(t, 64<<10, size, "left as it was")
	}
	// Each parse is a run of its own: its id and clock differ.
	own := regexp.MustCompile(`"run":"[^"]*","seq":(\d+),"ts":\d+`)
	require.Equal(t, own.ReplaceAllString(want.String(), "$1"), own.ReplaceAllString(string(<-got), "$1"))
}
