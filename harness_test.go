package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
)

func TestMain(m *testing.M) { harnesstest.Main(m) }

// fakeRun is one run of a named fake agent through the whole composition,
// parsed as Claude output (the fakes print Claude-like stream-json).
type fakeRun struct {
	ndjson  []byte
	events  []event.Event
	result  *event.Result
	err     error
	elapsed time.Duration
	pids    []int // processes the fake reported starting
}

func runFake(t *testing.T, name string, b harness.Budgets, during func(*harness.Run)) fakeRun {
	t.Helper()
	argv, env := fakeagent.Command(name)
	fr := runTask(t, harness.Task{
		Agent: "claude", Binary: argv[0], BaseEnv: env, Raw: true,
		Prompt: "do it", Cwd: t.TempDir(),
		Budgets: &b,
	}, during)
	var children harnesstest.Children
	for _, n := range fr.find(event.TypeNative) {
		children.Note(n.(*event.Native).Line)
	}
	children.RequireGone(t)
	fr.pids = children.PIDs()
	return fr
}

// runTask starts task, calls during (when set) while it runs, waits for
// it, and returns its stream, checked against the schema.
func runTask(t *testing.T, task harness.Task, during func(*harness.Run)) fakeRun {
	t.Helper()
	var mu sync.Mutex
	var out bytes.Buffer
	start := time.Now()
	run, err := harness.Start(context.Background(), task, harness.Options{OnLine: func(line []byte) {
		mu.Lock()
		out.Write(line)
		mu.Unlock()
	}})
	require.NoError(t, err)
	if during != nil {
		during(run)
	}
	res, werr := run.Wait()
	fr := fakeRun{result: res, err: werr, elapsed: time.Since(start)}
	mu.Lock()
	fr.ndjson = append([]byte(nil), out.Bytes()...)
	mu.Unlock()
	adaptertest.CheckStream(t, fr.ndjson)
	fr.events, err = event.ReadAll(bytes.NewReader(fr.ndjson))
	require.NoError(t, err)
	return fr
}

func (f fakeRun) find(typ event.Type) []event.Body { return harnesstest.Bodies(f.events, typ) }

func (f fakeRun) errorCode() string {
	// The harness's own error (interrupted, idle_timeout, …) says how the
	// run ended; the agent's terminal agent_error may come before it,
	// fatal when the agent failed before the watchdog fired.
	code := ""
	for _, b := range f.find(event.TypeError) {
		if e := b.(*event.Error); e.Fatal || e.Code == event.CodeNoTerminalEvent {
			if e.Code != event.ErrAgentError {
				return e.Code
			}
			if code == "" {
				code = e.Code
			}
		}
	}
	return code
}

// quickIdle is for the scenarios that are meant to go idle.
func quickIdle(b *harness.Budgets) { b.Idle, b.IdleWarning = 150*time.Millisecond, 50*time.Millisecond }

func small() harness.Budgets {
	// Idle is wide enough for a test binary to start on two busy cores;
	// the scenarios about idleness set their own.
	return harness.Budgets{Idle: 5 * time.Second, IdleWarning: 300 * time.Millisecond,
		Hard: 20 * time.Second, Linger: 100 * time.Millisecond, KillGrace: 100 * time.Millisecond}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		fake    string // the fake to run; name when empty
		budgets func(*harness.Budgets)
		during  func(*harness.Run)
		status  string
		code    string // the fatal (or no-terminal) error's code
		errIs   error
		bound   time.Duration
		check   func(t *testing.T, f fakeRun)
	}{
		{name: "hang-silent", budgets: quickIdle, status: event.ResultTimeout, code: event.ErrIdleTimeout, errIs: harness.ErrIdleTimeout, bound: 10 * time.Second,
			check: func(t *testing.T, f fakeRun) {
				warns := f.find(event.TypeWarning)
				require.NotEmpty(t, warns)
				require.Equal(t, event.WarnIdle, warns[0].(*event.Warning).Code)
			}},
		{name: "hang-after-output", budgets: func(b *harness.Budgets) { b.Idle, b.IdleWarning = 2*time.Second, 500*time.Millisecond }, status: event.ResultTimeout, code: event.ErrIdleTimeout, errIs: harness.ErrIdleTimeout, bound: 10 * time.Second,
			check: func(t *testing.T, f fakeRun) {
				require.NotEmpty(t, f.find(event.TypeMessage), "lines before the hang are kept")
			}},
		{name: "ignore-sigterm", status: event.ResultTimeout, code: event.ErrIdleTimeout, errIs: harness.ErrIdleTimeout, bound: 10 * time.Second,
			// The fake ignores SIGTERM only once it has started: idle must
			// outlast its start-up, then SIGKILL is needed.
			budgets: func(b *harness.Budgets) { b.Idle, b.IdleWarning = 3*time.Second, 0 },
			check: func(t *testing.T, f fakeRun) {
				require.Positive(t, f.result.Stats.NativeLines, "the fake never started within the idle budget")
				e := f.find(event.TypeError)[0].(*event.Error)
				require.Equal(t, "SIGKILL", e.Signal)
				require.True(t, *e.Killed)
			}},
		{name: "result-then-linger", status: event.ResultSuccess, bound: 10 * time.Second,
			check: func(t *testing.T, f fakeRun) {
				var codes []string
				for _, w := range f.find(event.TypeWarning) {
					codes = append(codes, w.(*event.Warning).Code)
				}
				require.Contains(t, codes, event.WarnLingeredAfterResult)
			}},
		// After the final event only the linger rule applies: an idle
		// budget equal to the linger must not make a finished answer a
		// timeout. (Wide budgets: idle counts the fake's start-up.)
		{name: "result-then-linger-idle-equal", fake: "result-then-linger", status: event.ResultSuccess, bound: 15 * time.Second,
			budgets: func(b *harness.Budgets) { b.Idle, b.IdleWarning, b.Linger = 3*time.Second, 0, 3*time.Second },
			check: func(t *testing.T, f fakeRun) {
				require.NoError(t, f.err)
				var codes []string
				for _, w := range f.find(event.TypeWarning) {
					codes = append(codes, w.(*event.Warning).Code)
				}
				require.Equal(t, []string{event.WarnLingeredAfterResult}, codes)
			}},
		{name: "exit-nonzero-with-stderr", status: event.ResultError, code: event.ErrProcessExit, errIs: harness.ErrAgentFailed, bound: 10 * time.Second,
			check: func(t *testing.T, f fakeRun) {
				e := f.find(event.TypeError)[0].(*event.Error)
				require.NotEmpty(t, e.Partial.StderrTail)
				require.Equal(t, 1, *e.ExitCode)
				var stderrLines int
				for _, b := range f.find(event.TypeNative) {
					if b.(*event.Native).Stream == event.StreamStderr {
						stderrLines++
					}
				}
				require.Equal(t, 1, stderrLines, "--raw shows stderr lines too")
			}},
		{name: "error-result-stderr-noise", status: event.ResultError, code: event.ErrAgentError, errIs: harness.ErrAgentFailed, bound: 10 * time.Second,
			// The check reads the exit's own event: the fake must exit by
			// itself after its result, also when a busy machine delays it
			// past the small linger (then it is killed, and the event is
			// the kill's).
			budgets: func(b *harness.Budgets) { b.Linger = 5 * time.Second },
			check: func(t *testing.T, f fakeRun) {
				// The exit that follows the agent's own error details that
				// failure: its class is the error's, not the stderr's.
				var exit, fatal *event.Error
				for _, b := range f.find(event.TypeError) {
					switch e := b.(*event.Error); {
					case e.Code == event.ErrProcessExit:
						exit = e
					case e.Fatal:
						fatal = e
					}
				}
				require.NotNil(t, exit)
				require.NotNil(t, fatal)
				require.False(t, exit.Fatal)
				require.Equal(t, event.ClassServerError, fatal.Class)
				require.Equal(t, fatal.Class, exit.Class, "not rate_limit from the stderr's retry noise")
				require.Equal(t, fatal.Status, exit.Status)
			}},
		{name: "exit-0-without-terminal-event", status: event.ResultError, code: event.CodeNoTerminalEvent, errIs: harness.ErrAgentFailed, bound: 10 * time.Second},
		{name: "killed-by-signal", status: event.ResultError, code: event.ErrProcessExit, errIs: harness.ErrAgentFailed, bound: 10 * time.Second,
			check: func(t *testing.T, f fakeRun) { require.NotEmpty(t, f.result.Signal) }},
		// That a slow drip and a long silent tool are not idle is proven in
		// process/fault_test.go, with timing measured from the fake's first
		// line; here they must come through the whole composition intact.
		{name: "slow-drip", status: event.ResultSuccess, bound: 10 * time.Second},
		{name: "long-silent-tool", status: event.ResultSuccess, bound: 10 * time.Second,
			check: func(t *testing.T, f fakeRun) { require.Len(t, f.find(event.TypeToolEnd), 1) }},
		{name: "tool-past-budget", status: event.ResultSuccess, bound: 10 * time.Second,
			budgets: func(b *harness.Budgets) { b.Tool = func(event.Kind) time.Duration { return 50 * time.Millisecond } },
			check: func(t *testing.T, f fakeRun) {
				n := 0
				name := f.find(event.TypeToolStart)[0].(*event.ToolStart).Name
				for _, w := range f.find(event.TypeWarning) {
					if w := w.(*event.Warning); w.Code == event.WarnToolStalled {
						n++
						require.Equal(t, name, w.Name, "the warning names the tool")
					}
				}
				require.Equal(t, 1, n, "one tool_stalled warning per call")
			}},
		{name: "exit-mid-tool", status: event.ResultError, bound: 10 * time.Second,
			check: func(t *testing.T, f fakeRun) {
				ends := f.find(event.TypeToolEnd)
				require.Len(t, ends, 1)
				require.True(t, ends[0].(*event.ToolEnd).Synthetic)
				require.Equal(t, event.StatusCancelled, ends[0].(*event.ToolEnd).Status)
			}},
		{name: "interrupt", status: event.ResultCancelled, code: event.ErrInterrupted, errIs: harness.ErrInterrupted, bound: 10 * time.Second,
			budgets: func(b *harness.Budgets) { b.Idle = 0 },
			during: func(r *harness.Run) {
				deadline := time.Now().Add(5 * time.Second)
				for len(r.InFlight()) == 0 && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond) // polling a condition, not sleeping for it
				}
				r.Interrupt()
			},
			check: func(t *testing.T, f fakeRun) {
				ends := f.find(event.TypeToolEnd)
				require.Len(t, ends, 1)
				require.Equal(t, event.StatusCancelled, ends[0].(*event.ToolEnd).Status)
				// The error result the agent prints for the SIGINT is a
				// detail of the interrupt: the run has one fatal error.
				var codes []string
				for _, b := range f.find(event.TypeError) {
					e := b.(*event.Error)
					codes = append(codes, fmt.Sprintf("%s fatal=%v", e.Code, e.Fatal))
				}
				require.Equal(t, []string{"agent_error fatal=false", "interrupted fatal=true"}, codes, "%s", f.ndjson)
			}},
		{name: "grandchild-holds-stdout", bound: 10 * time.Second},
		{name: "setsid-escapee", budgets: quickIdle, status: event.ResultTimeout, bound: 10 * time.Second},
		{name: "double-fork-daemon", bound: 10 * time.Second},
		{name: "env-i-setsid-daemon", status: event.ResultSuccess, bound: 10 * time.Second,
			check: func(t *testing.T, f fakeRun) { require.Len(t, f.pids, 1) }},
		{name: "no-trailing-newline", status: event.ResultSuccess, bound: 10 * time.Second},
		{name: "invalid-utf8", bound: 10 * time.Second},
		{name: "non-json-lines", bound: 10 * time.Second,
			check: func(t *testing.T, f fakeRun) { require.Positive(t, f.result.Stats.UnparsedLines) }},
		{name: "stdin-reader", bound: 10 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := small()
			if tc.budgets != nil {
				tc.budgets(&b)
			}
			fake := tc.fake
			if fake == "" {
				fake = tc.name
			}
			f := runFake(t, fake, b, tc.during)
			require.Less(t, f.elapsed, tc.bound, "the run must end within its bound")
			if tc.status != "" {
				require.Equal(t, tc.status, f.result.Status, "%s", f.ndjson)
			}
			if tc.code != "" {
				require.Equal(t, tc.code, f.errorCode(), "%s", f.ndjson)
			}
			if tc.errIs != nil {
				require.ErrorIs(t, f.err, tc.errIs)
			} else if tc.status == event.ResultSuccess {
				require.NoError(t, f.err)
			}
			if tc.check != nil {
				tc.check(t, f)
			}
		})
	}
}

func TestNotInstalled(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	run, err := harness.Start(context.Background(), harness.Task{Agent: "codex", Binary: "/nonexistent/codex",
		Prompt: "x"}, harness.Options{OnLine: func(l []byte) { out.Write(l) }})
	require.NoError(t, err)
	res, err := run.Wait()
	var nf *harness.NotInstalledError
	require.ErrorAs(t, err, &nf)
	require.Equal(t, event.ResultError, res.Status)
	adaptertest.CheckStream(t, out.Bytes())
	require.Contains(t, out.String(), `"code":"not_installed"`)
	require.Contains(t, out.String(), "/nonexistent/codex")
}

func TestStartRejectsBadTasks(t *testing.T) {
	t.Parallel()
	for name, task := range map[string]harness.Task{
		"unknown-agent": {Agent: "nope", Prompt: "x"},
		"bad-perms":     {Agent: "claude", Prompt: "x", Permissions: "root"},
		"bad-cwd":       {Agent: "claude", Prompt: "x", Cwd: "/nonexistent/dir"},
	} {
		_, err := harness.Start(context.Background(), task, harness.Options{})
		var te *harness.TaskError
		require.ErrorAs(t, err, &te, name)
		// Settings.Start is where callers' tasks are checked (serve, mcp, acp
		// and the CLI do not check them before).
		_, err = (&harness.Settings{}).Start(context.Background(), task, harness.Options{})
		require.ErrorAs(t, err, &te, name)
	}
}

func TestResumeReportsBothSessionIDs(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command("result-then-linger")
	var out bytes.Buffer
	run, err := harness.Start(context.Background(), harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env,
		Prompt: "x", Resume: "old-session", Budgets: ptr(small())},
		harness.Options{OnLine: func(l []byte) { out.Write(l) }})
	require.NoError(t, err)
	res, err := run.Wait()
	require.NoError(t, err)
	require.Equal(t, fakeagent.SessionID, res.SessionID)
	require.Equal(t, "old-session", res.ResumedSessionID)
	last := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	var r map[string]any
	require.NoError(t, json.Unmarshal(last[len(last)-1], &r))
	require.Equal(t, "old-session", r["resumed_session_id"])
}

func TestStartCancelledContextIsAnInterrupt(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command("hang-silent")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	run, err := harness.Start(ctx, harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env,
		Prompt: "x", Budgets: ptr(small())}, harness.Options{OnLine: func(l []byte) { out.Write(l) }})
	require.NoError(t, err)
	res, err := run.Wait()
	require.ErrorIs(t, err, harness.ErrInterrupted)
	require.Equal(t, event.ResultCancelled, res.Status)
	adaptertest.CheckStream(t, out.Bytes())
	require.Contains(t, out.String(), `"code":"interrupted"`)
}

// BenchmarkRunPrintLines is the wrap-overhead workload of make bench,
// in-process: a fake agent prints 10k Claude-like lines through Start.
func BenchmarkRunPrintLines(b *testing.B) {
	argv, env := fakeagent.Command("print-lines", "10000")
	for b.Loop() {
		run, err := harness.Start(context.Background(), harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env,
			Prompt: "x", Budgets: ptr(harness.DefaultBudgets())},
			harness.Options{OnLine: func([]byte) {}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := run.Wait(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFlushBeforeWaitingForOutput holds Options.Flush to its contract: an
// event reaches a buffering writer's output before the harness waits for
// more, so nothing sits in a buffer while the agent is silent.
func TestFlushBeforeWaitingForOutput(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command("hang-after-output")
	var mu sync.Mutex
	var pending, visible bytes.Buffer
	run, err := harness.Start(context.Background(), harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env,
		Prompt: "x", Budgets: &harness.Budgets{Hard: 20 * time.Second, KillGrace: time.Second}},
		harness.Options{
			OnLine: func(l []byte) { mu.Lock(); pending.Write(l); mu.Unlock() },
			Flush:  func() { mu.Lock(); visible.Write(pending.Bytes()); pending.Reset(); mu.Unlock() },
		})
	require.NoError(t, err)
	deadline := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		seen := bytes.Contains(visible.Bytes(), []byte(`"type":"message"`))
		mu.Unlock()
		if seen {
			break
		}
		require.True(t, time.Now().Before(deadline), "the agent's message was never flushed while it hung")
		time.Sleep(10 * time.Millisecond) // polling for a condition, not waiting for time
	}
	run.Interrupt()
	_, err = run.Wait()
	require.ErrorIs(t, err, harness.ErrInterrupted)
	mu.Lock()
	defer mu.Unlock()
	require.Zero(t, pending.Len(), "the end of the run is flushed too")
	adaptertest.CheckStream(t, visible.Bytes())
}

func ptr[T any](v T) *T { return &v }

// TestLibraryLeavesMockOut: a program importing only the library does not
// link the scripted model server (it is the CLI's, in mockmodel).
func TestLibraryLeavesMockOut(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "github.com/agentharness/harness/process")
	require.NotContains(t, string(out), "github.com/agentharness/harness/mockmodel")
}

// TestSettingsStart: Settings.Start is the one assembly of a configured
// run: the configuration's agent, env and budgets fill what the task
// leaves unset, harness's secrets never reach the agent, the session log
// is written (with the configured values redacted) and every observer is
// closed once with the result.
func TestSettingsStart(t *testing.T) {
	argv, env := fakeagent.Command("echo-env")
	cfg := config.Defaults()
	cfg.Agent = "claude-code" // an alias: the library resolves it
	cfg.Linger, cfg.KillGrace = config.Duration(100*time.Millisecond), config.Duration(100*time.Millisecond)
	cfg.Agents = map[string]config.AgentConfig{"claude": {Env: map[string]string{
		fakeagent.EchoVars: "CFG_VAR,HARNESS_MCP_TOKEN", "CFG_VAR": "from-config-4d2f",
	}}}
	logDir := t.TempDir()
	s := &harness.Settings{Config: &cfg, Environ: append(env, "HARNESS_MCP_TOKEN=secret-0123456789"), LogDir: logDir}
	require.Equal(t, 100*time.Millisecond, s.Budgets().Linger)

	var text strings.Builder
	var closed []*event.Result
	run, err := s.Start(context.Background(), harness.Task{Prompt: "x", Binary: argv[0], Cwd: t.TempDir()}, harness.Options{
		OnEvent: func(ev event.Event) {
			if m, ok := ev.Body.(*event.Message); ok {
				text.WriteString(m.Text)
			}
		},
		Observers: []harness.Observer{{Close: func(res *event.Result) { closed = append(closed, res) }}},
	})
	require.NoError(t, err)
	res, err := run.Wait()
	require.NoError(t, err)
	require.Equal(t, event.ResultSuccess, res.Status)
	require.Contains(t, text.String(), "CFG_VAR=from-config-4d2f")
	require.Contains(t, text.String(), "HARNESS_MCP_TOKEN unset")
	require.Equal(t, []*event.Result{res}, closed)

	path, err := run.SessionLog()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(path, logDir+string(filepath.Separator)), "the log is in LogDir: %s", path)
	log, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(log), `"type":"result"`)
	require.NotContains(t, string(log), "from-config-4d2f", "config env values are redacted")
}

// TestSettingsStartBadTask: a task that cannot run is a *TaskError, and
// the observers are still closed (with nil), so what they hold is freed.
func TestSettingsStartBadTask(t *testing.T) {
	closed := 0
	_, err := (&harness.Settings{}).Start(context.Background(), harness.Task{Agent: "nope", Prompt: "x"},
		harness.Options{Observers: []harness.Observer{{Close: func(res *event.Result) {
			require.Nil(t, res)
			closed++
		}}}})
	var te *harness.TaskError
	require.ErrorAs(t, err, &te)
	require.Equal(t, 1, closed)
}

// TestSessionLogLive: the session log buffers event lines but has them on
// the disk whenever the harness waits for the agent, as its own output:
// a reader of the log (serve, sessions show) follows a live run.
func TestSessionLogLive(t *testing.T) {
	argv, env := fakeagent.Command("hang-after-output")
	cfg := config.Defaults()
	s := &harness.Settings{Config: &cfg, Environ: env, LogDir: t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var run *harness.Run
	started := make(chan struct{})
	var seen, onDisk bool
	watch := harness.Observer{
		OnLine: func(line []byte) { seen = seen || strings.Contains(string(line), "still thinking") },
		Flush: func() {
			if !seen || onDisk {
				return
			}
			<-started
			path, _ := run.SessionLog()
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			onDisk = strings.Contains(string(data), "still thinking")
			cancel()
		},
	}
	run, err := s.Start(ctx, harness.Task{Agent: "claude", Prompt: "x", Binary: argv[0], Cwd: t.TempDir()},
		harness.Options{Observers: []harness.Observer{watch}})
	require.NoError(t, err)
	close(started)
	_, _ = run.Wait()
	require.True(t, seen)
	require.True(t, onDisk, "the event was not in the log when the harness waited for the agent")
}

// TestLogHasNoPartOfASecret: a secret handed to the agent (--env) that
// the agent prints where the stream cuts (an unparsed line's preview, a
// tool output's cap) leaves no part of itself in the session log: the
// cut left its first 38 of 40 bytes, which the log's redactor, knowing
// the value whole, did not see.
func TestLogHasNoPartOfASecret(t *testing.T) {
	t.Parallel()
	const secret = "Zk7Qp2Lm9Xv4Rt8Wn3Bc6Hy1Jd5Fg0Ks2Ma7Ne4P"
	argv, env := fakeagent.Command("secret-cut")
	cfg := config.Defaults()
	s := &harness.Settings{Config: &cfg, Environ: env, LogDir: t.TempDir()}
	run, err := s.Start(context.Background(), harness.Task{Agent: "claude", Prompt: "x", Binary: argv[0], Cwd: t.TempDir(),
		Env: []string{"FAKE_SECRET=" + secret}, Budgets: ptr(small())}, harness.Options{})
	require.NoError(t, err)
	res, err := run.Wait()
	require.NoError(t, err)
	require.Equal(t, event.ResultSuccess, res.Status)
	path, err := run.SessionLog()
	require.NoError(t, err)
	log, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(log), `"output_truncated":true`, "the output was cut")
	require.Contains(t, string(log), `"code":"unparsed_line"`, "the line was cut")
	require.False(t, strings.Contains(string(log), secret[:4]), "no part of the secret is left in the log")
}
