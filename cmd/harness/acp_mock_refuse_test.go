package main

import (
	"bufio"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// TestACPMockRefusesUnpointable: under acp --mock, a prompt for an agent
// the scripted model cannot drive (Cursor) ran it unpointed, against its
// own service (the pointing error was dropped). It is refused with why,
// in run --mock's words; an agent that calls no model (nop) still runs.
func TestACPMockRefusesUnpointable(t *testing.T) {
	for _, tc := range []struct {
		agent, error, stop string
	}{
		{"cursor", "mock: cursor cannot run on the scripted model (it talks to its own service only)", ""},
		{"nop", "", "end_turn"},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			isolate(t)
			answer := acpSession(t, "acp", "--agent", tc.agent, "--mock", "text", "--no-log")
			res := answer(`"p"`)
			require.Equal(t, tc.error, res.Get("error.data.task").String(), res.Raw)
			require.Equal(t, tc.stop, res.Get("result.stopReason").String(), res.Raw)
		})
	}
}

// acpSession runs harness with args as an ACP server, opens a session in
// a temporary directory and sends it the prompt of id "p"; answer returns
// the answer to a request id (its JSON).
func acpSession(t *testing.T, args ...string) (answer func(id string) gjson.Result) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		run(args, inR, outW, io.Discard)
		outW.Close()
	}()
	t.Cleanup(func() {
		close(quit) // what the test did not read is dropped: the server never waits on it
		inW.Close()
		<-done
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-quit:
			}
		}
		io.Copy(io.Discard, outR)
	}()
	answer = func(id string) gjson.Result {
		t.Helper()
		for {
			select {
			case l := <-lines:
				if m := gjson.Parse(l); m.Get("id").Raw == id && !m.Get("method").Exists() {
					return m
				}
			case <-time.After(30 * time.Second): // a hang's bound, not a wait
				t.Fatalf("no answer to %s", id)
			}
		}
	}
	send := func(s string) {
		t.Helper()
		_, err := io.WriteString(inW, s+"\n")
		require.NoError(t, err)
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	answer("0")
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, t.TempDir()))
	sid := answer("1").Get("result.sessionId").String()
	require.NotEmpty(t, sid)
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"x"}]}}`, sid))
	return answer
}
