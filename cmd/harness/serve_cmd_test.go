package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/harnesstest"
)

// TestServeRefuses: a listener off loopback without a token, and a token
// file that is not one, are usage errors with one line.
func TestServeRefuses(t *testing.T) {
	home := isolate(t)
	short := filepath.Join(home, "short")
	require.NoError(t, os.WriteFile(short, []byte("abc\n"), 0o600))
	for name, tc := range map[string]struct {
		args []string
		msg  string
	}{
		"all-interfaces": {[]string{"serve", "--listen", "0.0.0.0:0"}, "not a loopback address"},
		"lan":            {[]string{"serve", "--listen", "192.168.1.10:7777"}, "not a loopback address"},
		"short-token":    {[]string{"serve", "--listen", "127.0.0.1:0", "--token-file", short}, "at least 16"},
		"bad-address":    {[]string{"serve", "--listen", "127.0.0.1:notaport"}, "serve:"},
	} {
		t.Run(name, func(t *testing.T) {
			r := invoke(t, "", tc.args...)
			require.Equal(t, exitUsage, r.code, r.stderr)
			require.Contains(t, r.stderr, tc.msg)
			require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
		})
	}
}

// TestServeRun: `harness serve` starts a run through the API with the
// configuration's agent (a fake), streams it as NDJSON, lists it, and
// ends cleanly.
func TestServeRun(t *testing.T) {
	home := isolateWith(t, fakeClaude("slow-drip"))
	tokenFile := filepath.Join(home, "token")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	old := serveContext
	serveContext = func() context.Context { return ctx }
	t.Cleanup(func() { serveContext = old })
	errR, errW := io.Pipe()
	status := make(chan int, 1)
	go func() {
		status <- run([]string{"serve", "--listen", "127.0.0.1:0", "--token-file", tokenFile}, strings.NewReader(""), io.Discard, errW)
		errW.Close()
	}()
	line, err := bufio.NewReader(errR).ReadString('\n')
	require.NoError(t, err)
	go io.Copy(io.Discard, errR)
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "harness serve: ")
	require.True(t, ok, line)
	base = strings.TrimSuffix(base, "/")

	tok, err := os.ReadFile(tokenFile)
	require.NoError(t, err, "serve created the token file")
	st, err := os.Stat(tokenFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	api := harnesstest.ServeAPI{URL: base, Token: strings.TrimSpace(string(tok))}
	started := api.Start(t, `{"agent":"claude-code","prompt":"drip"}`)
	require.Equal(t, "claude", started.Agent)

	res := api.Events(t, ctx, started.Run, map[string]string{"Accept": "application/x-ndjson"})
	stream, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.NoError(t, event.CheckNDJSON(stream))
	lines := strings.Split(strings.TrimSpace(string(stream)), "\n")
	require.Contains(t, lines[len(lines)-1], `"type":"result"`)
	require.Contains(t, lines[len(lines)-1], `"status":"success"`)
	logged, err := os.ReadFile(filepath.Join(home, ".local", "share", "harness", "sessions", started.Run+".ndjson"))
	require.NoError(t, err)
	require.Equal(t, string(logged), string(stream))

	runs := api.JSON(t, "/api/runs?agent=claude", http.StatusOK)["runs"].([]any)
	require.Len(t, runs, 1)
	require.Equal(t, started.Run, runs[0].(map[string]any)["run"])

	cancel()
	select {
	case code := <-status:
		require.Equal(t, exitOK, code)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}
