package main

import (
	"bytes"
	"os"
	"path/filepath"
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
	mapInput = func(f *os.File) []byte {
		data := mapfile.Map(f)
		require.NotNil(t, data)
		require.NoError(t, os.Truncate(path, 0))
		return data
	}
	t.Cleanup(func() { mapInput = mapfile.Map })
	var out, errb bytes.Buffer
	code := run([]string{"parse", "--agent", "codex", path}, strings.NewReader(""), &out, &errb)
	require.Equal(t, 1, code, errb.String())
	require.Equal(t, "harness: parse: the file was shortened while it was read\n", errb.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Contains(t, lines[len(lines)-2], `"type":"error"`)
	require.Contains(t, lines[len(lines)-1], `"type":"result"`)
}
