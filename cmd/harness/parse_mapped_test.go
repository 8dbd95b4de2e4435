package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/mapfile"
)

// TestParseFileShortenedWhileRead: harness parse maps the file it is
// given; one cut short meanwhile ends the parse with exit 1, a one-line
// error and the stream's error and result, not a crash (SIGBUS).
func TestParseFileShortenedWhileRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "codex.jsonl")
	line := `{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"` + strings.Repeat("x", 4000) + `"}}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat(line, 64)), 0o600))
	mapInput = func(f *os.File, off int64) []byte {
		data := mapfile.MapFrom(f, off)
		require.NotNil(t, data)
		require.NoError(t, os.Truncate(path, 0))
		return data
	}
	t.Cleanup(func() { mapInput = mapfile.MapFrom })
	var out, errb bytes.Buffer
	code := run([]string{"parse", "--agent", "codex", path}, strings.NewReader(""), &out, &errb)
	require.Equal(t, 1, code, errb.String())
	require.Equal(t, "harness: parse: the file was shortened while it was read\n", errb.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Contains(t, lines[len(lines)-2], `"type":"error"`)
	require.Contains(t, lines[len(lines)-1], `"type":"result"`)
}

// TestParseStdinFromAFile: stdin redirected from a file is mapped from
// the offset it was left at (here past a first line, off any page
// boundary), parsed as that rest of the file given by name is, and left
// at the file's end, as reading it would leave it.
func TestParseStdinFromAFile(t *testing.T) {
	capture, err := os.ReadFile(filepath.Join("..", "..", "testdata", "codex", "tools.jsonl"))
	require.NoError(t, err)
	dir := t.TempDir()
	rest := filepath.Join(dir, "rest.jsonl")
	require.NoError(t, os.WriteFile(rest, capture, 0o600))
	skipped := "a line a script read before harness\n"
	whole := filepath.Join(dir, "whole.jsonl")
	require.NoError(t, os.WriteFile(whole, append([]byte(skipped), capture...), 0o600))

	var byName, byStdin, errb bytes.Buffer
	require.Zero(t, run([]string{"parse", "--agent", "codex", rest}, strings.NewReader(""), &byName, &errb), errb.String())

	stdin, err := os.Open(whole)
	require.NoError(t, err)
	defer stdin.Close()
	_, err = stdin.Seek(int64(len(skipped)), io.SeekStart)
	require.NoError(t, err)
	var mappedLen int
	mapInput = func(f *os.File, off int64) []byte {
		data := mapfile.MapFrom(f, off)
		mappedLen = len(data)
		return data
	}
	t.Cleanup(func() { mapInput = mapfile.MapFrom })
	require.Zero(t, run([]string{"parse", "--agent", "codex"}, stdin, &byStdin, &errb), errb.String())
	require.Equal(t, len(capture), mappedLen, "stdin was mapped from its offset")
	// Codex prints no times: its duration is the parse's own wall time.
	volatile := regexp.MustCompile(`"(run|ts|duration_ms)":("[^"]*"|[0-9]+),`)
	require.Equal(t, volatile.ReplaceAllString(byName.String(), ""), volatile.ReplaceAllString(byStdin.String(), ""))
	at, err := stdin.Seek(0, io.SeekCurrent)
	require.NoError(t, err)
	require.Equal(t, int64(len(skipped)+len(capture)), at, "stdin is left at the end")
}
