package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mcpserver"
)

func TestMain(m *testing.M) { harnesstest.Main(m) }

// fixture is one server and one connected client. The prompt of a run
// names the fake agent that plays it.
type fixture struct {
	srv      *mcpserver.Server
	cs       *mcp.ClientSession
	runDone  chan error // srv.Run's return
	mu       sync.Mutex
	children harnesstest.Children // the processes the runs' fakes started
	logDir   string               // where the runs' session logs go
	closed   []*event.Result      // results handed to Observer.Close
	wire     []string             // what the client read, in order: "log:LEVEL", "progress", "response"
	logs     []*mcp.LoggingMessageParams
	logAt    []time.Time
	progress []*mcp.ProgressNotificationParams
}

func newFixture(t *testing.T, mutate func(*mcpserver.Options)) *fixture {
	t.Helper()
	return newFixtureProto(t, "2025-11-25", mutate)
}

// newFixtureProto connects with the given protocol version ("" for the
// SDK's latest).
func newFixtureProto(t *testing.T, proto string, mutate func(*mcpserver.Options)) *fixture {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	return startFixture(t, proto, mutate, ct, func(s *mcpserver.Server) error { return s.Run(context.Background(), st) })
}

// newFixtureStdio is newFixture with the server on ServeStdio, over pipes.
func newFixtureStdio(t *testing.T, mutate func(*mcpserver.Options)) *fixture {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	return startFixture(t, "2025-11-25", mutate, &mcp.IOTransport{Reader: outR, Writer: inW}, func(s *mcpserver.Server) error {
		defer outW.Close()
		return s.ServeStdio(context.Background(), inR, outW)
	})
}

// startFixture starts the server with serve and connects the client with
// ct.
func startFixture(t *testing.T, proto string, mutate func(*mcpserver.Options), ct mcp.Transport, serve func(*mcpserver.Server) error) *fixture {
	t.Helper()
	f := &fixture{runDone: make(chan error, 1), logDir: t.TempDir()}
	f.srv = mcpserver.New(f.options(mutate))
	go func() { f.runDone <- serve(f.srv) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			f.mu.Lock()
			f.logs, f.logAt = append(f.logs, r.Params), append(f.logAt, time.Now())
			f.mu.Unlock()
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			f.mu.Lock()
			f.progress = append(f.progress, r.Params)
			f.mu.Unlock()
		},
	})
	cs, err := client.Connect(context.Background(), &recorder{Transport: ct, f: f}, &mcp.ClientSessionOptions{ProtocolVersion: proto})
	require.NoError(t, err)
	f.cs = cs
	t.Cleanup(func() {
		cs.Close()
		f.requireEnded(t)
	})
	return f
}

// options are the server's: each run's prompt names the fake that plays
// it, and its processes are noted in f.children.
func (f *fixture) options(mutate func(*mcpserver.Options)) mcpserver.Options {
	o := mcpserver.Options{
		Settings: &harness.Settings{LogDir: f.logDir},
		Setup: func(tk *harness.Task) (harness.Observer, error) {
			argv, env := fakeagent.Command(tk.Prompt)
			tk.Binary, tk.BaseEnv = argv[0], env
			if tk.Budgets != nil {
				tk.Budgets.Linger, tk.Budgets.KillGrace = 100*time.Millisecond, 100*time.Millisecond
			}
			return harness.Observer{
				OnNative: func(stream string, line []byte) { f.children.Note(line) },
				Close: func(res *event.Result) {
					f.mu.Lock()
					f.closed = append(f.closed, res)
					f.mu.Unlock()
				}}, nil
		},
		Limits:           mcpserver.Limits{IdleMin: 10 * time.Millisecond, IdleMax: 10 * time.Second, HardMin: 10 * time.Millisecond, HardMax: 30 * time.Second},
		ProgressInterval: 20 * time.Millisecond,
		LogInterval:      10 * time.Millisecond,
	}
	if mutate != nil {
		mutate(&o)
	}
	return o
}

// requireEnded waits for the server to end its session, once its client
// went away, and checks no process of its runs is left.
func (f *fixture) requireEnded(t *testing.T) {
	t.Helper()
	select {
	case <-f.runDone:
	case <-time.After(20 * time.Second):
		t.Error("the server did not end its session")
	}
	f.children.RequireGone(t)
}

func (f *fixture) call(t *testing.T, name string, args map[string]any, token any) *mcp.CallToolResult {
	t.Helper()
	return f.callMeta(t, name, args, token, nil)
}

func (f *fixture) callMeta(t *testing.T, name string, args map[string]any, token any, meta mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta}
	if token != nil {
		p.SetProgressToken(token)
	}
	// A bound on a hang, not a budget: a 16 MiB prompt takes 13-23 s
	// under -race on a loaded 2-core machine, and past 60 s beside a
	// compiler.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := f.cs.CallTool(ctx, p)
	require.NoError(t, err, "a tool call is never a protocol error")
	return res
}

func TestListAgents(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	tools, err := f.cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		require.NotEmpty(t, tl.Description)
		require.NotNil(t, tl.OutputSchema, tl.Name)
	}
	require.ElementsMatch(t, []string{"run_agent", "run_status", "run_events", "cancel_run", "list_agents"}, names)
	for _, tl := range tools.Tools {
		if tl.Name == "run_agent" {
			require.Contains(t, tl.Description, "SHELL ACCESS")
			b, _ := json.Marshal(tl.InputSchema)
			s := gjson.ParseBytes(b)
			require.ElementsMatch(t, []any{"agent", "prompt"}, toAny(s.Get("required").Array()))
			require.Equal(t, `["turn","none"]`, s.Get("properties.wait.enum").Raw)
		}
	}

	res := f.call(t, "list_agents", map[string]any{}, nil)
	require.False(t, res.IsError, harnesstest.MCPText(res))
	s := harnesstest.MCPStructured(t, res)
	require.Len(t, s.Get("agents").Array(), len(harness.Agents()))
	claude := s.Get(`agents.#(id=="claude")`)
	require.True(t, claude.Get("installed").Bool(), "the Setup hook points every agent at the test binary")
	exe, _ := os.Executable()
	require.Equal(t, exe, claude.Get("binary").String())
}

func toAny(rs []gjson.Result) []any {
	out := make([]any, len(rs))
	for i, r := range rs {
		out[i] = r.String()
	}
	return out
}

func TestRunTurnSuccess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := newFixture(t, func(o *mcpserver.Options) { o.Roots = []string{dir} })
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "long-silent-tool", "cwd": dir}, "tok-1")
	require.False(t, res.IsError, harnesstest.MCPText(res))
	require.Equal(t, "done", res.Content[0].(*mcp.TextContent).Text, "the agent's final text comes first")
	require.Contains(t, harnesstest.MCPText(res), ", 1 turn, tools [shell×1], tokens in 240 out 50", "one turn is singular")
	s := harnesstest.MCPStructured(t, res)
	require.Equal(t, "success", s.Get("state").String())
	require.True(t, strings.HasPrefix(s.Get("run_id").String(), "run_"))
	sm := s.Get("summary")
	require.Equal(t, "success", sm.Get("status").String())
	require.EqualValues(t, 1, sm.Get("turns").Int())
	require.EqualValues(t, 1, sm.Get("tools_by_kind.shell").Int())
	require.EqualValues(t, 240, sm.Get("tokens.input").Int())
	require.EqualValues(t, 50, sm.Get("tokens.output").Int())
	require.InDelta(t, 0.00147, sm.Get("cost_usd").Float(), 1e-9)
	require.Equal(t, fakeagent.SessionID, sm.Get("session_id").String())
	logPath := sm.Get("session_log").String()
	require.True(t, strings.HasPrefix(logPath, f.logDir+string(filepath.Separator)), logPath)
	require.Contains(t, logPath, s.Get("run_id").String())
	require.FileExists(t, logPath)
	require.Positive(t, sm.Get("duration_ms").Int())
	require.False(t, s.Get("error").Exists())

	// Notification handlers may run after the result is delivered.
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, p := range f.progress {
			if strings.HasPrefix(p.Message, "Bash running for ") {
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "a progress message names the tool in flight")
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, p := range f.progress {
		require.Equal(t, "tok-1", p.ProgressToken)
		if i > 0 {
			require.Greater(t, p.Progress, f.progress[i-1].Progress, "progress increases")
		}
	}
	require.Len(t, f.closed, 1, "the observer is closed once")
	require.Equal(t, "success", f.closed[0].Status)
}

func messages(ps []*mcp.ProgressNotificationParams) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Message)
	}
	return out
}

func TestNoProgressWithoutToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "long-silent-tool"}, nil)
	require.False(t, res.IsError, harnesstest.MCPText(res))
	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotContains(t, f.wire, "progress")
}

func TestHungAgentIdle(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	start := time.Now()
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "setsid-escapee", "idle_timeout_ms": 1500}, "tok")
	require.Less(t, time.Since(start), 15*time.Second)
	require.True(t, res.IsError, harnesstest.MCPText(res))
	s := harnesstest.MCPStructured(t, res)
	e := s.Get("error")
	require.Equal(t, "EIDLE", e.Get("code").String())
	require.Equal(t, "idle_timeout", e.Get("event_code").String())
	require.Equal(t, "timeout", s.Get("state").String())
	require.True(t, e.Get("killed").Bool())
	require.GreaterOrEqual(t, e.Get("idle_ms").Int(), int64(1400))
	require.Positive(t, e.Get("wall_ms").Int())
	require.NotEmpty(t, e.Get("suggestions").Array())
	require.True(t, e.Get("partial").Exists())
	started := len(f.children.PIDs()) > 0 // not when a loaded machine took the whole budget to start the fake
	if started {
		require.Contains(t, e.Get("partial.stdout_tail").String(), `"fake_child"`, "the stdout tail keeps the agent's last lines")
	}
	require.NotEmpty(t, e.Get("partial.last_events").Array())
	require.EqualValues(t, 1500, s.Get("budgets.idle_timeout_ms").Int())
	require.Contains(t, harnesstest.MCPText(res), "EIDLE")

	// The notifications reach the client before the result, in this order.
	f.mu.Lock()
	var order []string
	for _, w := range f.wire {
		if w != "progress" {
			order = append(order, w)
		}
	}
	f.mu.Unlock()
	require.GreaterOrEqual(t, len(order), 3)
	require.Equal(t, []string{"log:warning", "log:error", "response"}, order[len(order)-3:],
		"the warning before the timeout, the error when it fires, then the result")
	// The handler sees them too (possibly after the result is delivered).
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.logs) > 0 && f.logs[len(f.logs)-1].Level == "error"
	}, 10*time.Second, 5*time.Millisecond)
	f.mu.Lock()
	for _, l := range f.logs {
		d, _ := json.Marshal(l.Data)
		g := gjson.ParseBytes(d)
		switch l.Level {
		case "warning":
			require.Equal(t, "idle", g.Get("code").String())
			require.Regexp(t, `^No output for \S+; aborting in \S+ unless output resumes\.$`, g.Get("message").String())
			require.Positive(t, g.Get("idle_ms").Int())
			require.Positive(t, g.Get("abort_in_ms").Int())
			require.Equal(t, s.Get("run_id").String(), g.Get("run_id").String())
		case "error":
			require.Equal(t, "EIDLE", g.Get("code").String())
		default:
			t.Errorf("log level %s", l.Level)
		}
	}
	f.mu.Unlock()
	f.children.RequireGone(t)
}

// TestLatestProtocol: under protocol 2026-07-28 the log level is per
// request; the idle warning reaches a client that asks for it, and the
// progress messages carry it in any case.
func TestLatestProtocol(t *testing.T) {
	t.Parallel()
	f := newFixtureProto(t, "", nil)
	res := f.callMeta(t, "run_agent", map[string]any{"agent": "claude", "prompt": "hang-silent", "idle_timeout_ms": 1500}, "tok",
		mcp.Meta{"io.modelcontextprotocol/logLevel": "warning"})
	require.True(t, res.IsError, harnesstest.MCPText(res))
	require.Equal(t, "EIDLE", harnesstest.MCPStructured(t, res).Get("error.code").String())
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.logs) > 0 && f.logs[len(f.logs)-1].Level == "error"
	}, 10*time.Second, 5*time.Millisecond, "the error log notification arrives")
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Equal(t, mcp.LoggingLevel("warning"), f.logs[0].Level, "the idle warning came first")
	warned := false
	for _, p := range f.progress {
		warned = warned || strings.HasPrefix(p.Message, "No output for ")
	}
	require.True(t, warned, "a progress message carries the idle warning: %v", messages(f.progress))
}

func TestHardTimeout(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "slow-drip", "hard_timeout_ms": 100}, nil)
	require.True(t, res.IsError, harnesstest.MCPText(res))
	s := harnesstest.MCPStructured(t, res)
	require.Equal(t, "ETIMEDOUT", s.Get("error.code").String())
	require.Equal(t, "timeout", s.Get("state").String())
	require.EqualValues(t, 100, s.Get("budgets.hard_timeout_ms").Int())
	require.Contains(t, s.Get("error.suggestions.0").String(), "hard_timeout_ms")
}

func TestWaitNoneStatusEventsCancel(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *mcpserver.Options) {
		o.Limits = mcpserver.Limits{IdleMin: 8 * time.Second, IdleMax: 10 * time.Second, HardMin: time.Second, HardMax: 20 * time.Second}
	})
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "interrupt", "wait": "none",
		"idle_timeout_ms": 1, "hard_timeout_ms": 1e9}, nil)
	require.False(t, res.IsError, harnesstest.MCPText(res))
	s := harnesstest.MCPStructured(t, res)
	require.Equal(t, "running", s.Get("state").String())
	id := s.Get("run_id").String()
	b := s.Get("budgets")
	require.EqualValues(t, 8000, b.Get("idle_timeout_ms").Int(), "1 ms idle is clamped to the minimum")
	require.EqualValues(t, 20000, b.Get("hard_timeout_ms").Int(), "a huge hard timeout is clamped to the maximum")
	require.Len(t, b.Get("clamped").Array(), 2)
	require.Contains(t, b.Get("clamped.0").String(), "idle_timeout_ms 1 raised to the server minimum 8000")

	// Wait for the tool call the fake opens.
	var st gjson.Result
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		r := f.call(t, "run_status", map[string]any{"run_id": id}, nil)
		require.False(t, r.IsError, harnesstest.MCPText(r))
		st = harnesstest.MCPStructured(t, r)
		if len(st.Get("tools_in_flight").Array()) > 0 || st.Get("state").String() != "running" {
			break
		}
		time.Sleep(10 * time.Millisecond) // polling a condition
	}
	require.Equal(t, "running", st.Get("state").String())
	require.Equal(t, "Bash", st.Get("tools_in_flight.0.name").String())
	require.Equal(t, "shell", st.Get("tools_in_flight.0.kind").String())
	require.Contains(t, st.Get("activity").String(), "Bash running for")
	require.GreaterOrEqual(t, st.Get("elapsed_ms").Int(), int64(0))

	// Page through the events one at a time.
	var seqs []int64
	after := int64(0)
	for range 10 {
		r := f.call(t, "run_events", map[string]any{"run_id": id, "after_seq": after, "limit": 1}, nil)
		require.False(t, r.IsError, harnesstest.MCPText(r))
		p := harnesstest.MCPStructured(t, r)
		evs := p.Get("events").Array()
		if len(evs) == 0 {
			break
		}
		require.Len(t, evs, 1)
		seqs = append(seqs, evs[0].Get("seq").Int())
		after = p.Get("next_after_seq").Int()
		if !p.Get("more").Bool() {
			break
		}
	}
	require.GreaterOrEqual(t, len(seqs), 2)
	for i, q := range seqs {
		require.EqualValues(t, i+1, q, "pages are contiguous")
	}

	r := f.call(t, "cancel_run", map[string]any{"run_id": id}, nil)
	require.False(t, r.IsError, harnesstest.MCPText(r))
	c := harnesstest.MCPStructured(t, r)
	require.Equal(t, "cancelled", c.Get("state").String())
	require.Equal(t, "ECANCELED", c.Get("error.code").String())
	require.Contains(t, c.Get("error.message").String(), "cancelled")
	f.children.RequireGone(t)
	require.NotEmpty(t, f.children.PIDs())

	r = f.call(t, "run_status", map[string]any{"run_id": id}, nil)
	require.Equal(t, "cancelled", harnesstest.MCPStructured(t, r).Get("state").String())
	r = f.call(t, "run_events", map[string]any{"run_id": id, "after_seq": after}, nil)
	last := harnesstest.MCPStructured(t, r).Get("events|@reverse|0")
	require.Equal(t, "result", last.Get("type").String(), "the stream ends with its result")
}

func TestBadArguments(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	f := newFixture(t, func(o *mcpserver.Options) { o.Roots = []string{root} })
	file := root + "/file"
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	cases := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"unknown-agent", "run_agent", map[string]any{"agent": "nope", "prompt": "x"}, `unknown agent "nope"`},
		{"empty-prompt", "run_agent", map[string]any{"agent": "claude", "prompt": "  "}, "prompt is empty"},
		{"missing-prompt", "run_agent", map[string]any{"agent": "claude"}, "prompt"},
		{"bad-permissions", "run_agent", map[string]any{"agent": "claude", "prompt": "x", "permissions": "root"}, "permissions"},
		{"bad-wait", "run_agent", map[string]any{"agent": "claude", "prompt": "x", "wait": "forever"}, "wait"},
		{"negative-idle", "run_agent", map[string]any{"agent": "claude", "prompt": "x", "idle_timeout_ms": -5}, "idle_timeout_ms -5"},
		// Past 2^53-1: the SDK, which reads arguments as float64s, gave
		// a Go decode error ("json: cannot unmarshal number ... into Go
		// struct field mcpserver.RunArgs.idle_timeout_ms of type int64").
		{"idle-2^63-1", "run_agent", map[string]any{"agent": "claude", "prompt": "x", "idle_timeout_ms": int64(math.MaxInt64)},
			"run_agent: idle_timeout_ms 9223372036854775807: want a whole number of milliseconds from 0 to 9007199254740991"},
		{"hard-1e30", "run_agent", map[string]any{"agent": "claude", "prompt": "x", "hard_timeout_ms": json.Number("1e30")},
			"run_agent: hard_timeout_ms 1e30: want a whole number of milliseconds from 0 to 9007199254740991"},
		{"idle-2^53", "run_agent", map[string]any{"agent": "claude", "prompt": "x", "idle_timeout_ms": int64(1) << 53},
			"idle_timeout_ms 9007199254740992: want a whole number"},
		{"idle-fraction", "run_agent", map[string]any{"agent": "claude", "prompt": "x", "idle_timeout_ms": 1.5}, "idle_timeout_ms 1.5: want a whole number"},
		{"hard-string", "run_agent", map[string]any{"agent": "claude", "prompt": "x", "hard_timeout_ms": "5"}, "hard_timeout_ms (a string): want a whole number"},
		{"limit-1e30", "run_events", map[string]any{"run_id": "run_nope", "limit": json.Number("1e30")},
			"run_events: limit 1e30: want a whole number from 0 to 9007199254740991"},
		{"cwd-missing", "run_agent", map[string]any{"agent": "claude", "prompt": "slow-drip", "cwd": "nonexistent/dir"}, "is not a directory"},
		{"cwd-file", "run_agent", map[string]any{"agent": "claude", "prompt": "slow-drip", "cwd": file}, "is not a directory"},
		{"unknown-field", "run_agent", map[string]any{"agent": "claude", "prompt": "x", "colour": "red"}, "colour"},
		{"unknown-run", "run_status", map[string]any{"run_id": "run_nope"}, `unknown run_id "run_nope"`},
		{"unknown-run-events", "run_events", map[string]any{"run_id": "run_nope"}, "unknown run_id"},
		{"unknown-run-cancel", "cancel_run", map[string]any{"run_id": "run_nope"}, "unknown run_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := f.call(t, c.tool, c.args, nil)
			require.True(t, res.IsError)
			require.Contains(t, harnesstest.MCPText(res), c.want)
			require.NotContains(t, harnesstest.MCPText(res), "\n", "one line")
		})
	}
}

func TestNotInstalled(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *mcpserver.Options) {
		o.Setup = func(tk *harness.Task) (harness.Observer, error) {
			tk.Binary, tk.BaseEnv = "/nonexistent/claude", []string{"PATH=/nonexistent"}
			return harness.Observer{}, nil
		}
	})
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "x"}, nil)
	require.True(t, res.IsError, harnesstest.MCPText(res))
	require.Equal(t, "not_installed", harnesstest.MCPStructured(t, res).Get("error.code").String())
	res = f.call(t, "list_agents", map[string]any{}, nil)
	require.False(t, harnesstest.MCPStructured(t, res).Get(`agents.#(id=="claude").installed`).Bool())
}

func TestConcurrentRuns(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	var wg sync.WaitGroup
	ids := make([]string, 2)
	for i := range ids {
		wg.Go(func() {
			res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "slow-drip"}, "tok-"+strconv.Itoa(i))
			if res.IsError {
				t.Errorf("run %d: %s", i, harnesstest.MCPText(res))
				return
			}
			ids[i] = harnesstest.MCPStructured(t, res).Get("run_id").String()
		})
	}
	wg.Wait()
	require.NotEqual(t, ids[0], ids[1])
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		tokens := map[any]bool{}
		for _, p := range f.progress {
			tokens[p.ProgressToken] = true
		}
		return len(tokens) == 2
	}, 10*time.Second, 5*time.Millisecond, "each call gets its own progress")
}

func TestSessionCloseCancelsRuns(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "interrupt", "wait": "none"}, nil)
	require.False(t, res.IsError, harnesstest.MCPText(res))
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if len(f.children.PIDs()) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond) // polling a condition
	}
	require.NoError(t, f.cs.Close())
	select {
	case err := <-f.runDone:
		require.NoError(t, err)
		f.runDone <- nil // for the cleanup
	case <-time.After(15 * time.Second):
		t.Fatal("the session's end did not end its run")
	}
	f.children.RequireGone(t)
	require.NotEmpty(t, f.children.PIDs())
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Len(t, f.closed, 1)
	require.Equal(t, "cancelled", f.closed[0].Status)
}

func TestCheckLoopback(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"127.0.0.1:0", "127.0.0.1:8080", "[::1]:9", "localhost:7"} {
		require.NoError(t, mcpserver.CheckLoopback(ok), ok)
	}
	for _, bad := range []string{"0.0.0.0:80", ":80", "192.168.1.2:80", "[::]:80", "example.com:80", "127.0.0.1"} {
		require.Error(t, mcpserver.CheckLoopback(bad), bad)
	}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func TestHTTP(t *testing.T) {
	t.Parallel()
	srv := mcpserver.New(mcpserver.Options{Setup: func(tk *harness.Task) (harness.Observer, error) {
		argv, env := fakeagent.Command(tk.Prompt)
		tk.Binary, tk.BaseEnv = argv[0], env
		return harness.Observer{}, nil
	}})
	ts := httptest.NewServer(srv.Handler("s3cret-0123456789abcdef"))
	t.Cleanup(func() { ts.Close(); srv.Close() })

	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL,
		HTTPClient: &http.Client{Transport: bearer{"s3cret-0123456789abcdef", http.DefaultTransport}}, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_agents", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, res.IsError, harnesstest.MCPText(res))
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_agent",
		Arguments: map[string]any{"agent": "claude", "prompt": "slow-drip"}})
	require.NoError(t, err)
	require.False(t, res.IsError, harnesstest.MCPText(res))
	require.Equal(t, "done", res.Content[0].(*mcp.TextContent).Text)
	require.NoError(t, cs.Close())

	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for name, auth := range map[string]string{"missing": "", "wrong": "Bearer nope", "no-scheme": "s3cret-0123456789abcdef"} {
		req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, name)
	}
	// The scheme's name is matched in any case (RFC 7235): "bearer" was
	// refused, as serve refused it.
	for _, auth := range []string{"bearer s3cret-0123456789abcdef", "BEARER s3cret-0123456789abcdef", "Bearer  s3cret-0123456789abcdef"} {
		req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, auth)
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			del, _ := http.NewRequest(http.MethodDelete, ts.URL, nil)
			del.Header.Set("Authorization", auth)
			del.Header.Set("Mcp-Session-Id", sid)
			if resp, err := http.DefaultClient.Do(del); err == nil {
				resp.Body.Close()
			}
		}
	}
}

func TestServeHTTP(t *testing.T) {
	t.Parallel()
	srv := mcpserver.New(mcpserver.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	require.ErrorContains(t, srv.ServeHTTP(context.Background(), ln, ""), "bearer token")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeHTTP(ctx, ln, "tok-0123456789abcdef") }()
	req, _ := http.NewRequest("POST", "http://"+ln.Addr().String(), strings.NewReader("{}"))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("ServeHTTP did not return when its context was done")
	}
}

// recorder notes the order in which messages reach the client on the wire
// (the SDK may run notification handlers after it delivers a response).
type recorder struct {
	mcp.Transport
	f *fixture
}

func (r *recorder) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	return &recConn{Connection: c, f: r.f}, err
}

type recConn struct {
	mcp.Connection
	f *fixture
}

func (c *recConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	var note string
	switch v := m.(type) {
	case *jsonrpc.Request:
		switch v.Method {
		case "notifications/message":
			note = "log:" + gjson.GetBytes(v.Params, "level").String()
		case "notifications/progress":
			note = "progress"
		}
	case *jsonrpc.Response:
		note = "response"
	}
	if note != "" {
		c.f.mu.Lock()
		c.f.wire = append(c.f.wire, note)
		c.f.mu.Unlock()
	}
	return m, err
}

// TestEventBufferBound: without session logs, a run keeps its newest
// MaxEvents events and reports the older ones as dropped.
func TestEventBufferBound(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *mcpserver.Options) { o.MaxEvents = 3; o.Settings = &harness.Settings{} })
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "slow-drip"}, nil)
	require.False(t, res.IsError, harnesstest.MCPText(res))
	id := harnesstest.MCPStructured(t, res).Get("run_id").String()
	events := harnesstest.MCPStructured(t, res).Get("summary.events").Int()
	require.Greater(t, events, int64(3))
	p := harnesstest.MCPStructured(t, f.call(t, "run_events", map[string]any{"run_id": id}, nil))
	evs := p.Get("events").Array()
	require.Len(t, evs, 3, "only the newest events are kept")
	require.Equal(t, events-3, p.Get("dropped").Int())
	require.Equal(t, events-2, evs[0].Get("seq").Int())
	require.Equal(t, "result", evs[2].Get("type").String())
	require.Equal(t, events, p.Get("next_after_seq").Int())
	require.False(t, p.Get("more").Bool())
	p = harnesstest.MCPStructured(t, f.call(t, "run_events", map[string]any{"run_id": id, "after_seq": events}, nil))
	require.Empty(t, p.Get("events").Array())
	require.Zero(t, p.Get("dropped").Int())
}

// TestCallCancelled: a client that cancels its run_agent call stops the
// run, and nothing of it is left.
func TestCallCancelled(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for ctx.Err() == nil {
			if len(f.children.PIDs()) > 0 {
				cancel()
			}
			time.Sleep(5 * time.Millisecond) // polling a condition
		}
	}()
	_, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_agent", Arguments: map[string]any{"agent": "claude", "prompt": "interrupt"}})
	require.ErrorIs(t, err, context.Canceled)
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.closed) == 1
	}, 15*time.Second, 5*time.Millisecond, "the run ends")
	f.mu.Lock()
	require.Equal(t, "cancelled", f.closed[0].Status)
	f.mu.Unlock()
	f.children.RequireGone(t)
}

// TestCwdConfined: a client's cwd stays inside the server's roots,
// however it is spelled; a relative one is taken from the first root.
func TestCwdConfined(t *testing.T) {
	t.Parallel()
	root, other := t.TempDir(), t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
	require.NoError(t, os.Symlink("/etc", filepath.Join(root, "etc-link")))
	require.NoError(t, os.Symlink(filepath.Join(root, "sub"), filepath.Join(other, "into-root")))
	var mu sync.Mutex
	var cwds []string
	f := newFixture(t, func(o *mcpserver.Options) {
		o.Roots = []string{root}
		inner := o.Setup
		o.Setup = func(tk *harness.Task) (harness.Observer, error) {
			mu.Lock()
			cwds = append(cwds, tk.Cwd)
			mu.Unlock()
			return inner(tk)
		}
	})
	for _, cwd := range []string{"../../../../etc", "/etc", "etc-link", "sub/../..", other, filepath.Join(root, "etc-link")} {
		res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "slow-drip", "cwd": cwd}, nil)
		require.True(t, res.IsError, "%s: %s", cwd, harnesstest.MCPText(res))
		require.Contains(t, harnesstest.MCPText(res), "outside the directories this server runs agents in", cwd)
	}
	real, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)
	for cwd, want := range map[string]string{"": real, "sub": filepath.Join(real, "sub"), "sub/../sub": filepath.Join(real, "sub"),
		filepath.Join(root, "sub"): filepath.Join(real, "sub"), filepath.Join(other, "into-root"): filepath.Join(real, "sub")} {
		mu.Lock()
		cwds = nil
		mu.Unlock()
		res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "slow-drip", "cwd": cwd}, nil)
		require.False(t, res.IsError, "%s: %s", cwd, harnesstest.MCPText(res))
		mu.Lock()
		require.Equal(t, []string{want}, cwds, cwd)
		mu.Unlock()
	}
}

// TestTokenNotInherited: the bearer token that lets a client start runs
// never reaches the agents those runs start, read-only or not.
func TestTokenNotInherited(t *testing.T) {
	t.Setenv("HARNESS_MCP_TOKEN", "mcp-token-0123456789abcdef")
	t.Setenv(fakeagent.EchoVars, "HARNESS_MCP_TOKEN,HOME")
	f := newFixture(t, nil)
	for _, perm := range []string{"full-access", "read-only"} {
		res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "echo-env", "permissions": perm}, nil)
		require.False(t, res.IsError, harnesstest.MCPText(res))
		require.Contains(t, harnesstest.MCPText(res), "HARNESS_MCP_TOKEN unset", perm)
		require.Contains(t, harnesstest.MCPText(res), "HOME="+os.Getenv("HOME"), "%s: the rest of the environment is kept", perm)
		require.NotContains(t, harnesstest.MCPText(res), "mcp-token-0123456789abcdef", perm)
	}
}

func TestShortTokenRefused(t *testing.T) {
	t.Parallel()
	require.ErrorContains(t, mcpserver.CheckToken("short-token"), "at least 16")
	require.NoError(t, mcpserver.CheckToken("0123456789abcdef"))
	srv := mcpserver.New(mcpserver.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	require.ErrorContains(t, srv.ServeHTTP(context.Background(), ln, "tok"), "at least 16")
}

// TestEventsFromLog: a run with a session log keeps no events in memory
// (a long MCP session does not grow with its runs); run_events pages
// through the log, all of it.
func TestEventsFromLog(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *mcpserver.Options) { o.MaxEvents = 3 })
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "slow-drip"}, nil)
	require.False(t, res.IsError, harnesstest.MCPText(res))
	out := harnesstest.MCPStructured(t, res)
	id, logPath, events := out.Get("run_id").String(), out.Get("summary.session_log").String(), out.Get("summary.events").Int()
	require.Greater(t, events, int64(3))
	require.Zero(t, mcpserver.BufferedEvents(f.srv))

	var got []string
	after := int64(0)
	for pages := 0; ; pages++ {
		require.Less(t, pages, 100)
		p := harnesstest.MCPStructured(t, f.call(t, "run_events", map[string]any{"run_id": id, "after_seq": after, "limit": 2}, nil))
		require.Zero(t, p.Get("dropped").Int())
		require.Equal(t, events, p.Get("last_seq").Int())
		for _, e := range p.Get("events").Array() {
			got = append(got, e.Raw)
		}
		after = p.Get("next_after_seq").Int()
		if !p.Get("more").Bool() {
			break
		}
	}
	require.Equal(t, events, after)
	logged, err := os.ReadFile(logPath)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(logged), "\n"), "\n")
	require.Len(t, got, len(lines))
	for i, l := range lines {
		require.JSONEq(t, l, got[i]) // the SDK orders the keys of structured content its own way
	}
	// A page from the start again, after the cursor moved on.
	p := harnesstest.MCPStructured(t, f.call(t, "run_events", map[string]any{"run_id": id, "limit": 1}, nil))
	require.EqualValues(t, 1, p.Get("events.0.seq").Int())
	// Past the end: last_seq is the newest event's, not after_seq echoed.
	p = harnesstest.MCPStructured(t, f.call(t, "run_events", map[string]any{"run_id": id, "after_seq": events + 500}, nil))
	require.Equal(t, events, p.Get("last_seq").Int())
	require.Empty(t, p.Get("events").Array())
}

// run_events reads the session log, which holds a burst's lines in memory
// until the agent's output pauses: a page holds every event the run has
// emitted, also while a burst is being written.
func TestRunEventsHasWhatTheLogHolds(t *testing.T) {
	t.Parallel()
	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f := newFixture(t, func(o *mcpserver.Options) {
		setup := o.Setup
		o.Setup = func(tk *harness.Task) (harness.Observer, error) {
			ob, err := setup(tk)
			// Observers follow the session log: the tool_start line is in
			// the log's buffer, not yet on the disk, while this one holds
			// the stdout goroutine.
			ob.OnLine = func(line []byte) {
				if strings.Contains(string(line), `"type":"tool_start"`) {
					once.Do(func() { close(reached); <-release })
				}
			}
			return ob, err
		}
	})
	defer close(release)
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "interrupt", "wait": "none"}, nil)
	require.False(t, res.IsError, harnesstest.MCPText(res))
	id := harnesstest.MCPStructured(t, res).Get("run_id").String()
	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		t.Fatal("the fake never started its tool call")
	}
	r := f.call(t, "run_events", map[string]any{"run_id": id, "after_seq": 0, "limit": 100}, nil)
	require.False(t, r.IsError, harnesstest.MCPText(r))
	var types []string
	for _, ev := range harnesstest.MCPStructured(t, r).Get("events").Array() {
		types = append(types, ev.Get("type").String())
	}
	require.Contains(t, types, "tool_start", "run_events: %v", types)
}

// TestBudgetBeyondDurations: a budget past what a time.Duration holds
// (~292 years) is lowered to the maximum; it overflowed, and was raised
// to the minimum instead: the run got 2 s.
func TestBudgetBeyondDurations(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "slow-drip", "wait": "none",
		"idle_timeout_ms": int64(1)<<53 - 1, "hard_timeout_ms": int64(9223372036855)}, nil) // 1 ms past what a Duration holds
	require.False(t, res.IsError, harnesstest.MCPText(res))
	s := harnesstest.MCPStructured(t, res)
	b := s.Get("budgets")
	require.EqualValues(t, 10000, b.Get("idle_timeout_ms").Int())
	require.EqualValues(t, 30000, b.Get("hard_timeout_ms").Int())
	require.Equal(t, []any{
		"idle_timeout_ms 9007199254740991 lowered to the server maximum 10000",
		"hard_timeout_ms 9223372036855 lowered to the server maximum 30000",
	}, toAny(b.Get("clamped").Array()))
	res = f.call(t, "cancel_run", map[string]any{"run_id": s.Get("run_id").String()}, nil)
	require.Equal(t, "cancelled", harnesstest.MCPStructured(t, res).Get("state").String())
}

// TestHTTPSessionDeleteEndsRuns: a client's end of its HTTP session (a
// DELETE) interrupts the session's runs at once and is answered then. The
// SDK's close waited for the run_agent in flight, whose run was only
// interrupted once the close was over: the DELETE waited for the run's
// idle budget (5 min here), and the runs went on meanwhile.
func TestHTTPSessionDeleteEndsRuns(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	srv := mcpserver.New(mcpserver.Options{Setup: func(tk *harness.Task) (harness.Observer, error) {
		argv, env := fakeagent.Command(tk.Prompt)
		tk.Binary, tk.BaseEnv = argv[0], env
		return harness.Observer{OnEvent: func(event.Event) {
			select {
			case started <- struct{}{}:
			default:
			}
		}}, nil
	}})
	ts := httptest.NewServer(srv.Handler("s3cret-0123456789abcdef"))
	t.Cleanup(func() { srv.Close(); ts.CloseClientConnections(); ts.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL,
		HTTPClient: &http.Client{Transport: bearer{"s3cret-0123456789abcdef", http.DefaultTransport}}, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_agent",
			Arguments: map[string]any{"agent": "claude", "prompt": "interrupt"}}) // waits for its end
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the run never started")
	}
	// The client's own Close waits for its calls in flight: the DELETE is
	// sent as a client that gives up on them sends it.
	closed := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodDelete, ts.URL, nil)
		req.Header.Set("Authorization", "Bearer s3cret-0123456789abcdef")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		closed <- err
	}()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("the session's DELETE waited for its run")
	}
}
