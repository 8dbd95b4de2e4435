package acpserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/fakeagent"
)

// TestPromptWithoutIDIsDropped: a session/prompt without an id never
// reaches the SDK, which would take it for a notification and run the
// prompt on its notification goroutine, unanswerable, with every
// session/cancel waiting behind it. A warning says so; the next line
// goes on. One with a null id is a request all the same: it is answered
// Invalid request to id null (it was dropped, unanswered, as the SDK
// reads it).
func TestPromptWithoutIDIsDropped(t *testing.T) {
	next := `{"jsonrpc":"2.0","id":7,"method":"session/cancel","params":{"sessionId":"s1"}}` + "\n"
	for _, tc := range []struct{ prompt, log, answer string }{
		{`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}`, "without an id", ""},
		{`{"jsonrpc":"2.0","id":null,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}`, "", "null -32600"},
	} {
		var logs, out bytes.Buffer
		in := newInput(strings.NewReader(tc.prompt+"\n"+next), newOutput(&out, time.Hour), nil, slog.New(slog.NewTextHandler(&logs, nil)))
		close(in.gate)
		got, err := io.ReadAll(in)
		require.NoError(t, err)
		require.Equal(t, next, string(got), "only the line after the prompt reaches the SDK")
		in.out.own.Wait()
		if tc.log != "" {
			require.Contains(t, logs.String(), tc.log)
		}
		answer := ""
		if a := gjson.Parse(out.String()); out.Len() > 0 {
			answer = a.Get("id").Raw + " " + a.Get("error.code").String()
		}
		require.Equal(t, tc.answer, answer, tc.prompt)
	}
}

// rawACP writes lines to the server as any client might, and reads its
// answers; its server starts no runs.
type rawACP struct {
	t     *testing.T
	w     *io.PipeWriter
	lines chan string
}

func newRawACP(t *testing.T) *rawACP {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		newServer(Options{Version: "test"}).serve(context.Background(), inR, outW, nil)
		outW.Close()
		inR.CloseWithError(io.ErrClosedPipe) // a write after the end fails, not hangs
	}()
	c := &rawACP{t: t, w: inW, lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		<-done
	})
	return c
}

func (c *rawACP) send(lines string) {
	c.t.Helper()
	_, err := io.WriteString(c.w, lines+"\n")
	require.NoError(c.t, err, "the server reads its input")
}

// answer is the next message: its id, and its error code or "ok".
func (c *rawACP) answer() string {
	c.t.Helper()
	select {
	case l, ok := <-c.lines:
		require.True(c.t, ok, "the server ended")
		m := gjson.Parse(l)
		if e := m.Get("error"); e.Exists() {
			require.NotEmpty(c.t, e.Get("message").String())
			return m.Get("id").Raw + " " + e.Get("code").String()
		}
		return m.Get("id").Raw + " ok"
	case <-time.After(20 * time.Second):
		c.t.Fatal("no answer")
		return ""
	}
}

// TestInputBadLines: a line that is not one JSON-RPC 2.0 message is
// answered with a JSON-RPC error, to the request's id when it has one
// harness can answer and null otherwise, and the connection goes on. The
// SDK logged some to stderr and answered nothing, and served others,
// answering ids that are objects or booleans.
func TestInputBadLines(t *testing.T) {
	t.Parallel()
	c := newRawACP(t)
	const init = `"method":"initialize","params":{"protocolVersion":1}}`
	for _, tc := range []struct {
		name, line string
		want       []string
	}{
		{"not-JSON", "{bad json", []string{"null -32700"}},
		{"two-values", `{"jsonrpc":"2.0","id":1,` + init + ` {}`, []string{"null -32700"}},
		{"batch", `[{"jsonrpc":"2.0","id":13,` + init + `,{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}},{"jsonrpc":"2.0","id":"b",` + init + `]`,
			[]string{"13 -32600", `"b" -32600`}},
		{"empty-batch", `[]`, []string{"null -32600"}},
		{"string", `"str"`, []string{"null -32600"}},
		{"null", `null`, []string{"null -32600"}},
		{"old-version", `{"jsonrpc":"1.0","id":11,` + init, []string{"11 -32600"}},
		{"no-version", `{"id":12,` + init, []string{"12 -32600"}},
		{"object-id", `{"jsonrpc":"2.0","id":{"a":1},` + init, []string{"null -32600"}},
		{"bool-id", `{"jsonrpc":"2.0","id":true,` + init, []string{"null -32600"}},
		{"null-id", `{"jsonrpc":"2.0","id":null,` + init, []string{"null -32600"}}, // a request the SDK took for a notification
		{"fraction-id", `{"jsonrpc":"2.0","id":1.5,` + init, []string{"null -32600"}},
		{"id-past-2^53", `{"jsonrpc":"2.0","id":9007199254740993,` + init, []string{"null -32600"}},
		{"method-not-string", `{"jsonrpc":"2.0","id":14,"method":7}`, []string{"14 -32600"}},
		{"request-with-result", `{"jsonrpc":"2.0","id":15,"result":{},` + init, []string{"15 -32600"}},
		{"response-without-result", `{"jsonrpc":"2.0","id":16}`, []string{"null -32600"}},
		{"response-bad-error", `{"jsonrpc":"2.0","id":17,"error":"x"}`, []string{"null -32600"}},
		{"valid", "\n \t{\"jsonrpc\":\"2.0\",\"id\":9007199254740991," + init + " \r", []string{"9007199254740991 ok"}},
		{"string-id", `{"jsonrpc":"2.0","id":"x",` + init, []string{`"x" ok`}},
	} {
		c.send(tc.line)
		var got []string
		for range tc.want {
			got = append(got, c.answer())
		}
		require.Equal(t, tc.want, got, tc.name)
	}
}

// TestInputNotificationBurst: a burst of notifications far past the SDK's
// queue of 1024 (session/cancel for sessions harness does not know, and
// extensions' notifications) is taken by input, and the request after it
// is answered. The SDK's queue overflowed, when its reader outran its
// handler, and it ended the connection: pending requests went unanswered
// and harness acp exited 0 (TestInputTakesNotifications shows why that
// no longer happens, whatever the timing).
func TestInputNotificationBurst(t *testing.T) {
	t.Parallel()
	c := newRawACP(t)
	var b strings.Builder
	for i := range 20000 {
		if i%2 == 0 {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"x%d"}}`+"\n", i)
		} else {
			b.WriteString(`{"jsonrpc":"2.0","method":"_ext/x","params":{}}` + "\n")
		}
	}
	b.WriteString(`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":1}}`)
	c.send(b.String())
	require.Equal(t, "5 ok", c.answer())
}

// TestInputTakesNotifications: no notification reaches the SDK, whose
// queue of them is 1024 long: session/cancel is taken by the server, an
// extension's is dropped without a word, any other with a warning.
func TestInputTakesNotifications(t *testing.T) {
	t.Parallel()
	srv := newServer(Options{})
	sess, err := srv.NewSession(t.Context(), acpsdk.NewSessionRequest{Cwd: t.TempDir()})
	require.NoError(t, err)
	require.True(t, srv.claim(sess.SessionId), "a prompt was read")
	var lines strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&lines, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"x%d"}}`+"\n", i)
		lines.WriteString(`{"jsonrpc":"2.0","method":"_ext/x","params":{}}` + "\n")
	}
	fmt.Fprintf(&lines, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`+"\n", sess.SessionId)
	lines.WriteString(`{"jsonrpc":"2.0","method":"session/other"}` + "\n")
	req := `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":1}}` + "\n"

	var logs, out bytes.Buffer
	in := newInput(strings.NewReader(lines.String()+req), newOutput(&out, time.Hour), srv, slog.New(slog.NewTextHandler(&logs, nil)))
	close(in.gate)
	got, err := io.ReadAll(in)
	require.NoError(t, err)
	require.Equal(t, req, string(got), "only the request reaches the SDK")
	in.out.own.Wait()
	require.Empty(t, out.String(), "a notification has no answer")
	require.Equal(t, 1, strings.Count(logs.String(), "level="), logs.String())
	require.Contains(t, logs.String(), "method=session/other")
	s := srv.lookup(sess.SessionId)
	s.mu.Lock()
	defer s.mu.Unlock()
	require.True(t, s.cancel, "the session's cancel was taken: its prompt's run is interrupted as it starts")
}

// TestInputIDInUse: a request reusing the id of one handed on and not
// answered yet is refused (-32600 with that id) and never reaches the
// SDK, which ran it beside the first and answered both with the one id;
// once the SDK answered the first, the id is free again. input's own
// answers free no id.
func TestInputIDInUse(t *testing.T) {
	req := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}` + "\n"
	}
	pr, pw := io.Pipe()
	var out bytes.Buffer
	o := newOutput(&out, time.Hour)
	in := newInput(pr, o, nil, slog.New(slog.DiscardHandler))
	close(in.gate)
	read := func() string {
		buf := make([]byte, 4096)
		n, err := in.Read(buf)
		require.NoError(t, err)
		return string(buf[:n])
	}
	go pw.Write([]byte(req("1") + req(`"a"`) + req("1") + req(`"a"`)))
	require.Equal(t, req("1"), read())
	require.Equal(t, req(`"a"`), read())
	go pw.Write([]byte(req("2"))) // read past the two refused
	require.Equal(t, req("2"), read())
	o.own.Wait()
	answers := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, answers, 2)
	require.Equal(t, int64(-32600), gjson.Get(answers[0], "error.code").Int())
	require.Equal(t, "1", gjson.Get(answers[0], "id").Raw)
	require.Equal(t, `"a"`, gjson.Get(answers[1], "id").Raw)
	// The SDK answers request 1: its id is free; "a" is still in use.
	_, err := o.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}` + "\n"))
	require.NoError(t, err)
	go pw.Write([]byte(req(`"a"`) + req("1")))
	require.Equal(t, req("1"), read())
	o.own.Wait()
	answers = strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, answers, 4) // the SDK's answer to 1 among them
	require.Equal(t, `"a"`, gjson.Get(answers[3], "id").Raw)
	require.Equal(t, int64(-32600), gjson.Get(answers[3], "error.code").Int())
	pw.Close()
}

// TestInputBadLineUnreadThenEOF: the error answer to a line that is not
// JSON-RPC does not keep input from seeing the end of stdin when nobody
// reads stdout: Serve gives the answer up after the grace and returns.
// input wrote the answer itself, blocked on the full pipe, never read
// the EOF, and harness acp hung for ever.
func TestInputBadLineUnreadThenEOF(t *testing.T) {
	t.Parallel()
	srv := newServer(Options{Version: "test"})
	srv.writeGrace = 50 * time.Millisecond
	inR, inW := io.Pipe()
	outR, outW := io.Pipe() // nobody reads outR
	t.Cleanup(func() { outR.Close() })
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.serve(context.Background(), inR, outW, nil)
	}()
	_, err := io.WriteString(inW, "garbage\n")
	require.NoError(t, err)
	require.NoError(t, inW.Close())
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Serve hangs on the answer to a bad line nobody reads")
	}
}

// TestCancelRequestInterruptsPrompt: JSON-RPC's $/cancel_request naming
// a prompt in progress interrupts its run, and the prompt answers
// cancelled, as session/cancel does. It was dropped as a notification
// harness acp does not take: no answer, and the agent ran on.
func TestCancelRequestInterruptsPrompt(t *testing.T) {
	argv, env := fakeagent.Command("hang-silent")
	started := make(chan struct{}, 1)
	srv := newServer(Options{Version: "test",
		Start: func(ctx context.Context, task harness.Task, o harness.Options) (*harness.Run, error) {
			r, err := harness.Start(ctx, task, o)
			started <- struct{}{}
			return r, err
		},
		Task: func(cwd, prompt string) harness.Task {
			b := harness.DefaultBudgets()
			b.Linger, b.KillGrace = 200*time.Millisecond, 200*time.Millisecond
			return harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env, Cwd: cwd, Prompt: prompt, Budgets: &b}
		}})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.serve(context.Background(), inR, outW, nil)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		<-done
	})
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	answer := func(id string) gjson.Result {
		t.Helper()
		for {
			select {
			case l := <-lines:
				if m := gjson.Parse(l); m.Get("id").Raw == id && !m.Get("method").Exists() {
					return m
				}
			case <-time.After(10 * time.Second):
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
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"x"}]}}`, sid))
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the prompt's run did not start")
	}
	send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"p"}}`)
	require.Equal(t, "cancelled", answer(`"p"`).Get("result.stopReason").String())
}
