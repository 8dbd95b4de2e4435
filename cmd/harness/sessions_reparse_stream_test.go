package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReparseStreamsTheNativeLog: reparse read a run's native log whole
// before parsing it: a log whose last line was cut, then hundreds of
// megabytes of zeros (a disk that lost its tail), took twice their size
// of memory. It now parses the log from the file, its protocol told from
// a bounded head: its peak memory does not grow with the log.
func TestReparseStreamsTheNativeLog(t *testing.T) {
	home := isolate(t)
	dir := filepath.Join(home, "store")
	require.NoError(t, os.Mkdir(dir, 0o700))
	one, err := os.ReadFile(claudeCapture(t, home))
	require.NoError(t, err)
	lines := strings.SplitAfter(string(one), "\n")
	run := "run_01REPARSEZEROS0000000000"
	require.NoError(t, os.WriteFile(filepath.Join(dir, run+".meta.json"), []byte(fmt.Sprintf(
		`{"run":%q,"agent":"claude","start":"2026-01-02T03:04:05Z","status":"running"}`, run)), 0o600))
	native := filepath.Join(dir, run+".native.jsonl")
	head := strings.Join(lines[:3], "")
	// Peak memory of reparse with mb megabytes of zeros after the head.
	peak := func(mb int64) int64 {
		require.NoError(t, os.WriteFile(native, []byte(head), 0o600))
		require.NoError(t, os.Truncate(native, int64(len(head))+mb<<20)) // a hole: no disk
		var out, errb bytes.Buffer
		cmd := exec.Command(harnessBinary(t), "sessions", "--dir", dir, "reparse", run)
		cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
		cmd.Stdout, cmd.Stderr = &out, &errb
		require.NoError(t, cmd.Run(), errb.String())
		require.Contains(t, out.String(), `"code":"line_truncated"`, "the zeros, one line cut to the cap")
		require.Contains(t, out.String(), `"type":"result"`)
		return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss >> 10
	}
	// Both over the line cap (16 MiB), which the parse holds either way.
	small, big := peak(24), peak(160)
	t.Logf("peak RSS: %d MB with 24 MB of zeros, %d MB with 160", small, big)
	require.Less(t, big-small, int64(64), "growth of peak RSS (MB) for 136 MB more of the log")
}
