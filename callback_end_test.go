package harness_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/logger"
)

func init() {
	fakeagent.Register("panicking-session-end", panickingSessionEnd)
	fakeagent.Register("panicking-parse-cost", panickingParseCost)
}

// panicking-session-end: a program with a run of setsid-escapee (whose
// escapee's pid it prints) and a live session whose OnEvent panics at
// the result. It never waits for the session: Stop ends it, and the
// session's own goroutine emits its last events.
func panickingSessionEnd([]string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "panicking-session-end:", err); return 1 }
	dir, err := os.MkdirTemp("", "panicking-session-end")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	argv, env := fakeagent.Command("setsid-escapee")
	escapee := make(chan int64, 1)
	if _, err := harness.Start(context.Background(), harness.Task{
		Agent: "claude", Binary: argv[0], BaseEnv: env, Raw: true, Prompt: "do it", Cwd: dir,
	}, harness.Options{OnEvent: func(ev event.Event) {
		if n, ok := ev.Body.(*event.Native); ok && gjson.GetBytes(n.Line, "subtype").String() == "fake_child" {
			escapee <- gjson.GetBytes(n.Line, "pid").Int()
		}
	}}); err != nil {
		return fail(err)
	}
	fmt.Println(<-escapee)
	argv, env = fakeagent.Command(fakeagent.ClaudeStream)
	b := harness.Budgets{Idle: time.Minute, Hard: time.Minute, Linger: 10 * time.Second, KillGrace: 100 * time.Millisecond}
	var st harness.Settings
	s, err := st.StartSession(context.Background(), harness.Task{Agent: "claude", Protocol: harness.ProtocolStreamJSON,
		Binary: argv[0], BaseEnv: env, Cwd: dir, Budgets: &b},
		harness.SessionOptions{Options: harness.Options{OnEvent: func(ev event.Event) {
			if ev.Type == event.TypeResult {
				panic("a bug in OnEvent at the session's end")
			}
		}}})
	if err != nil {
		return fail(err)
	}
	s.Stop()
	time.Sleep(time.Minute) // the panic ends the program first
	return 3
}

// TestPanicAtSessionEndEndsTheRuns: a callback that panics at the end of
// a live session, on the session's own goroutine, takes the program down
// only once every run is killed: the escapee of another run goes first.
func TestPanicAtSessionEndEndsTheRuns(t *testing.T) {
	t.Parallel()
	harnesstest.RequirePanicEndsRuns(t, "panicking-session-end", "panic: a bug in OnEvent at the session's end",
		"another run's escapee outlived the program's panic")
}

// usageLines are Claude Code lines: an init naming the model, then two
// messages that report usage without a cost.
const usageLines = `{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5"}
{"type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":10,"output_tokens":5}},"session_id":"s1"}
{"type":"assistant","message":{"id":"msg_2","role":"assistant","content":[{"type":"text","text":"again"}],"usage":{"input_tokens":20,"output_tokens":5}},"session_id":"s1"}
`

// panicking-parse-cost: Parse whose EstimateCost panics, recovered by
// the caller: it prints what it recovered and exits 0.
func panickingParseCost([]string) (code int) {
	defer func() {
		fmt.Println("recovered:", recover())
	}()
	_, _ = harness.Parse(context.Background(), strings.NewReader(usageLines), "claude", func(event.Event) {},
		harness.ParseOptions{EstimateCost: func(string, event.Usage) (float64, bool) { panic("a bug in EstimateCost") }})
	return 4
}

// TestParseEstimateCostPanicIsTheCallers: EstimateCost runs on Parse's
// caller's goroutine, whose recover catches what it panics with (on
// Normalize's reading goroutine it killed the program).
func TestParseEstimateCostPanicIsTheCallers(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command("panicking-parse-cost")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.Bytes())
	require.Equal(t, "recovered: a bug in EstimateCost\n", string(out))
}

// TestParsePricesInOrder: usage is priced for the model of the lines
// before it, the session_start's, as it was on the reading goroutine.
func TestParsePricesInOrder(t *testing.T) {
	t.Parallel()
	var models []string
	var costs []float64
	res, err := harness.Parse(context.Background(), strings.NewReader(usageLines), "claude", func(ev event.Event) {
		if u, ok := ev.Body.(*event.Usage); ok {
			costs = append(costs, u.CostUSD)
		}
	}, harness.ParseOptions{Model: "given", EstimateCost: func(model string, u event.Usage) (float64, bool) {
		models = append(models, model)
		return float64(u.InputTokens), true
	}})
	require.NoError(t, err)
	require.Equal(t, []string{"claude-sonnet-4-5", "claude-sonnet-4-5"}, models)
	require.Equal(t, []float64{10, 20}, costs)
	require.NotNil(t, res.CostUSD)
	require.InDelta(t, 30, *res.CostUSD, 0.001)
}

// TestWaitAfterCallbackPanic: an OnEvent that panics at the result, on
// the caller's goroutine in Wait and recovered there, does not leave the
// run half ended: a later Wait returns the result with ErrCallbackPanic,
// and the session log is closed with the run's status.
func TestWaitAfterCallbackPanic(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command("print-lines", "3")
	logs := t.TempDir()
	st := harness.Settings{LogDir: logs}
	b := small()
	run, err := st.Start(context.Background(), harness.Task{Agent: "claude", Prompt: "x", Binary: argv[0], BaseEnv: env,
		Cwd: t.TempDir(), Budgets: &b}, harness.Options{OnEvent: func(ev event.Event) {
		if ev.Type == event.TypeResult {
			panic("a bug in OnEvent")
		}
	}})
	require.NoError(t, err)
	require.PanicsWithValue(t, "a bug in OnEvent", func() { _, _ = run.Wait() })
	res, err := run.Wait()
	require.ErrorIs(t, err, harness.ErrCallbackPanic)
	require.NotNil(t, res)
	require.Equal(t, event.ResultSuccess, res.Status)
	meta, lerr := logger.Load(logs, run.RunID())
	require.NoError(t, lerr)
	require.Equal(t, event.ResultSuccess, meta.Status, "the log's meta is the run's end, not running")
	require.Empty(t, openUnder(t, logs), "the log's files are closed")
}

// TestSessionCloseAfterCallbackPanic: a Flush that panics in Close (as
// it reports the session's end), recovered by the caller, leaves the
// session neither locked nor its agent waiting for its stdin's end: the
// session ends, and its log is closed.
func TestSessionCloseAfterCallbackPanic(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command(fakeagent.ClaudeStream)
	logs := t.TempDir()
	st := harness.Settings{LogDir: logs}
	b := small()
	b.Hard, b.Linger = time.Minute, 10*time.Second // neither ends it: the agent exits at its stdin's end
	turnEnded := make(chan struct{}, 1)
	var closing atomic.Bool
	caller := goroutine()
	s, err := st.StartSession(context.Background(), harness.Task{Agent: "claude", Protocol: harness.ProtocolStreamJSON,
		Binary: argv[0], BaseEnv: env, Cwd: t.TempDir(), Budgets: &b},
		harness.SessionOptions{Options: harness.Options{
			OnEvent: func(ev event.Event) {
				if ev.Type == event.TypeTurnEnd {
					turnEnded <- struct{}{}
				}
			},
			Flush: func() {
				// Only on this goroutine, in Close: on one of harness's,
				// the panic would end the test binary.
				if goroutine() == caller && closing.CompareAndSwap(true, false) {
					panic("a bug in Flush")
				}
			},
		}})
	require.NoError(t, err)
	require.NoError(t, s.Send("one"))
	<-turnEnded
	closing.Store(true)
	require.PanicsWithValue(t, "a bug in Flush", func() { _, _ = s.Close() })
	type waited struct {
		res *event.Result
		err error
	}
	done := make(chan waited, 1)
	go func() {
		res, err := s.Wait()
		done <- waited{res, err}
	}()
	select {
	case w := <-done:
		require.NotNil(t, w.res)
	case <-time.After(20 * time.Second): // only a hang's bound: the session ends at once
		t.Fatal("the session did not end after a callback panicked in Close")
	}
	require.ErrorIs(t, s.Send("two"), harness.ErrSessionOver)
	meta, lerr := logger.Load(logs, s.RunID())
	require.NoError(t, lerr)
	require.NotEqual(t, logger.StatusRunning, meta.Status)
	require.Empty(t, openUnder(t, logs), "the log's files are closed")
}

// goroutine returns the id of the calling goroutine.
func goroutine() string {
	b := make([]byte, 64)
	return string(bytes.Fields(b[:runtime.Stack(b, false)])[1])
}

// openUnder returns the files under dir this process holds open.
func openUnder(t *testing.T, dir string) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	var open []string
	for _, fd := range fds {
		if p, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(p, dir+"/") {
			open = append(open, p)
		}
	}
	return open
}

// TestPrivateTmpGoesWithoutWait: the agent's private temporary
// directory and its lock go when the run is over, also when nobody calls
// Wait.
func TestPrivateTmpGoesWithoutWait(t *testing.T) {
	t.Parallel()
	require.NoError(t, registerLitterer())
	exe, base := fakeagent.Command("litter-tmp")
	parent := t.TempDir()
	run, err := harness.Start(context.Background(), harness.Task{Agent: "litterer", Prompt: "x", Binary: exe[0],
		Cwd: t.TempDir(), BaseEnv: append(base, "TMPDIR="+parent)}, harness.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = run.Wait() })
	require.Eventually(t, func() bool {
		entries, err := os.ReadDir(parent)
		return err == nil && len(entries) == 0
	}, 10*time.Second, 5*time.Millisecond, "the run's temporary directory outlived the run")
	require.Empty(t, openUnder(t, parent), "its lock is let go")
}

// TestStartRefusesWhatFrontDoorsRefuse: a blank prompt, a negative
// budget, a negative turn timeout or ask deadline are task errors, as
// every front door has them, and nothing starts.
func TestStartRefusesWhatFrontDoorsRefuse(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command("print-lines", "1")
	task := func(prompt string, b harness.Budgets) harness.Task {
		return harness.Task{Agent: "claude", Prompt: prompt, Binary: argv[0], BaseEnv: env, Cwd: t.TempDir(), Budgets: &b}
	}
	var closed atomic.Int32
	o := harness.Options{
		OnEvent:   func(event.Event) { t.Error("an event of a task refused") },
		Observers: []harness.Observer{{Close: func(res *event.Result) { require.Nil(t, res); closed.Add(1) }}},
	}
	var st harness.Settings
	var te *harness.TaskError
	for _, prompt := range []string{"", " \n\t"} {
		_, err := harness.Start(context.Background(), task(prompt, small()), o)
		require.ErrorAs(t, err, &te)
		require.ErrorIs(t, err, harness.ErrBlankPrompt)
		_, err = st.Start(context.Background(), task(prompt, small()), o)
		require.ErrorAs(t, err, &te)
		require.ErrorIs(t, err, harness.ErrBlankPrompt)
	}
	for name, set := range map[string]func(*harness.Budgets){
		"idle":         func(b *harness.Budgets) { b.Idle = -time.Second },
		"idle_warning": func(b *harness.Budgets) { b.IdleWarning = -time.Second },
		"hard":         func(b *harness.Budgets) { b.Hard = -time.Second },
		"linger":       func(b *harness.Budgets) { b.Linger = -time.Second },
		"kill_grace":   func(b *harness.Budgets) { b.KillGrace = -time.Second },
		"setup":        func(b *harness.Budgets) { b.Setup = -time.Second },
		// Negative for one kind only: asked of every kind at the start.
		"tool": func(b *harness.Budgets) {
			b.Tool = func(k event.Kind) time.Duration { return map[event.Kind]time.Duration{event.KindMCP: -time.Second}[k] }
		},
	} {
		b := small()
		set(&b)
		_, err := harness.Start(context.Background(), task("x", b), o)
		require.ErrorAs(t, err, &te, name)
		var be *harness.BudgetError
		require.ErrorAs(t, err, &be, name)
		require.Equal(t, name, be.Budget)
		require.Equal(t, name+" -1s: a budget cannot be negative (0 turns it off)", err.Error())
	}
	sargv, senv := fakeagent.Command(fakeagent.ClaudeStream)
	b := small()
	live := harness.Task{Agent: "claude", Protocol: harness.ProtocolStreamJSON, Binary: sargv[0], BaseEnv: senv, Cwd: t.TempDir(), Budgets: &b}
	for _, so := range []harness.SessionOptions{{TurnTimeout: -time.Second}, {AskDeadline: -time.Second}} {
		so.Options = o
		_, err := st.StartSession(context.Background(), live, so)
		require.ErrorAs(t, err, &te)
	}
	require.Equal(t, int32(4+7+2), closed.Load(), "every refusal closes the observers")
}
