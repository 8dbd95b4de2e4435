package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mockmodel"
	"github.com/agentharness/harness/serve"
)

// chromium is Debian's chromium, which the Makefile installs.
const chromium = "/usr/bin/chromium"

// browser starts a headless Chromium with a fresh profile and returns a
// context driving one tab of it.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := exec.LookPath(chromium); err != nil {
		t.Fatalf("%s is not installed: 'make test' installs it (apt-get install chromium)", chromium)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1280, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelC := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelC(); cancelB(); cancelA() })
	require.NoError(t, chromedp.Do(ctx)) // start the browser now
	return ctx
}

// artifacts is where screenshots go: $HARNESS_ARTIFACTS, else a temp dir
// that outlives the test, printed.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("HARNESS_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "harness-serve-screens")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	t.Logf("screenshots in %s", dir)
	return dir
}

func screenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, png, 0o644))
}

// TestBrowserLiveRun opens a run's page while the run works: the message
// and the open tool call show, then, as it ends, the tool's end and the
// result. Then a bench report's charts, one series per agent.
func TestBrowserLiveRun(t *testing.T) {
	f := newFixture(t, "serve-gated")
	ctx := browser(t)
	dir := artifacts(t)
	run := f.start(t)

	do(t, ctx,
		chromedp.Navigate(f.http.URL+"/runs/"+run),
		chromedp.WaitVisible(chromedp.CSS(`.tool-row[data-status="running"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.msg.assistant`)))
	require.Contains(t, text(t, ctx, `#conversation`), "Let me look at the tree first.")
	require.Equal(t, "running", text(t, ctx, `#status`))
	// Reasoning is there, folded.
	require.Equal(t, "The user wants a listing.", eval[string](t, ctx, `document.querySelector("details.reasoning pre").textContent`))
	require.False(t, eval[bool](t, ctx, `document.querySelector("details.reasoning").open`))
	require.Zero(t, eval[int](t, ctx, `document.querySelectorAll("#result").length`), "no result while the run works")
	screenshot(t, ctx, filepath.Join(dir, "run-live.png"))

	f.openGate(t)
	do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#result`)), chromedp.WaitVisible(chromedp.CSS(`.tool-row[data-status="ok"]`)))
	poll(t, ctx, `document.body.dataset.stream === "ended"`)
	resText := text(t, ctx, `#result`)
	require.Contains(t, resText, "success")
	require.Contains(t, resText, "The tree is empty. Done.")
	require.Contains(t, text(t, ctx, `.tool-row .st`), "ok")
	require.Contains(t, text(t, ctx, `#conversation`), "The tree is empty. Done.")
	screenshot(t, ctx, filepath.Join(dir, "run-done.png"))

	// The run list shows it.
	do(t, ctx, chromedp.Navigate(f.http.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#runs tbody tr[data-run="`+run+`"]`)))
	require.Equal(t, 1, eval[int](t, ctx, `document.querySelectorAll("#runs tbody tr").length`))
	screenshot(t, ctx, filepath.Join(dir, "runs.png"))

	// /runs/latest is the newest run, by its id.
	do(t, ctx, chromedp.Navigate(f.http.URL+"/runs/latest"))
	poll(t, ctx, `location.pathname === "/runs/`+run+`" && document.body.dataset.stream === "ended"`)
	require.Contains(t, text(t, ctx, `#result`), "The tree is empty. Done.")

	// An unknown run says so, and does not retry.
	do(t, ctx, chromedp.Navigate(f.http.URL+"/runs/run_nope"))
	// The stream's refusal and the run's own 404 text arrive separately.
	poll(t, ctx, `document.body.dataset.stream === "failed" && document.querySelector("main").textContent.includes("no such run")`)

	writeReport(t, f.bench, "b1")
	do(t, ctx, chromedp.Navigate(f.http.URL+"/bench/b1"))
	poll(t, ctx, `document.body.dataset.charts === "ready"`)
	series := eval[map[string]int](t, ctx, `Object.fromEntries(Object.entries(window.harnessCharts).map(([k, c]) => [k, c.data.datasets.length]))`)
	require.Equal(t, map[string]int{"pass": 2, "wall": 2, "cost": 2, "firstTool": 2, "tasks": 2}, series, "one series per agent")
	require.Equal(t, []string{"claude", "codex"}, eval[[]string](t, ctx, `window.harnessCharts.wall.data.datasets.map(d => d.label)`))
	screenshot(t, ctx, filepath.Join(dir, "bench.png"))
	points := `window.harnessCharts.wall.data.datasets.map(d => d.data.length)`
	want := eval[[]int](t, ctx, points)

	// A run that never started (docs/bench.md, "Not run") is no point of
	// the charts: it has no wall time, only a zero.
	writeReportWith(t, f.bench, "b2", map[string]any{"index": 7, "task": "fix-test", "agent": "claude", "repeat": 4,
		"status": "error", "reason": "not_installed", "wall_ms": 0})
	do(t, ctx, chromedp.Navigate(f.http.URL+"/bench/b2"))
	poll(t, ctx, `document.body.dataset.charts === "ready"`)
	require.Equal(t, want, eval[[]int](t, ctx, points))
}

// writeReportWith writes the test report with one more run, as id.
func writeReportWith(t *testing.T, dir, id string, run map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "report.json"))
	require.NoError(t, err)
	var rep map[string]any
	require.NoError(t, json.Unmarshal(b, &rep))
	rep["runs"] = append(rep["runs"].([]any), run)
	b, err = json.Marshal(rep)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, id+".json"), b, 0o600))
}

// TestBrowserRealCLI: one run of a real agent CLI (Claude Code) against
// the scripted model, started from the page's form, watched to its end.
func TestBrowserRealCLI(t *testing.T) {
	bin := agentBin(t, "claude")
	root := t.TempDir()
	token := "browser-token-0123456789abcdef"
	srv := serve.New(serve.Config{Dir: filepath.Join(root, "sessions"), Token: token, Open: true,
		Launcher: serve.Launcher{Settings: &harness.Settings{SearchDirs: []string{bin}, LogDir: filepath.Join(root, "sessions")},
			AttachMock: attachMock}})
	hs := newHTTP(t, srv)
	ctx := browser(t)
	dir := artifacts(t)
	work := t.TempDir()

	do(t, ctx,
		chromedp.Navigate(hs+"/"),
		chromedp.WaitVisible(chromedp.CSS(`form.newrun`)),
		chromedp.SetValue(chromedp.CSS(`#token`), token),
		chromedp.Evaluate[chromedp.Void](`localStorage.setItem("harness-token", document.getElementById("token").value)`),
		chromedp.SetValue(chromedp.CSS(`form.newrun select[name=agent]`), "claude"),
		chromedp.SetValue(chromedp.CSS(`form.newrun input[name=mock]`), "edit"),
		chromedp.SetValue(chromedp.CSS(`form.newrun input[name=cwd]`), work),
		chromedp.SetValue(chromedp.CSS(`form.newrun textarea[name=prompt]`), "Create out.txt, then report."),
		chromedp.Click(chromedp.CSS(`form.newrun button`)),
		chromedp.WaitVisible(chromedp.CSS(`.tool-row`)),
		chromedp.WaitVisible(chromedp.CSS(`#result`)))
	require.Contains(t, text(t, ctx, `#result`), "success")
	require.Contains(t, eval[[]string](t, ctx, `[...document.querySelectorAll(".tool-row .kind")].map(e => e.textContent)`), "write")
	// The file tool's diff, rendered as one: the added line marked added.
	want, err := os.ReadFile(filepath.Join(work, "out.txt"))
	require.NoError(t, err)
	require.Equal(t, "+"+strings.TrimSpace(string(want)), text(t, ctx, `.tool-row .diff .add`))
	require.Equal(t, "+++ b/out.txt", text(t, ctx, `.tool-row .diff .meta:nth-child(2)`))
	screenshot(t, ctx, filepath.Join(dir, "real-cli.png"))

	// The debug view adds the agent's own lines.
	poll(t, ctx, `document.body.dataset.stream === "ended"`)
	url := eval[string](t, ctx, `location.href`)
	do(t, ctx, chromedp.Navigate(url+"?debug=1"), chromedp.WaitVisible(chromedp.CSS(`#native`)))
	require.Contains(t, text(t, ctx, `#native`), `"type":"system"`)
	screenshot(t, ctx, filepath.Join(dir, "real-cli-debug.png"))
	require.Zero(t, eval[int](t, ctx, `document.querySelectorAll("#cancel").length`), "no cancel button on a finished run")
}

// agentBin is the directory of the real agent CLIs (make agents), which
// holds agent.
func agentBin(t *testing.T, agent string) string {
	t.Helper()
	agents := os.Getenv("HARNESS_AGENTS_DIR")
	if agents == "" {
		agents, _ = filepath.Abs("../.agents")
	}
	bin := filepath.Join(agents, "node_modules", ".bin")
	if _, err := os.Stat(filepath.Join(bin, agent)); err != nil {
		t.Fatalf("the real agent CLIs are not installed in %s: run 'make agents' (make test does) or set HARNESS_AGENTS_DIR", agents)
	}
	return bin
}

// TestSessionRealAgent: a real agent CLI (Gemini CLI over ACP) in a live
// session opened through the API, against the scripted model's converse
// scenario: two messages, two successful turns of one process, the second
// answered in the first one's context, both files written, then the end:
// success, event.Check holds, no process left.
func TestSessionRealAgent(t *testing.T) {
	bin := agentBin(t, "gemini")
	root := t.TempDir()
	f := &fixture{dir: filepath.Join(root, "sessions")}
	token := "session-token-0123456789abcdef"
	f.srv = serve.New(serve.Config{Dir: f.dir, Token: token, Open: true,
		Launcher: serve.Launcher{Settings: &harness.Settings{SearchDirs: []string{bin}, LogDir: f.dir}, AttachMock: attachMock}})
	f.api = harnesstest.ServeAPI{URL: newHTTP(t, f.srv), Token: token}
	work := t.TempDir()
	run := f.api.Start(t, `{"agent":"gemini","session":true,"mock":"converse","cwd":`+strconv.Quote(work)+
		`,"prompt":`+strconv.Quote(mockmodel.ConversePrompt1)+`,"budgets":{"idle":"60s","hard":"3m","linger":"2s","kill_grace":"2s"}}`).Run
	base := "/api/runs/" + run
	ends := 0
	out := f.follow(t, run, func(ev map[string]any) {
		if ev["type"] != "turn_end" {
			return
		}
		path, body := "/end", ""
		if ends++; ends == 1 {
			path, body = "/messages", `{"text":`+strconv.Quote(mockmodel.ConversePrompt2)+`}`
		}
		st, b := f.post(t, base+path, body)
		require.Equal(t, http.StatusAccepted, st, b)
	})
	evs := checkSession(t, out)
	require.Equal(t, "success", ofType(evs, "result")[0]["status"], "%s", out)
	turns := ofType(evs, "turn_end")
	require.Len(t, turns, 2, "%s", out)
	for _, e := range turns {
		require.Equal(t, "success", e["status"], "%s", out)
		require.NotContains(t, e["text"], mockmodel.ContextMissing)
	}
	require.True(t, strings.HasSuffix(turns[1]["text"].(string), "second file"), "%s", out)
	for name, want := range map[string]string{mockmodel.ConverseFirst: "first\n", mockmodel.ConverseSecond: "second\n"} {
		b, err := os.ReadFile(filepath.Join(work, name))
		require.NoError(t, err)
		require.Equal(t, want, string(b))
	}
}

func newHTTP(t *testing.T, srv *serve.Server) string {
	t.Helper()
	hs := httptestServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return strings.TrimSuffix(hs.URL, "/")
}

func httptestServer(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, steps...))
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(t, err)
	return s
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err)
	return v
}

func poll(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr))
	require.NoError(t, err, "waiting for %s", expr)
}

// attachMock points t at a scripted model playing scenario, as the harness
// command does for --mock.
func attachMock(t *harness.Task, scenario string) (func(), error) {
	m, err := mockmodel.StartMock(scenario, "")
	if err != nil {
		return nil, err
	}
	a, err := harness.Lookup(t.Agent)
	if err == nil {
		t.Model, t.SetupEnv, err = m.Point(a.Info.ID, t.Cwd, a.Mock)
	}
	if err != nil {
		m.Close()
		return nil, err
	}
	return func() { m.Close() }, nil
}

// TestBrowserSession drives a live session from its run page: a prompt
// typed and sent, its slow turn interrupted (the turn ends cancelled),
// a second prompt whose permission request is allowed from the page and
// whose answer shows, then End: the result, and no controls left.
func TestBrowserSession(t *testing.T) {
	f := newSessionFixture(t, "slow-then-normal")
	ctx := browser(t)
	dir := artifacts(t)
	work := t.TempDir()

	// Opened from the list's form (the fake is an agent of the
	// configuration, not one of the form's).
	do(t, ctx,
		chromedp.Navigate(f.http.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`form.newrun`)),
		chromedp.Evaluate[chromedp.Void](`localStorage.setItem("harness-token", `+strconv.Quote(f.api.Token)+`);
			document.querySelector("form.newrun select[name=agent]").append(new Option("fake-acp", "fake-acp"))`),
		chromedp.SetValue(chromedp.CSS(`form.newrun select[name=agent]`), "fake-acp"),
		chromedp.SetValue(chromedp.CSS(`form.newrun select[name=permissions]`), "ask"),
		chromedp.SetValue(chromedp.CSS(`form.newrun input[name=cwd]`), work),
		chromedp.Click(chromedp.CSS(`form.newrun input[name=session]`)),
		chromedp.Click(chromedp.CSS(`form.newrun button`)),
		chromedp.WaitVisible(chromedp.CSS(`#session`)))
	run := strings.TrimPrefix(eval[string](t, ctx, `location.pathname`), "/runs/")
	do(t, ctx,
		chromedp.SendKeys(chromedp.CSS(`#prompt-box`), "take your time"),
		chromedp.Click(chromedp.CSS(`#send`)),
		chromedp.WaitVisible(chromedp.CSS(`.tool-row[data-status="running"]`)))
	require.Contains(t, text(t, ctx, `.msg.turn[data-turn="turn_1"]`), "take your time")
	require.Empty(t, eval[string](t, ctx, `document.getElementById("prompt-box").value`), "sent: the box is empty")
	screenshot(t, ctx, filepath.Join(dir, "session-slow.png"))
	do(t, ctx,
		chromedp.Click(chromedp.CSS(`#interrupt`)),
		chromedp.WaitVisible(chromedp.CSS(`.turn-end[data-turn="turn_1"][data-status="cancelled"]`)))

	do(t, ctx,
		chromedp.SendKeys(chromedp.CSS(`#prompt-box`), "write the file"),
		chromedp.Click(chromedp.CSS(`#send`)),
		chromedp.WaitVisible(chromedp.CSS(`.permission button.allow`)))
	screenshot(t, ctx, filepath.Join(dir, "session-ask.png"))
	do(t, ctx,
		chromedp.Click(chromedp.CSS(`.permission button.allow`)),
		chromedp.WaitVisible(chromedp.CSS(`.turn-end[data-turn="turn_2"][data-status="success"]`)))
	require.Equal(t, "allowed", eval[string](t, ctx, `document.querySelector(".permission").dataset.answer`))
	conv := text(t, ctx, `#conversation`)
	require.Contains(t, conv, "Writing the file.")
	require.Contains(t, conv, "Done.")
	require.FileExists(t, filepath.Join(work, fakeagent.TurnFile(2)))
	screenshot(t, ctx, filepath.Join(dir, "session-turn.png"))

	do(t, ctx, chromedp.Click(chromedp.CSS(`#end`)), chromedp.WaitVisible(chromedp.CSS(`#result`)))
	poll(t, ctx, `document.body.dataset.stream === "ended"`)
	require.Contains(t, text(t, ctx, `#result`), "success")
	require.Zero(t, eval[int](t, ctx, `document.querySelectorAll("#session, .permission button").length`), "no session controls once it ended")
	checkSession(t, []byte(f.logOf(t, run)))
	screenshot(t, ctx, filepath.Join(dir, "session-ended.png"))
}
