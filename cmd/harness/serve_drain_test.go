package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/harnesstest"
)

// startServe runs `harness serve` in process on a free loopback port,
// its token written to home/token, and returns its API and the channel
// its exit status comes on.
func startServe(t *testing.T, home string) (harnesstest.ServeAPI, <-chan int) {
	t.Helper()
	tokenFile := filepath.Join(home, "token")
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
	tok, err := os.ReadFile(tokenFile)
	require.NoError(t, err, "serve created the token file")
	return harnesstest.ServeAPI{URL: strings.TrimSuffix(base, "/"), Token: strings.TrimSpace(string(tok))}, status
}

// serveInProcess is startServe under a context the test stops it by (as
// a first signal does). It returns the API and stop, which stops the
// server and returns its exit status.
func serveInProcess(t *testing.T, home string) (harnesstest.ServeAPI, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	old := serveContext
	serveContext = func() context.Context { return ctx }
	t.Cleanup(func() { serveContext = old })
	api, status := startServe(t, home)
	stopped := false
	stop := func() int {
		stopped = true
		cancel()
		return <-status
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	return api, stop
}

// TestServeShutdownDrainsStreams: stopping serve interrupts its runs, and
// a client following one gets the run's cancelled result and the end:
// its stream was cut at once, before the result the run then wrote, with
// no end nor reconnect.
func TestServeShutdownDrainsStreams(t *testing.T) {
	for _, format := range []string{"sse", "ndjson"} {
		t.Run(format, func(t *testing.T) {
			home := isolateWith(t, fakeClaude("hang-in-tool"))
			api, stop := serveInProcess(t, home)
			started := api.Start(t, `{"agent":"claude","prompt":"x","cwd":`+strconv.Quote(t.TempDir())+`}`)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			hdr := map[string]string{}
			if format == "ndjson" {
				hdr["Accept"] = "application/x-ndjson"
			}
			res := api.Events(t, ctx, started.Run, hdr)
			defer res.Body.Close()
			status := make(chan int, 1)
			var lines []string
			sc := bufio.NewScanner(res.Body)
			sc.Buffer(nil, 4<<20)
			for sc.Scan() {
				line := sc.Text()
				if strings.Contains(line, `{"v":1,"type":"tool_start"`) {
					go func() { status <- stop() }() // the run is in its tool call
				}
				lines = append(lines, line)
			}
			require.NoError(t, sc.Err())
			require.Equal(t, 0, <-status)

			var result string
			for _, l := range lines {
				if strings.Contains(l, `{"v":1,"type":"result"`) {
					result = l
				}
			}
			require.Contains(t, result, `"status":"cancelled"`, "the stream got the run's result:\n%s", strings.Join(lines, "\n"))
			if format == "ndjson" {
				require.Equal(t, result, lines[len(lines)-1])
				return
			}
			require.Equal(t, []string{"event: end", `data: {"last_event_id":` + resultSeq(t, result) + `}`, ""}, lines[len(lines)-3:])
		})
	}
}

func resultSeq(t *testing.T, line string) string {
	t.Helper()
	line = strings.TrimPrefix(line, "data: ")
	var ev struct{ Seq int64 }
	require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
	return strconv.FormatInt(ev.Seq, 10)
}
