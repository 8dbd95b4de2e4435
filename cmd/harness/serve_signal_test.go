//go:build unix

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/process"
)

// TestServeSecondSignalKills: SIGTERM to harness serve interrupts its
// runs; a second signal while they end kills their groups at once, as a
// second Ctrl-C does to harness run, and serve exits 0 with no agent
// left. (The first signal's handler stayed registered and swallowed the
// rest: serve waited out the kill grace, deaf to every signal.)
func TestServeSecondSignalKills(t *testing.T) {
	home := isolateWith(t, "kill_grace = \"1m\"\n"+fakeClaude("ignore-sigterm"))
	// serve's own handler stops at its return; the signals this test
	// sends itself until then must never reach the default action.
	guard := make(chan os.Signal, 1)
	signal.Notify(guard, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(guard)
	api, status := startServe(t, home)
	started := api.Start(t, `{"agent":"claude","prompt":"x","cwd":`+strconv.Quote(t.TempDir())+`}`)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := api.Events(t, ctx, started.Run, map[string]string{"Accept": "application/x-ndjson"})
	var ev struct{ PID int }
	require.NoError(t, json.NewDecoder(res.Body).Decode(&ev)) // session_start
	res.Body.Close()
	require.NotZero(t, ev.PID)
	t.Cleanup(func() {
		if t.Failed() {
			_ = syscall.Kill(-ev.PID, syscall.SIGKILL)
		}
	})

	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	select {
	case code := <-status:
		t.Fatalf("serve exited (%d) before its run ended", code)
	case <-time.After(time.Second): // interrupted, deaf: it waits
	}
	require.True(t, process.Alive(ev.PID))
	// The runtime folds a signal into one still pending: sent until seen.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	bound := time.After(20 * time.Second)
	for {
		select {
		case code := <-status:
			require.Equal(t, 0, code)
			require.False(t, process.Alive(ev.PID), "the agent outlived serve")
			log, err := os.ReadFile(filepath.Join(home, ".local", "share", "harness", "sessions", started.Run+".ndjson"))
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSpace(string(log)), "\n")
			require.Contains(t, lines[len(lines)-1], `"status":"cancelled"`)
			require.Contains(t, lines[len(lines)-1], `"signal":"SIGKILL"`)
			return
		case <-tick.C:
			require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
		case <-bound:
			t.Fatal("a second signal left serve waiting for its run (kill grace 1m)")
		}
	}
}
