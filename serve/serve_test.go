package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/serve"
)

func init() {
	fakeagent.Register("serve-gated", gated)
	fakeagent.Register("serve-lines", lines)
}

func TestMain(m *testing.M) { harnesstest.Main(m) }

const sessionID = "5e55e55e-0000-4000-8000-000000000001"

func claudeInit() {
	fakeagent.Line(`{"type":"system","subtype":"init","cwd":"/tmp/work","session_id":"` + sessionID + `","tools":["Bash","Write"],"model":"fake-model"}`)
}

func claudeText(id, text string) {
	fakeagent.Line(`{"type":"assistant","message":{"id":"` + id + `","role":"assistant","content":[{"type":"text","text":` + strconv.Quote(text) + `}],"usage":{"input_tokens":100,"output_tokens":20}},"session_id":"` + sessionID + `"}`)
}

func claudeTool(id, command string) {
	fakeagent.Line(`{"type":"assistant","message":{"id":"msg_tool_` + id + `","role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"Bash","input":{"command":` + strconv.Quote(command) + `}}]},"session_id":"` + sessionID + `"}`)
}

func claudeToolResult(id, out string) {
	fakeagent.Line(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":` + strconv.Quote(out) + `,"is_error":false}]},"session_id":"` + sessionID + `"}`)
}

func claudeResult(text string) {
	fakeagent.Line(fmt.Sprintf(`{"type":"result","subtype":"success","is_error":false,"result":%q,"session_id":%q,"num_turns":2,"duration_ms":40,"total_cost_usd":0.0021,"usage":{"input_tokens":200,"output_tokens":40}}`, text, sessionID))
}

// gated: a run that says something, opens a tool call, and waits for the
// file $SERVE_TEST_GATE before it closes the call and ends, so a test
// sees the run live for as long as it needs.
func gated([]string) int {
	claudeInit()
	fakeagent.Line(`{"type":"assistant","message":{"id":"msg_0","role":"assistant","content":[{"type":"thinking","thinking":"The user wants a listing.","signature":"x"}]},"session_id":"` + sessionID + `"}`)
	claudeText("msg_1", "Let me look at the tree first.")
	claudeTool("toolu_1", "ls -la")
	gate := os.Getenv("SERVE_TEST_GATE")
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(gate); err == nil {
			break
		}
	}
	claudeToolResult("toolu_1", "total 0\ndrwxr-xr-x 2 u u 40 .\n")
	n, _ := strconv.Atoi(os.Getenv("SERVE_TEST_LINES"))
	for i := range n {
		claudeText("msg_n"+strconv.Itoa(i), "more "+strconv.Itoa(i))
	}
	claudeText("msg_2", "The tree is empty. Done.")
	claudeResult("The tree is empty. Done.")
	return 0
}

// lines N: N text messages, then the result.
func lines([]string) int {
	n, _ := strconv.Atoi(os.Getenv("SERVE_TEST_LINES"))
	claudeInit()
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	for i := range n {
		fmt.Fprintf(w, `{"type":"assistant","message":{"id":"msg_%d","role":"assistant","content":[{"type":"text","text":"line %d"}]},"session_id":%q}`+"\n", i, i, sessionID)
	}
	w.Flush()
	claudeResult("done")
	return 0
}

// fixture is a server on a private session store, its runs fake agents.
type fixture struct {
	srv   *serve.Server
	http  *httptest.Server
	dir   string
	bench string
	gate  string
	api   harnesstest.ServeAPI
}

func newFixture(t *testing.T, fake string, env ...string) *fixture {
	return newFixtureWith(t, fake, nil, env...)
}

func newFixtureWith(t *testing.T, fake string, tune func(*serve.Config), env ...string) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{dir: filepath.Join(root, "sessions"), bench: filepath.Join(root, "bench"), gate: filepath.Join(root, "gate")}
	const token = "test-token-0123456789abcdef"
	argv, fenv := fakeagent.Command(fake)
	fenv = append(fenv, "SERVE_TEST_GATE="+f.gate)
	fenv = append(fenv, env...)
	cfg := serve.Config{
		Dir: f.dir, Bench: &bench.Store{Dir: f.bench}, Token: token, Open: true,
		Launcher: serve.Launcher{Settings: fakeSettings(f.dir, argv[0], fenv)},
	}
	if tune != nil {
		tune(&cfg)
	}
	f.srv = serve.New(cfg)
	f.http = httptest.NewServer(f.srv)
	f.api = harnesstest.ServeAPI{URL: f.http.URL, Token: token}
	t.Cleanup(func() {
		os.WriteFile(f.gate, nil, 0o600) // let a gated run end
		f.http.Close()
		f.srv.Close()
	})
	return f
}

func (f *fixture) openGate(t *testing.T) { require.NoError(t, os.WriteFile(f.gate, nil, 0o600)) }

// start starts a run through the API and returns its id.
func (f *fixture) start(t *testing.T) string {
	t.Helper()
	return f.api.Start(t, `{"agent":"claude","prompt":"look around","cwd":`+strconv.Quote(t.TempDir())+`}`).Run
}

// sse is one message of an event stream.
type sse struct {
	id, event, data string
}

// readSSE reads messages from r until fn returns false or the stream ends.
func readSSE(t *testing.T, r io.Reader, fn func(sse) bool) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 4<<20)
	var m sse
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if m.data != "" || m.event != "" {
				if !fn(m) {
					return
				}
			}
			m = sse{}
		case strings.HasPrefix(line, "id: "):
			m.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			m.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			m.data = line[6:]
		case strings.HasPrefix(line, ":"):
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
}

func (f *fixture) logOf(t *testing.T, run string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, run+".ndjson"))
	require.NoError(t, err)
	return string(b)
}

// fakeSettings are library settings whose every agent is the fake binary,
// started from env, with small budgets and session logs in dir.
func fakeSettings(dir, binary string, env []string) *harness.Settings {
	cfg := config.Defaults()
	cfg.IdleTimeout, cfg.Timeout = config.Duration(time.Minute), config.Duration(2*time.Minute)
	cfg.Linger, cfg.KillGrace = config.Duration(time.Second), config.Duration(time.Second)
	cfg.Agents = map[string]config.AgentConfig{}
	for _, a := range harness.Agents() {
		cfg.Agents[a.Name()] = config.AgentConfig{Binary: binary}
	}
	return &harness.Settings{Config: &cfg, Environ: env, LogDir: dir}
}

// TestEventsResume disconnects mid-run and reconnects with Last-Event-ID:
// what the two connections delivered, concatenated, is the session log,
// byte for byte, and the second ends with the end event.
func TestEventsResume(t *testing.T) {
	f := newFixture(t, "serve-gated")
	run := f.start(t)

	ctx, cancel := context.WithCancel(context.Background())
	res := f.api.Events(t, ctx, run, nil)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	var got strings.Builder
	last := ""
	readSSE(t, res.Body, func(m sse) bool {
		require.Empty(t, m.event, "no end before the run ends")
		got.WriteString(m.data + "\n")
		last = m.id
		return !strings.Contains(m.data, `"type":"tool_start"`)
	})
	cancel() // the client goes away while the tool call is open
	res.Body.Close()
	require.NotEmpty(t, last)

	f.openGate(t)
	res = f.api.Events(t, context.Background(), run, map[string]string{"Last-Event-ID": last})
	defer res.Body.Close()
	ended := false
	readSSE(t, res.Body, func(m sse) bool {
		if m.event == "end" {
			ended = true
			require.JSONEq(t, `{"last_event_id":`+strconv.Itoa(countLines(got.String()))+`}`, m.data)
			return false
		}
		require.Equal(t, m.id, strconv.FormatInt(seqOf(t, m.data), 10), "id is the event's seq")
		got.WriteString(m.data + "\n")
		return true
	})
	require.True(t, ended, "the stream ends after the result")
	log := f.logOf(t, run)
	require.Equal(t, log, got.String())
	require.Contains(t, log, `"type":"result"`)
	require.NoError(t, event.CheckNDJSON([]byte(log)))
}

func countLines(s string) int { return strings.Count(s, "\n") }

func seqOf(t *testing.T, line string) int64 {
	t.Helper()
	var e struct{ Seq int64 }
	require.NoError(t, json.Unmarshal([]byte(line), &e))
	return e.Seq
}

// TestEventsAfterEnd: a client that connects after the run ended gets the
// whole stream and the end, as SSE (also with ?after=0) and as NDJSON.
func TestEventsAfterEnd(t *testing.T) {
	f := newFixture(t, "serve-gated")
	f.openGate(t)
	run := f.start(t)
	waitStatus(t, f, run)
	log := f.logOf(t, run)

	for _, hdr := range []map[string]string{nil, {"Last-Event-ID": "0"}} {
		res := f.api.Events(t, context.Background(), run, hdr)
		var got strings.Builder
		ended := false
		readSSE(t, res.Body, func(m sse) bool {
			if m.event == "end" {
				ended = true
				return true
			}
			got.WriteString(m.data + "\n")
			return true
		})
		res.Body.Close()
		require.True(t, ended)
		require.Equal(t, log, got.String())
	}

	res := f.api.Events(t, context.Background(), run, map[string]string{"Accept": "application/x-ndjson"})
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, "application/x-ndjson", res.Header.Get("Content-Type"))
	require.Equal(t, log, string(b))

	// After the result: nothing more, and the end.
	n := strings.Count(log, "\n")
	res = f.api.Events(t, context.Background(), run+"", map[string]string{"Last-Event-ID": strconv.Itoa(n)})
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, "event: end\ndata: {\"last_event_id\":"+strconv.Itoa(n)+"}\n\n", string(b))
}

// waitStatus waits until the run's summary says it ended, and returns it.
func waitStatus(t *testing.T, f *fixture, run string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		m := f.api.JSON(t, "/api/runs/"+run, http.StatusOK)
		if m["status"] != "running" && m["live"] == nil {
			return m
		}
	}
	t.Fatal("the run did not end")
	return nil
}

// TestRunSummary: the list and the summary carry the figures of the
// stream, and the filters select.
func TestRunSummary(t *testing.T) {
	f := newFixture(t, "serve-gated")
	f.openGate(t)
	run := f.start(t)
	m := waitStatus(t, f, run)
	require.Equal(t, "success", m["status"])
	require.Equal(t, "claude", m["agent"])
	require.EqualValues(t, 1, m["tool_calls"])
	require.Equal(t, map[string]any{"shell": float64(1)}, m["tools_by_kind"])
	require.EqualValues(t, 200, m["usage"].(map[string]any)["input_tokens"])
	require.InDelta(t, 0.0021, m["cost_usd"], 1e-9)
	require.Equal(t, "The tree is empty. Done.", m["result"])

	list := f.api.JSON(t, "/api/runs", http.StatusOK)["runs"].([]any)
	require.Len(t, list, 1)
	require.Equal(t, run, list[0].(map[string]any)["run"])
	for q, n := range map[string]int{"agent=claude": 1, "agent=codex": 0, "status=success": 1, "status=running": 0, "since=1h": 1,
		"since=" + time.Now().Add(time.Hour).UTC().Format(time.RFC3339): 0} {
		require.Len(t, f.api.JSON(t, "/api/runs?"+q, http.StatusOK)["runs"], n, q)
	}
	f.api.JSON(t, "/api/runs?since=yesterday", http.StatusBadRequest)
	require.Equal(t, run, f.api.JSON(t, "/api/runs/latest", http.StatusOK)["run"])
}

// TestBadInput: unknown runs, bad cursors and missing tokens are one JSON
// error each, with the right status.
func TestBadInput(t *testing.T) {
	f := newFixture(t, "serve-gated")
	f.openGate(t)
	run := f.start(t)
	waitStatus(t, f, run)
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "run_metaonly.meta.json"), []byte(`{"run":"run_metaonly","agent":"claude"}`), 0o600))
	for name, tc := range map[string]struct {
		method, path, body string
		hdr                map[string]string
		status             int
		msg                string
	}{
		"unknown-run":          {"GET", "/api/runs/run_nope", "", nil, 404, "no such run"},
		"unknown-run-events":   {"GET", "/api/runs/run_nope/events", "", nil, 404, "no such run"},
		"unknown-run-cancel":   {"POST", "/api/runs/run_nope/cancel", "", f.api.Auth(), 404, "no such run"},
		"bad-last-event-id":    {"GET", "/api/runs/" + run + "/events", "", map[string]string{"Last-Event-ID": "seven"}, 400, "Last-Event-ID"},
		"negative-after":       {"GET", "/api/runs/" + run + "/events?after=-1", "", nil, 400, "after"},
		"no-token":             {"POST", "/api/runs", `{"agent":"claude","prompt":"x"}`, nil, 401, "token"},
		"wrong-token":          {"POST", "/api/runs", `{"agent":"claude","prompt":"x"}`, map[string]string{"Authorization": "Bearer wrong"}, 401, "token"},
		"token-in-query-post":  {"POST", "/api/runs?token=" + f.api.Token, `{"agent":"claude","prompt":"x"}`, nil, 401, "token"},
		"no-prompt":            {"POST", "/api/runs", `{"agent":"claude"}`, f.api.Auth(), 400, "prompt"},
		"no-agent":             {"POST", "/api/runs", `{"prompt":"x"}`, f.api.Auth(), 400, "(" + strings.Join(harness.AgentNames(), ", ") + ")"},
		"unknown-agent":        {"POST", "/api/runs", `{"agent":"nope","prompt":"x"}`, f.api.Auth(), 400, "nope"},
		"unknown-field":        {"POST", "/api/runs", `{"agent":"claude","prompt":"x","binary":"/bin/sh"}`, f.api.Auth(), 400, "binary"},
		"bad-budget":           {"POST", "/api/runs", `{"agent":"claude","prompt":"x","budgets":{"idle":"soon"}}`, f.api.Auth(), 400, "budgets.idle"},
		"bad-mock":             {"POST", "/api/runs", `{"agent":"claude","prompt":"x","mock":"nope"}`, f.api.Auth(), 400, "scenario"},
		"cancel-finished":      {"POST", "/api/runs/" + run + "/cancel", "", f.api.Auth(), 409, "not running"},
		"unknown-bench":        {"GET", "/api/bench/nope", "", nil, 404, "no such bench report"},
		"bench-path-traversal": {"GET", "/api/bench/..%2fsessions", "", nil, 404, "no such bench report"},
		"unknown-endpoint":     {"GET", "/api/nope", "", nil, 404, "no such endpoint"},
		"no-event-log":         {"GET", "/api/runs/run_metaonly/events", "", nil, 404, "no event log"},
		"no-native-log":        {"GET", "/api/runs/run_metaonly/native", "", nil, 404, "run_metaonly has no native log"},
		"rebinding-host":       {"GET", "/api/runs", "", map[string]string{"Host": "evil.example:80"}, 401, "token"},
	} {
		t.Run(name, func(t *testing.T) {
			res := f.api.Do(t, t.Context(), tc.method, tc.path, tc.body, tc.hdr)
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			require.Equal(t, tc.status, res.StatusCode, "%s", b)
			var e struct{ Error string }
			require.NoError(t, json.Unmarshal(b, &e), "%s", b)
			require.Contains(t, e.Error, tc.msg)
		})
	}
}

// TestCancel: a run started through the API stops on cancel, and its
// stream says so.
func TestCancel(t *testing.T) {
	f := newFixture(t, "serve-gated")
	run := f.start(t)
	res := f.api.Events(t, context.Background(), run, nil)
	defer res.Body.Close()
	var result string
	cancelled := false
	readSSE(t, res.Body, func(m sse) bool {
		if !cancelled && strings.Contains(m.data, `"type":"tool_start"`) {
			cancelled = true
			r := f.api.Do(t, t.Context(), "POST", "/api/runs/"+run+"/cancel", "", f.api.Auth())
			r.Body.Close()
			require.Equal(t, http.StatusAccepted, r.StatusCode, "%s", f.logOf(t, run))
		}
		if strings.Contains(m.data, `"type":"result"`) {
			result = m.data
		}
		return m.event != "end"
	})
	require.Contains(t, result, `"status":"cancelled"`)
}

// TestBenchReports: stored reports are listed and served with a Wilson
// interval per group.
func TestBenchReports(t *testing.T) {
	f := newFixture(t, "serve-gated")
	writeReport(t, f.bench, "b1")
	list := f.api.JSON(t, "/api/bench", http.StatusOK)["reports"].([]any)
	require.Len(t, list, 1)
	require.Equal(t, []any{"claude", "codex"}, list[0].(map[string]any)["agents"])
	d := f.api.JSON(t, "/api/bench/b1", http.StatusOK)
	iv := d["intervals"].([]any)
	require.Len(t, iv, 2)
	c := iv[0].(map[string]any)
	require.Equal(t, "check", c["basis"])
	require.EqualValues(t, 2, c["k"])
	require.EqualValues(t, 3, c["n"])
	// 2 of 3: Wilson 95 % is [0.2077, 0.9385].
	require.InDelta(t, 0.2077, c["lo"], 1e-4)
	require.InDelta(t, 0.9385, c["hi"], 1e-4)
	require.NotNil(t, d["report"])
}

// writeReport stores a bench report of two agents on two tasks.
func writeReport(t *testing.T, dir, id string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	b, err := os.ReadFile(filepath.Join("testdata", "report.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, id+".json"), b, 0o600))
}

// TestFinishedRunsEvicted: a server keeps nothing of the runs it started
// once they end; they are still listed, summed up and streamed from
// their logs, and cancelling one is a conflict.
func TestFinishedRunsEvicted(t *testing.T) {
	f := newFixture(t, "serve-lines", "SERVE_TEST_LINES=3")
	var runs []string
	for range 3 {
		runs = append(runs, f.start(t))
	}
	require.Equal(t, 0, serve.LiveRuns(f.srv))
	for _, run := range runs {
		require.Equal(t, "success", f.api.JSON(t, "/api/runs/"+run, 200)["status"])
		res := f.api.Events(t, context.Background(), run, map[string]string{"Accept": "application/x-ndjson"})
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Equal(t, f.logOf(t, run), string(body))
		r := f.api.Do(t, t.Context(), "POST", "/api/runs/"+run+"/cancel", "", f.api.Auth())
		r.Body.Close()
		require.Equal(t, http.StatusConflict, r.StatusCode)
	}
	require.Len(t, f.api.JSON(t, "/api/runs", 200)["runs"], 3)
}

// TestNative: the debug view's file is served as text, ranges with it;
// its errors are the API's JSON ones.
func TestNative(t *testing.T) {
	f := newFixture(t, "serve-lines", "SERVE_TEST_LINES=3")
	run := f.start(t)
	waitStatus(t, f, run)
	want, err := os.ReadFile(filepath.Join(f.dir, run+".native.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, want)
	for name, tc := range map[string]struct {
		hdr    map[string]string
		status int
		body   string
	}{
		"whole":         {nil, http.StatusOK, string(want)},
		"range":         {map[string]string{"Range": "bytes=1-"}, http.StatusPartialContent, string(want[1:])},
		"range-too-far": {map[string]string{"Range": fmt.Sprintf("bytes=%d-", len(want)+10)}, http.StatusRequestedRangeNotSatisfiable, `{"error":"invalid range: failed to overlap"}` + "\n"},
	} {
		t.Run(name, func(t *testing.T) {
			res := f.api.Do(t, t.Context(), "GET", "/api/runs/"+run+"/native", "", tc.hdr)
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			require.Equal(t, tc.status, res.StatusCode, "%s", b)
			require.Equal(t, tc.body, string(b))
			if tc.status >= 400 {
				require.Equal(t, "application/json", res.Header.Get("Content-Type"))
			}
		})
	}
}
