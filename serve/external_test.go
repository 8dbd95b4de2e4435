package serve_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/logger"
)

// TestExternalRun: a run another harness process is writing (here, a
// session written without the server knowing) is listed as running, and
// its stream follows the log as it grows, to the result and the end.
func TestExternalRun(t *testing.T) {
	f := newFixture(t, "serve-gated")
	const run = "run_01EXTERNAL000000000000000"
	sess, err := logger.Open(f.dir, run, logger.Meta{Agent: "codex", PromptPreview: "elsewhere"}, logger.WithRedactor(logger.NewRedactor(nil)))
	require.NoError(t, err)
	line := func(seq int, typ, extra string) string {
		return fmt.Sprintf(`{"v":1,"type":%q,"run":%q,"seq":%d,"ts":%d%s}`, typ, run, seq, 1795468000000+seq, extra)
	}
	write := func(l string) { require.NoError(t, sess.WriteEvent([]byte(l))) }
	write(line(1, "session_start", `,"agent":"codex","cwd":"/w","pty":false,"argv":[]`))
	write(line(2, "tool_start", `,"call_id":"c1","name":"shell","kind":"shell","input":{},"command":"ls"`))

	list := f.api.JSON(t, "/api/runs?status=running", 200)["runs"].([]any)
	require.Len(t, list, 1)
	require.Equal(t, run, list[0].(map[string]any)["run"])
	require.Nil(t, list[0].(map[string]any)["live"], "not this server's run")
	require.EqualValues(t, 1, list[0].(map[string]any)["tool_calls"])

	res := f.api.Events(t, context.Background(), run, nil)
	defer res.Body.Close()
	var got strings.Builder
	n := 0
	readSSE(t, res.Body, func(m sse) bool {
		if m.event == "end" {
			return false
		}
		got.WriteString(m.data + "\n")
		n++
		switch n {
		case 2: // live: the rest is written only now
			write(line(3, "tool_end", `,"call_id":"c1","name":"shell","kind":"shell","status":"ok","exit_code":0,"duration_ms":4`))
		case 3:
			write(line(4, "result", `,"status":"success","text":"ok","duration_ms":9,"usage":{},"stats":{"native_lines":0,"unparsed_lines":0,"events":4,"tool_calls":1}`))
		}
		return true
	})
	require.Equal(t, 4, n)
	require.NoError(t, sess.Close(logger.Meta{Status: "success"}))
	require.Equal(t, f.logOf(t, run), got.String())
	require.Equal(t, "success", f.api.JSON(t, "/api/runs/"+run, 200)["status"])
}

// TestExternalRunDied: a writer that closes its log without a result (its
// harness was killed mid-run) ends the stream rather than hanging it.
func TestExternalRunDied(t *testing.T) {
	f := newFixture(t, "serve-gated")
	const run = "run_01EXTERNALDIED0000000000"
	sess, err := logger.Open(f.dir, run, logger.Meta{Agent: "codex"}, logger.WithRedactor(logger.NewRedactor(nil)))
	require.NoError(t, err)
	require.NoError(t, sess.WriteEvent([]byte(`{"v":1,"type":"session_start","run":"`+run+`","seq":1,"ts":1,"agent":"codex","cwd":"/w","pty":false,"argv":[]}`)))
	res := f.api.Events(t, context.Background(), run, nil)
	defer res.Body.Close()
	var events []string
	readSSE(t, res.Body, func(m sse) bool {
		events = append(events, m.event)
		if len(events) == 1 {
			require.NoError(t, sess.Close(logger.Meta{Status: "unknown"}))
		}
		return m.event != "end"
	})
	require.Equal(t, []string{"", "end"}, events)
}
