package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestSessionsExportLongCutLine: a log whose last line is cut and over
// 4 MiB (three lines, then 64 MiB of zeros with no newline: a harness
// killed on a disk that kept the file's size) is exported as one cut
// short: the lines before it, extra.log_cut. Both formats failed with
// "bufio.Scanner: token too long".
func TestSessionsExportLongCutLine(t *testing.T) {
	_, run, path := loggedRun(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	head := strings.Join(strings.SplitAfter(string(data), "\n")[:3], "")
	require.NoError(t, os.WriteFile(path, []byte(head), 0o600))
	require.NoError(t, os.Truncate(path, int64(len(head))+64<<20)) // a hole: no disk

	atif := invoke(t, "", "sessions", "export", "--format", "atif", run)
	require.Zero(t, atif.code, atif.stderr)
	var tr struct{ Extra map[string]any }
	require.NoError(t, json.Unmarshal([]byte(atif.stdout), &tr))
	require.Equal(t, true, tr.Extra["log_cut"])

	otlp := invoke(t, "", "sessions", "export", "--format", "otlp-json", run)
	require.Zero(t, otlp.code, otlp.stderr)
	_, err = (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(otlp.stdout))
	require.NoError(t, err)
}
