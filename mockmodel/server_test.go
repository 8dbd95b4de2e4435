package mockmodel

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func start(t *testing.T, name string) *Server {
	t.Helper()
	sc, err := Builtin(name)
	require.NoError(t, err)
	s, err := Start(Config{Scenario: sc})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// cli is one CLI's view of the server: its API, its tools, and the calls the scenarios should
// make of them.
type cli struct {
	name      string
	api       string
	tools     []toolDef
	shell     func(cmd string) gotCall
	write     gotCall
	textStop  string
	toolsStop string
}

var clis = []cli{
	{
		name: "claude", api: APIAnthropic, tools: claudeTools, textStop: "end_turn", toolsStop: "tool_use",
		shell: func(cmd string) gotCall { return gotCall{Name: "Bash", Args: map[string]any{"command": cmd}} },
		write: gotCall{Name: "Write", Args: map[string]any{"file_path": EditPath, "content": EditContent}},
	},
	{
		name: "codex", api: APIResponses, tools: codexTools,
		shell: func(cmd string) gotCall { return gotCall{Name: "exec_command", Args: map[string]any{"cmd": cmd}} },
		write: gotCall{Name: "apply_patch", Input: "*** Begin Patch\n*** Add File: out.txt\n+hello-from-edit\n*** End Patch"},
	},
	{
		name: "codex-shell-array", api: APIResponses, tools: codexShellArrayTools,
		shell: func(cmd string) gotCall {
			return gotCall{Name: "shell", Args: map[string]any{"command": []any{"bash", "-lc", cmd}}}
		},
		write: gotCall{Name: "apply_patch", Args: map[string]any{"input": "*** Begin Patch\n*** Add File: out.txt\n+hello-from-edit\n*** End Patch"}},
	},
	{
		name: "opencode", api: APIChat, tools: opencodeTools, textStop: "stop", toolsStop: "tool_calls",
		shell: func(cmd string) gotCall {
			return gotCall{Name: "bash", Args: map[string]any{"command": cmd, "description": "Run the scripted command"}}
		},
		write: gotCall{Name: "write", Args: map[string]any{"filePath": EditPath, "content": EditContent}},
	},
	{
		name: "gemini", api: APIGemini, tools: geminiTools, textStop: "STOP", toolsStop: "STOP",
		shell: func(cmd string) gotCall {
			return gotCall{Name: "run_shell_command", Args: map[string]any{"command": cmd}}
		},
		write: gotCall{Name: "write_file", Args: map[string]any{"file_path": EditPath, "content": EditContent}},
	},
}

func requireCalls(t *testing.T, want []gotCall, got []gotCall) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].Name, got[i].Name)
		require.Equal(t, want[i].Input, got[i].Input)
		if want[i].Args != nil {
			require.Equal(t, want[i].Args, got[i].Args)
		}
	}
}

func TestBuiltinScenariosPerCLI(t *testing.T) {
	t.Parallel()
	type step struct {
		results int
		text    string
		calls   func(c cli) []gotCall
	}
	shell := func(cmd string) func(c cli) []gotCall {
		return func(c cli) []gotCall { return []gotCall{c.shell(cmd)} }
	}
	scenarios := map[string][]step{
		"text": {{0, TextAnswer, nil}},
		"slow": {{0, "This answer drips out slowly, one small piece at a time.", nil}},
		"tool": {{0, "I'll run the command.", shell(ToolCommand)}, {1, ToolAnswer, nil}},
		"edit": {{0, "I'll write the file.", func(c cli) []gotCall { return []gotCall{c.write} }}, {1, EditAnswer, nil}},
		"multi": {
			{0, "Two steps at once.", func(c cli) []gotCall {
				return []gotCall{c.shell("echo first > first.txt && cat first.txt"), c.shell("echo second > second.txt && cat second.txt")}
			}},
			{2, "Now combine.", shell("cat first.txt second.txt > out.txt && cat out.txt")},
			{3, MultiAnswer, nil},
		},
	}
	for name, steps := range scenarios {
		for _, c := range clis {
			for _, stream := range []bool{true, false} {
				mode := "stream"
				if !stream {
					mode = "whole"
				}
				t.Run(name+"/"+c.name+"/"+mode, func(t *testing.T) {
					t.Parallel()
					sc, err := Builtin(name)
					require.NoError(t, err)
					for i := range sc.Turns {
						if sc.Turns[i].Delay > 0 {
							sc.Turns[i].Delay = time.Millisecond
						}
					}
					s, err := Start(Config{Scenario: sc})
					require.NoError(t, err)
					defer s.Close()
					cl := client{t: t, url: s.URL(), api: c.api}
					for i, st := range steps {
						r := cl.call(c.tools, st.results, stream)
						require.Equal(t, http.StatusOK, r.Status)
						require.Equal(t, st.text, r.Text)
						var want []gotCall
						if st.calls != nil {
							want = st.calls(c)
						}
						requireCalls(t, want, r.Calls)
						require.Equal(t, DefaultUsage, r.Usage, "usage is fixed per turn")
						if stream && c.api != APIResponses {
							stop := c.textStop
							if len(want) > 0 {
								stop = c.toolsStop
							}
							require.Equal(t, stop, r.Stop)
						}
						if stream {
							require.Equal(t, len(sc.Turns[i].Text), r.Deltas, "one delta per scripted chunk")
						}
					}
					reqs := s.Requests()
					require.Len(t, reqs, len(steps))
					for i, rq := range reqs {
						require.Equal(t, i, rq.Turn)
						require.Equal(t, c.api, rq.API)
						require.Equal(t, stream, rq.Stream)
						require.Equal(t, steps[i].results, rq.ToolResults)
						require.Equal(t, http.StatusOK, rq.Status)
						require.Len(t, rq.Tools, len(c.tools))
						require.False(t, rq.Side)
					}
				})
			}
		}
	}
}

func TestToolCallIDsAreUnique(t *testing.T) {
	t.Parallel()
	s := start(t, "multi")
	for _, api := range []string{APIAnthropic, APIResponses, APIChat} {
		tools := map[string][]toolDef{APIAnthropic: claudeTools, APIResponses: codexTools, APIChat: opencodeTools}[api]
		r := client{t: t, url: s.URL(), api: api}.call(tools, 0, true)
		require.Len(t, r.Calls, 2)
		require.NotEmpty(t, r.Calls[0].ID)
		require.NotEqual(t, r.Calls[0].ID, r.Calls[1].ID)
	}
}

func TestSideCallsDoNotAdvance(t *testing.T) {
	t.Parallel()
	for _, c := range clis {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := start(t, "tool")
			cl := client{t: t, url: s.URL(), api: c.api}
			side := cl.call(nil, 0, true)
			require.Equal(t, http.StatusOK, side.Status)
			require.Equal(t, DefaultSideText, side.Text)
			require.Empty(t, side.Calls)
			require.Equal(t, SideUsageDefault, side.Usage)
			main := cl.call(c.tools, 0, true)
			requireCalls(t, []gotCall{c.shell(ToolCommand)}, main.Calls)
			reqs := s.Requests()
			require.Len(t, reqs, 2)
			require.True(t, reqs[0].Side)
			require.Equal(t, -1, reqs[0].Turn)
			require.Equal(t, 0, reqs[1].Turn)
		})
	}
}

func TestSideCallDuringErrorScenarioSucceeds(t *testing.T) {
	t.Parallel()
	s := start(t, "error")
	r := client{t: t, url: s.URL(), api: APIChat}.call(nil, 0, true)
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, DefaultSideText, r.Text)
}

func TestErrorStatuses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		scenario, api string
		status        int
		check         func(t *testing.T, body map[string]any)
	}{
		{"error", APIAnthropic, 500, func(t *testing.T, b map[string]any) {
			require.Equal(t, "error", b["type"])
			require.Equal(t, "api_error", obj(b["error"])["type"])
		}},
		{"overloaded", APIAnthropic, 529, func(t *testing.T, b map[string]any) {
			require.Equal(t, "overloaded_error", obj(b["error"])["type"])
		}},
		{"error", APIResponses, 500, func(t *testing.T, b map[string]any) {
			require.Equal(t, "server_error", obj(b["error"])["code"])
		}},
		{"overloaded", APIResponses, 503, func(t *testing.T, b map[string]any) {
			require.Equal(t, "server_is_overloaded", obj(b["error"])["code"])
		}},
		{"error", APIChat, 500, func(t *testing.T, b map[string]any) {
			require.NotEmpty(t, obj(b["error"])["message"])
		}},
		{"overloaded", APIChat, 503, func(t *testing.T, b map[string]any) {
			require.Equal(t, "server_is_overloaded", obj(b["error"])["code"])
		}},
		{"error", APIGemini, 500, func(t *testing.T, b map[string]any) {
			require.Equal(t, "INTERNAL", obj(b["error"])["status"])
			require.Equal(t, 500, num(obj(b["error"])["code"]))
		}},
		{"overloaded", APIGemini, 503, func(t *testing.T, b map[string]any) {
			require.Equal(t, "UNAVAILABLE", obj(b["error"])["status"])
		}},
	}
	tools := map[string][]toolDef{APIAnthropic: claudeTools, APIResponses: codexTools, APIChat: opencodeTools, APIGemini: geminiTools}
	for _, tc := range cases {
		for _, stream := range []bool{true, false} {
			t.Run(tc.scenario+"/"+tc.api, func(t *testing.T) {
				t.Parallel()
				s := start(t, tc.scenario)
				r := client{t: t, url: s.URL(), api: tc.api}.call(tools[tc.api], 0, stream)
				require.Equal(t, tc.status, r.Status)
				require.Equal(t, "50", r.Header.Get("retry-after-ms"))
				require.Equal(t, "1", r.Header.Get("retry-after"))
				tc.check(t, r.ErrBody)
				require.Equal(t, tc.status, s.Requests()[0].Status)
			})
		}
	}
}

// waitGoroutines polls until the goroutine count is back to at most base, as goleak does: the
// connection goroutines of net/http exit asynchronously after the handlers have returned. It
// polls in the test goroutine because require.Eventually runs extra goroutines itself.
func waitGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines leaked: %d > %d\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readUntil reads the body until marker has appeared n times.
func readUntil(t *testing.T, body io.Reader, marker string, n int) {
	t.Helper()
	buf := make([]byte, 0, 4096)
	tmp := make([]byte, 512)
	for strings.Count(string(buf), marker) < n {
		k, err := body.Read(tmp)
		require.NoError(t, err)
		buf = append(buf, tmp[:k]...)
	}
}

var hangMarkers = map[string]string{APIAnthropic: `"text_delta"`, APIResponses: `response.output_text.delta`, APIChat: `"content":"`, APIGemini: `"text":"`}

func TestHangEndsOnClose(t *testing.T) {
	// Not parallel: it counts goroutines.
	base := runtime.NumGoroutine()
	for _, c := range clis {
		sc, err := Builtin("hang")
		require.NoError(t, err)
		s, err := Start(Config{Scenario: sc})
		require.NoError(t, err)
		resp := client{t: t, url: s.URL(), api: c.api}.post(context.Background(), c.tools, 0, true)
		readUntil(t, resp.Body, hangMarkers[c.api], 3)
		require.Equal(t, 0, s.Requests()[0].Turn)
		closed := make(chan error, 1)
		go func() { closed <- s.Close() }()
		select {
		case err := <-closed:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Close did not end the hanging stream", c.name)
		}
		_, err = io.ReadAll(resp.Body)
		_ = err // EOF or a reset: either way the stream ended
		resp.Body.Close()
		require.NoError(t, s.Close(), "second Close is a no-op")
	}
	http.DefaultClient.CloseIdleConnections()
	waitGoroutines(t, base)
}

func TestHangEndsOnClientCancel(t *testing.T) {
	base := runtime.NumGoroutine()
	s, err := Start(Config{Scenario: mustBuiltin(t, "hang")})
	require.NoError(t, err)
	for _, c := range clis {
		ctx, cancel := context.WithCancel(context.Background())
		resp := client{t: t, url: s.URL(), api: c.api}.post(ctx, c.tools, 0, true)
		readUntil(t, resp.Body, hangMarkers[c.api], 3)
		cancel()
		resp.Body.Close()
	}
	// Every handler returns once its client is gone, without Close.
	require.Eventually(t, func() bool { return s.active.Load() == 0 }, 5*time.Second, 10*time.Millisecond)
	require.Len(t, s.Requests(), len(clis))
	require.NoError(t, s.Close())
	http.DefaultClient.CloseIdleConnections()
	waitGoroutines(t, base)
}

func TestHangNonStreaming(t *testing.T) {
	t.Parallel()
	s := start(t, "hang")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","tools":[{"type":"function","function":{"name":"bash"}}],"messages":[]}`))
	require.NoError(t, err)
	_, err = http.DefaultClient.Do(req)
	require.ErrorIs(t, err, context.DeadlineExceeded, "a non-streaming hang sends nothing at all")
}

func mustBuiltin(t *testing.T, name string) *Scenario {
	t.Helper()
	sc, err := Builtin(name)
	require.NoError(t, err)
	return sc
}

func TestSlowDripsOverTime(t *testing.T) {
	t.Parallel()
	sc := mustBuiltin(t, "slow")
	require.Equal(t, 300*time.Millisecond, sc.Turns[0].Delay)
	sc.Turns[0].Delay = 20 * time.Millisecond
	s, err := Start(Config{Scenario: sc})
	require.NoError(t, err)
	defer s.Close()
	begin := time.Now()
	r := client{t: t, url: s.URL(), api: APIGemini}.call(geminiTools, 0, true)
	require.Equal(t, len(sc.Turns[0].Text), r.Deltas)
	require.GreaterOrEqual(t, time.Since(begin), time.Duration(len(sc.Turns[0].Text))*20*time.Millisecond)
}

func TestBuiltins(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"converse", "edit", "error", "hang", "multi", "overloaded", "slow", "text", "tool"}, BuiltinNames())
	for _, n := range BuiltinNames() {
		sc, err := Builtin(n)
		require.NoError(t, err)
		require.Equal(t, n, sc.Name)
		require.NotEmpty(t, sc.Turns)
	}
	a, _ := Builtin("tool")
	a.Turns[0].Text = nil
	b, _ := Builtin("tool")
	require.NotEmpty(t, b.Turns[0].Text, "Builtin returns a fresh copy")
	_, err := Builtin("nope")
	require.ErrorIs(t, err, ErrUnknownScenario)
}

func TestLoopbackOnly(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:0", "[::]:0", "localhost:0"} {
		_, err := Start(Config{Addr: addr})
		require.ErrorIs(t, err, ErrNotLoopback, addr)
	}
	_, err := Start(Config{Addr: "localhost:0"})
	require.ErrorContains(t, err, "give 127.0.0.1 or [::1]", "why localhost is not taken")
	_, err = Start(Config{Addr: "127.0.0.1"})
	require.Error(t, err, "no port")
	s, err := Start(Config{Addr: "127.0.0.2:0"})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(s.URL(), "http://127.0.0.2:"))
	require.NoError(t, s.Close())
	s, err = Start(Config{})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(s.URL(), "http://127.0.0.1:"))
	require.NoError(t, s.Close())
}

func TestOtherEndpointsAndUnhandled(t *testing.T) {
	t.Parallel()
	s := start(t, "text")
	do := func(method, path, body string) (int, string) {
		req, err := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	st, _ := do(http.MethodHead, "/api/hello", "")
	require.Equal(t, 200, st)
	st, body := do(http.MethodGet, "/v1/models", "")
	require.Equal(t, 200, st)
	require.Contains(t, body, `"gpt-5.5"`)
	st, body = do(http.MethodGet, "/v1beta/models", "")
	require.Equal(t, 200, st)
	require.Contains(t, body, `models/gemini-2.5-flash`)
	st, body = do(http.MethodPost, "/v1/messages/count_tokens", `{"messages":[]}`)
	require.Equal(t, 200, st)
	require.Contains(t, body, `"input_tokens":`)
	st, body = do(http.MethodPost, "/v1beta/models/gemini-2.5-flash:countTokens", `{}`)
	require.Equal(t, 200, st)
	require.Contains(t, body, `"totalTokens":`)
	st, _ = do(http.MethodPost, "/v1/embeddings", `{}`)
	require.Equal(t, 404, st)
	st, _ = do(http.MethodPost, "/v1/messages", `not json`)
	require.Equal(t, 400, st)

	reqs := s.Requests()
	require.Len(t, reqs, 7)
	require.Equal(t, Request{API: APIOther, Method: "HEAD", Path: "/api/hello", Turn: -1, Status: 200}, reqs[0])
	require.Equal(t, "gemini-2.5-flash", reqs[4].Model)
	require.Equal(t, Request{API: APIUnhandled, Method: "POST", Path: "/v1/embeddings", Turn: -1, Status: 404, Unhandled: true}, reqs[5])
	require.Equal(t, 400, reqs[6].Status)
}

func TestRecordedModelAndTools(t *testing.T) {
	t.Parallel()
	s := start(t, "text")
	client{t: t, url: s.URL(), api: APIAnthropic}.call(claudeTools, 0, true)
	client{t: t, url: s.URL(), api: APIGemini}.call(geminiTools, 0, true)
	reqs := s.Requests()
	require.Equal(t, "claude-sonnet-4-5", reqs[0].Model)
	require.Equal(t, "/v1/messages?beta=true", reqs[0].Path)
	require.Equal(t, []string{"Task", "Bash", "Edit", "Read", "Write"}, reqs[0].Tools)
	require.Equal(t, "gemini-2.5-flash", reqs[1].Model)
	require.Equal(t, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", reqs[1].Path)
}

func TestMissingToolAnswersWithText(t *testing.T) {
	t.Parallel()
	s := start(t, "tool")
	r := client{t: t, url: s.URL(), api: APIChat}.call([]toolDef{{Name: "read", Schema: props(nil, map[string]string{"filePath": "string"})}}, 0, true)
	require.Equal(t, http.StatusOK, r.Status)
	require.Empty(t, r.Calls)
	require.Equal(t, "I'll run the command.", r.Text)
	require.Contains(t, s.Requests()[0].Err, "no shell tool")
}

func TestWritePathUsesCwdFromPrompt(t *testing.T) {
	t.Parallel()
	s := start(t, "edit")
	cl := client{t: t, url: s.URL(), api: APIChat}
	path, body := cl.body(opencodeTools, 0, true)
	msgs := list(body["messages"])
	obj(msgs[0])["content"] = "You are opencode.\n<env>\n  Working directory: /work/proj\n</env>"
	resp := postJSON(t, s.URL()+path, body)
	defer resp.Body.Close()
	events, err := readSSE(resp.Body)
	require.NoError(t, err)
	var r reply
	decodeChat(t, events, &r)
	require.Len(t, r.Calls, 1)
	require.Equal(t, "/work/proj/out.txt", r.Calls[0].Args["filePath"])
}

func TestBeyondScriptAnswers(t *testing.T) {
	t.Parallel()
	s := start(t, "tool")
	r := client{t: t, url: s.URL(), api: APIAnthropic}.call(claudeTools, 5, true)
	require.Equal(t, ToolAnswer, r.Text, "past the script the last plain turn answers")
	sc := &Scenario{Turns: []Turn{{ToolCalls: []ToolCall{{Kind: KindShell, Command: "true"}}, Usage: DefaultUsage}}}
	s, err := Start(Config{Scenario: sc})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	r = client{t: t, url: s.URL(), api: APIAnthropic}.call(claudeTools, 1, true)
	require.Equal(t, "DONE", r.Text)
	require.Equal(t, 1, s.Requests()[0].Turn)
}

func TestCustomTOMLScenario(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.toml")
	require.NoError(t, os.WriteFile(path, []byte(`
name = "custom"
side_text = "Custom title"

[[turn]]
text = ["Writing", " files"]
delay_ms = 1
usage = { input = 300, output = 40, cached = 100, reasoning = 7 }
[[turn.tool]]
kind = "write"
path = "a.txt"
content = "A\n"
[[turn.tool]]
kind = "Read"
args = { file_path = "/etc/hostname" }

[[turn]]
text = ["ok"]
usage = { input = 400, output = 5 }
[[turn.tool]]
kind = "shell"
command = "ls"
args = { description = "list" }

[[turn]]
status = 429
retry_after_ms = 1500
`), 0o600))
	sc, err := LoadScenario(path)
	require.NoError(t, err)
	require.Equal(t, "custom", sc.Name)
	require.Len(t, sc.Turns, 3)
	require.Equal(t, time.Millisecond, sc.Turns[0].Delay)
	require.Equal(t, 1500*time.Millisecond, sc.Turns[2].RetryAfter)
	s, err := Start(Config{Scenario: sc})
	require.NoError(t, err)
	defer s.Close()
	for _, api := range []string{APIAnthropic, APIResponses, APIChat, APIGemini} {
		cl := client{t: t, url: s.URL(), api: api}
		r := cl.call(claudeTools, 0, true)
		require.Equal(t, "Writing files", r.Text)
		requireCalls(t, []gotCall{
			{Name: "Write", Args: map[string]any{"file_path": "a.txt", "content": "A\n"}},
			{Name: "Read", Args: map[string]any{"file_path": "/etc/hostname"}},
		}, r.Calls)
		want := Usage{InputTokens: 300, OutputTokens: 40, CachedTokens: 100, ReasoningTokens: 7}
		if api == APIAnthropic {
			want.ReasoningTokens = 0 // the Messages API has no reasoning count
		}
		require.Equal(t, want, r.Usage, api)
		r = cl.call(claudeTools, 2, true)
		requireCalls(t, []gotCall{{Name: "Bash", Args: map[string]any{"command": "ls", "description": "list"}}}, r.Calls)
		r = cl.call(claudeTools, 3, false)
		require.Equal(t, 429, r.Status)
		require.Equal(t, "1500", r.Header.Get("retry-after-ms"))
		require.Equal(t, "2", r.Header.Get("retry-after"))
		side := cl.call(nil, 0, true)
		require.Equal(t, "Custom title", side.Text)
	}
}

func TestParseScenarioErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"no-turns":        `name = "x"`,
		"unknown-key":     "[[turn]]\ntexts = [\"a\"]",
		"bad-status":      "[[turn]]\nstatus = 200",
		"shell-no-cmd":    "[[turn]]\n[[turn.tool]]\nkind = \"shell\"",
		"write-no-path":   "[[turn]]\n[[turn.tool]]\nkind = \"write\"",
		"tool-no-kind":    "[[turn]]\n[[turn.tool]]\ncommand = \"x\"",
		"negative-delay":  "[[turn]]\ndelay_ms = -1",
		"not-toml":        "[[turn",
		"wrong-type-text": "[[turn]]\ntext = 3",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseScenario([]byte(text))
			require.Error(t, err)
		})
	}
	_, err := LoadScenario(filepath.Join(t.TempDir(), "missing.toml"))
	require.ErrorIs(t, err, os.ErrNotExist)
	// A file's error names the file: "toml: array is incomplete" alone
	// said nothing of which.
	bad := filepath.Join(t.TempDir(), "bad.toml")
	require.NoError(t, os.WriteFile(bad, []byte("[[turn]]\ntext = [\"a\""), 0o644))
	_, err = LoadScenario(bad)
	require.ErrorContains(t, err, bad+": mockmodel: parse scenario: ")
}

// TestMalformedRequests: a body that is not one JSON object (null, or
// more after it) is 400, as the APIs answer it, where it was served as a
// turn; a model name with a quote comes back in JSON that parses.
func TestMalformedRequests(t *testing.T) {
	s := start(t, "text")
	for _, body := range []string{"null", `{"model":"m","messages":[]} trailing`, `{"model":"m"}{"model":"m"}`} {
		resp, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	}
	resp, err := http.Get(s.URL() + "/v1beta/models/a%22b")
	require.NoError(t, err)
	defer resp.Body.Close()
	var m map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	require.Equal(t, `models/a"b`, m["name"])
}
