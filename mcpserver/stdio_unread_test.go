package mcpserver_test

import (
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// TestStdioHardBudgetWhileClientReadsNothing: a client that keeps stdin
// open and stops reading stdout holds the answers and notifications of
// its run_agent call, never the run: its hard budget ends the agent and
// what it started in a session of its own on time. Once the client reads
// again, the call is answered (ETIMEDOUT) and the next request too; at
// the client's end none of the server's goroutines is left.
func TestStdioHardBudgetWhileClientReadsNothing(t *testing.T) {
	c := newPipeClient(t, time.Hour)
	c.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_agent","_meta":{"progressToken":"p"},"arguments":{"agent":"claude","prompt":"setsid-escapee","hard_timeout_ms":300}}}`)
	require.Eventually(t, func() bool { return len(c.f.children.PIDs()) > 0 }, 30*time.Second, 5*time.Millisecond, "the agent starts")
	require.Eventually(t, func() bool {
		c.f.mu.Lock()
		defer c.f.mu.Unlock()
		return len(c.f.closed) == 1
	}, 20*time.Second, 5*time.Millisecond, "the run ends at its hard budget while its client reads nothing")
	c.f.mu.Lock()
	require.Equal(t, "timeout", string(c.f.closed[0].Status))
	c.f.mu.Unlock()
	c.f.children.RequireGone(t)

	// The client reads again: the progress notifications that waited,
	// then the call's answer.
	answer := func(id string) gjson.Result {
		t.Helper()
		for {
			line, err := c.out.ReadString('\n')
			require.NoError(t, err)
			if m := gjson.Parse(line); m.Get("id").Raw == id {
				return m
			}
		}
	}
	a := answer("1")
	require.True(t, a.Get("result.isError").Bool(), a.Raw)
	require.Equal(t, "ETIMEDOUT", a.Get("result.structuredContent.error.code").String(), a.Raw)
	c.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	require.True(t, answer("2").Get("result").Exists())

	require.NotEmpty(t, serverGoroutines(), "the server's goroutines are seen")
	require.NoError(t, c.in.Close())
	select {
	case err := <-c.f.runDone:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("ServeStdio did not return at the end of its input")
	}
	require.Eventually(t, func() bool { return serverGoroutines() == "" }, 10*time.Second, 5*time.Millisecond,
		"goroutines of the server are left: %s", serverGoroutines())
}

// serverGoroutines are the stacks of the goroutines running code of
// mcpserver's own files (not its tests'), "" when there are none.
func serverGoroutines() string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var left []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		for _, m := range ownFrame.FindAllStringSubmatch(g, -1) {
			if !strings.HasSuffix(m[1], "_test") {
				left = append(left, g)
				break
			}
		}
	}
	return strings.Join(left, "\n\n")
}

// ownFrame matches a frame of a file of mcpserver, and names the file.
var ownFrame = regexp.MustCompile(`/mcpserver/([a-z_]+)\.go:`)
