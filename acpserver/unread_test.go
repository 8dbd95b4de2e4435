package acpserver

import (
	"context"
	"io"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/process"
)

func init() { fakeagent.Register("escapee-talks", escapeeTalks) }

// escapee-talks: a Claude Code CLI that starts a sleeper in a session of
// its own (deaf to SIGTERM), says so (a fake_child line), then says a
// word (a session/update for the client) and hangs.
func escapeeTalks([]string) int {
	fakeagent.Line(`{"type":"system","subtype":"init","cwd":"/tmp","session_id":"s1","tools":[],"model":"fake-model"}`)
	argv, env := fakeagent.Command("sleeper", "ignore-term")
	c := exec.Command(argv[0], argv[1:]...)
	c.Env = env
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		return 3
	}
	fakeagent.Line(`{"type":"system","subtype":"fake_child","pid":` + strconv.Itoa(c.Process.Pid) + `}`)
	fakeagent.Line(`{"type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"working"}]},"session_id":"s1"}`)
	for {
		time.Sleep(time.Hour)
	}
}

// gatedWriter is the stdout of a client that stops reading for a while:
// while closed, every Write waits (waiting is closed at the first that
// does) until the gate opens again.
type gatedWriter struct {
	w       io.Writer
	mu      sync.Mutex
	open    chan struct{} // closed while the client reads
	waiting chan struct{}
	once    sync.Once
}

func newGatedWriter(w io.Writer) *gatedWriter {
	g := &gatedWriter{w: w, open: make(chan struct{}), waiting: make(chan struct{})}
	close(g.open)
	return g
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	select {
	case <-open:
	default:
		g.once.Do(func() { close(g.waiting) })
		<-open
	}
	return g.w.Write(p)
}

func (g *gatedWriter) stop() {
	g.mu.Lock()
	g.open = make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedWriter) resume() {
	g.mu.Lock()
	close(g.open)
	g.mu.Unlock()
}

// TestACPServerHardBudgetWhileClientReadsNothing: a client that keeps
// its input open and stops reading the output holds the prompt's
// session/updates (the run's OnEvent waits on the write), never the
// run's budget: its hard timeout ends the agent and what it started in
// a session of its own on time. Once the client reads again, the prompt
// is answered (the run timed out: refusal) and the next prompt runs.
func TestACPServerHardBudgetWhileClientReadsNothing(t *testing.T) {
	argv, env := fakeagent.Command("escapee-talks")
	var children harnesstest.Children
	runs := make(chan *harness.Run, 2)
	start := func(ctx context.Context, task harness.Task, o harness.Options) (*harness.Run, error) {
		o.Observers = append(o.Observers, harness.Observer{OnNative: func(_ string, line []byte) { children.Note(line) }})
		r, err := harness.Start(ctx, task, o)
		if err == nil {
			runs <- r
		}
		return r, err
	}
	task := func(cwd, prompt string) harness.Task {
		b := harness.DefaultBudgets()
		b.Hard, b.Linger, b.KillGrace = 500*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
		return harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env, Cwd: cwd, Prompt: prompt, Budgets: &b}
	}
	// After ServeACP's own cleanup (Serve returned at the end of its
	// input): nothing of the server is left.
	t.Cleanup(func() {
		require.Eventually(t, func() bool { return serverGoroutines() == "" }, 10*time.Second, 5*time.Millisecond,
			"goroutines of the server are left: %s", serverGoroutines())
	})
	var gate *gatedWriter
	conn, _, sid, _ := harnesstest.ServeACP(t, func(in io.Reader, out io.Writer) {
		gate = newGatedWriter(out)
		Serve(context.Background(), in, gate, Options{Start: start, Task: task, Version: "test"})
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	gate.stop()
	type answer struct {
		resp acpsdk.PromptResponse
		err  error
	}
	first := make(chan answer, 1)
	go func() {
		resp, err := conn.Prompt(ctx, harnesstest.Prompt(sid, "one"))
		first <- answer{resp, err}
	}()
	<-gate.waiting // the run's first update waits for a reader
	r := <-runs
	// The run is over by its budget, though its events wait: Wait
	// returns only once they are delivered, so the processes are asked.
	deadline := time.Now().Add(20 * time.Second)
	for len(children.PIDs()) == 0 || process.Alive(children.PIDs()[0]) {
		require.True(t, time.Now().Before(deadline), "the run's processes outlived its hard budget while the client read nothing")
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case a := <-first:
		t.Fatalf("the prompt was answered with its output unread: %+v %v", a.resp, a.err)
	default:
	}

	gate.resume()
	a := <-first
	require.NoError(t, a.err)
	require.Equal(t, acpsdk.StopReason("refusal"), a.resp.StopReason)
	meta, _ := a.resp.Meta["harness"].(map[string]any)
	require.Equal(t, string(event.ResultTimeout), meta["status"])
	res, err := r.Wait()
	require.Error(t, err)
	require.Equal(t, event.ResultTimeout, res.Status)

	// The connection goes on: the next prompt runs, and is timed out too.
	resp, err := conn.Prompt(ctx, harnesstest.Prompt(sid, "two"))
	require.NoError(t, err)
	require.Equal(t, acpsdk.StopReason("refusal"), resp.StopReason)
	children.RequireGone(t)
	require.NotEmpty(t, serverGoroutines(), "the server's goroutines are seen")
}

// serverGoroutines are the stacks of the goroutines running code of
// acpserver's own files (not its tests'), "" when there are none.
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

// ownFrame matches a frame of a file of acpserver, and names the file.
var ownFrame = regexp.MustCompile(`/acpserver/([a-z_]+)\.go:`)
