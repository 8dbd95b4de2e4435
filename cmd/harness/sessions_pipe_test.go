package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClosedPipeKillsFilters: a command that does not own its stdout (all
// but run, parse and session) dies of SIGPIPE, saying nothing, when its
// reader leaves (| head), as a filter does, every time. The main
// goroutine's failed write raced the signal's handler: it often reported
// "write /dev/stdout: broken pipe" and exited 1, and when the handler
// came first it slept a minute before that.
func TestClosedPipeKillsFilters(t *testing.T) {
	home := isolate(t)
	dir := filepath.Join(home, "store")
	require.NoError(t, os.Mkdir(dir, 0o700))
	// Enough runs that the list far outgrows the pipe.
	for i := range 1500 {
		id := fmt.Sprintf("run_01PIPE%018d", i)
		meta := fmt.Sprintf(`{"run":%q,"agent":"claude","prompt_preview":"prompt %d","start":"2026-01-02T03:04:05Z","end":"2026-01-02T03:05:05Z","status":"ok"}`, id, i)
		require.NoError(t, os.WriteFile(filepath.Join(dir, id+".meta.json"), []byte(meta), 0o600))
	}
	// One big run: each output is far over the pipe's 64 KiB.
	run := "run_01PIPEBIG00000000000000000"
	one, err := os.ReadFile(claudeCapture(t, home))
	require.NoError(t, err)
	// Its turns again and again, with ids of their own (the adapter
	// drops a message it has seen), between its init and its result.
	lines := strings.SplitAfter(strings.TrimSuffix(string(one), "\n"), "\n")
	body := strings.Join(lines[1:len(lines)-1], "")
	var b strings.Builder
	b.WriteString(lines[0])
	for i := range 60 {
		b.WriteString(strings.ReplaceAll(body, "_mock0", fmt.Sprintf("_mock%d", i)))
	}
	b.WriteString(lines[len(lines)-1])
	native := filepath.Join(dir, run+".native.jsonl")
	require.NoError(t, os.WriteFile(native, []byte(b.String()), 0o600))
	parsed := invoke(t, "", "parse", "-a", "claude", native)
	require.Zero(t, parsed.code, parsed.stderr)
	require.NoError(t, os.WriteFile(filepath.Join(dir, run+".ndjson"), []byte(parsed.stdout), 0o600))
	noise := make([]byte, 256<<10) // what gzip cannot shrink, for the tar.gz
	_, _ = rand.Read(noise)
	require.NoError(t, os.WriteFile(filepath.Join(dir, run+".stderr.log"), []byte(hex.EncodeToString(noise)), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, run+".meta.json"), []byte(fmt.Sprintf(
		`{"run":%q,"agent":"claude","start":"2026-01-02T03:04:05Z","end":"2026-01-02T03:05:05Z","status":"ok"}`, run)), 0o600))

	commands := [][]string{
		{"list"},
		{"list", "--json"},
		{"export", run},
		{"export", "--format", "atif", run},
		{"export", "--format", "otlp-json", run},
		{"replay", run},
		{"reparse", run},
	}
	for _, args := range commands {
		name := strings.Join(args, " ")
		for i := range 8 {
			r, w, err := os.Pipe()
			require.NoError(t, err)
			cmd := exec.Command(harnessBinary(t), append([]string{"sessions", "--dir", dir}, args...)...)
			cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
			var errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = w, &errb
			require.NoError(t, cmd.Start())
			w.Close()
			n, err := r.Read(make([]byte, 4096))
			require.NoError(t, err, name)
			require.NotZero(t, n, name)
			r.Close() // as head does once it has what it wanted
			err = cmd.Wait()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "%s (#%d) ended: %v, stderr: %s", name, i, err, errb.String())
			ws := ee.Sys().(syscall.WaitStatus)
			require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGPIPE,
				"%s (#%d) died of SIGPIPE, not %v: stderr: %s", name, i, err, errb.String())
			require.Empty(t, errb.String(), name)
		}
	}
}
