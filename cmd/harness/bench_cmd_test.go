package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// The bench CLI fakes print Claude-like stream-json.
func init() {
	fakeagent.Register("bench-cli-writer", benchCLIWriter)
}

// bench-cli-writer: writes out.txt holding the name it was started by, as
// a Write tool call, then succeeds.
func benchCLIWriter([]string) int {
	fakeagent.Line(`{"type":"system","subtype":"init","session_id":"s1","model":"fake-model","pid":` + strconv.Itoa(os.Getpid()) + `}`)
	fakeagent.Line(`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"tw","name":"Write","input":{"file_path":"out.txt"}}]},"session_id":"s1"}`)
	if err := os.WriteFile("out.txt", []byte(filepath.Base(os.Args[0])), 0o644); err != nil {
		return 3
	}
	fakeagent.Line(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tw","content":"ok"}]},"session_id":"s1"}`)
	fakeagent.Line(`{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s1","num_turns":2,"total_cost_usd":0.002,"usage":{"input_tokens":100,"output_tokens":20}}`)
	return 0
}

// benchArgs are the arguments that run fake as every agent of a bench.
func benchArgs(t *testing.T, fake string, args ...string) []string {
	t.Helper()
	argv, _ := fakeagent.Command(fake)
	return append([]string{"bench", "--binary", argv[0], "--env", fakeagent.EnvVar + "=" + fake,
		"--linger", "100ms", "--kill-grace", "200ms"}, args...)
}

func benchSource(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README"), []byte("start\n"), 0o644))
	return dir
}

func TestBenchRunsAndReports(t *testing.T) {
	home := isolate(t)
	src := benchSource(t)
	eventsFile := filepath.Join(home, "all.ndjson")
	r := invoke(t, "", benchArgs(t, "bench-cli-writer", "--agents", "claude", "-p", "write out.txt", "--workdir", src,
		"--repeat", "2", "--parallel", "2", "--check", "test -f out.txt && test -f README", "--report", "json",
		"--events", eventsFile, "--progress")...)
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	var rep bench.Report
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), "stdout is the report only: %s", r.stdout)
	require.Len(t, rep.Runs, 2)
	require.Equal(t, 2, rep.Parallel)
	require.Contains(t, r.stderr, "bench: #1 claude")
	require.Contains(t, r.stderr, "success, check passed")
	require.NoFileExists(t, filepath.Join(src, "out.txt"))

	all, err := os.ReadFile(eventsFile)
	require.NoError(t, err)
	byRun := map[string][]byte{}
	for l := range bytes.Lines(all) {
		var env struct{ Run string }
		require.NoError(t, json.Unmarshal(l, &env))
		byRun[env.Run] = append(byRun[env.Run], l...)
	}
	require.Len(t, byRun, 2)
	for _, run := range rep.Runs {
		require.Equal(t, event.ResultSuccess, run.Status)
		require.True(t, run.Check.Passed, "%+v", run.Check)
		require.Equal(t, []string{"out.txt"}, run.Files.Paths)
		require.Equal(t, 1, run.ToolCalls)
		require.Equal(t, int64(100), run.Tokens.Input)
		// The figures agree with the session log, which is the very stream.
		logged, err := os.ReadFile(run.Log)
		require.NoError(t, err, "session log of %s", run.Run)
		require.Equal(t, string(byRun[run.Run]), string(logged))
		adaptertest.CheckStream(t, logged)
		evs, err := event.ReadAll(bytes.NewReader(logged))
		require.NoError(t, err)
		tools := 0
		for _, ev := range evs {
			if ev.Type == event.TypeToolStart {
				tools++
			}
		}
		require.Equal(t, run.ToolCalls, tools)
		res := evs[len(evs)-1].Body.(*event.Result)
		require.Equal(t, run.Tokens.Output, res.Usage.OutputTokens)
		require.Equal(t, *run.CostUSD, *res.CostUSD)
	}
	g := rep.Groups[0]
	require.Equal(t, 1.0, g.SuccessRate)
	require.Equal(t, 1.0, *g.PassRate)
}

func TestBenchBinaryPairs(t *testing.T) {
	home := isolate(t)
	argv, _ := fakeagent.Command("bench-cli-writer")
	bin := filepath.Join(home, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	for _, name := range []string{"fake-claude", "fake-codex"} {
		require.NoError(t, os.Symlink(argv[0], filepath.Join(bin, name)))
	}
	r := invoke(t, "", "bench", "--agents", "claude,codex", "-p", "x", "--workdir", benchSource(t), "--keep",
		"--binary", "claude="+filepath.Join(bin, "fake-claude")+",codex="+filepath.Join(bin, "fake-codex"),
		"--env", fakeagent.EnvVar+"=bench-cli-writer", "--linger", "100ms", "--kill-grace", "200ms",
		"--report", "json", "--no-log", "--parallel", "2")
	var rep bench.Report
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), "stderr: %s", r.stderr)
	require.NotEmpty(t, rep.Dir)
	defer os.RemoveAll(rep.Dir)
	for _, run := range rep.Runs {
		got, err := os.ReadFile(filepath.Join(run.Tree, "out.txt"))
		require.NoError(t, err, "%s ran in its kept tree", run.Agent)
		require.Equal(t, "fake-"+run.Agent, string(got))
	}
	// The fake speaks Claude's format, so only claude parses it as a success.
	require.Equal(t, event.ResultSuccess, rep.Runs[0].Status)
	require.Equal(t, exitAgentFailed, r.code)
}

func TestBenchCancelWritesPartialReport(t *testing.T) {
	home := isolate(t)
	eventsFile := filepath.Join(home, "all.ndjson")
	type done struct{ r result }
	ch := make(chan done, 1)
	go func() {
		ch <- done{invoke(t, "", benchArgs(t, "hang-in-tool", "--agents", "claude", "-p", "x", "--workdir", benchSource(t),
			"--repeat", "3", "--parallel", "1", "--events", eventsFile, "--report", "json", "--idle-timeout", "0")...)}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(eventsFile)
		if bytes.Contains(b, []byte(`"type":"tool_start"`)) {
			break
		}
		require.True(t, time.Now().Before(deadline), "the first run never started a tool")
		time.Sleep(20 * time.Millisecond) // polling a condition
	}
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	var d done
	select {
	case d = <-ch:
	case <-time.After(20 * time.Second):
		t.Fatal("the bench did not end after SIGINT")
	}
	require.Equal(t, exitInterrupted, d.r.code, d.r.stderr)
	var rep bench.Report
	require.NoError(t, json.Unmarshal([]byte(d.r.stdout), &rep), d.r.stdout)
	require.True(t, rep.Cancelled)
	require.Equal(t, event.ResultCancelled, rep.Runs[0].Status)
	require.Equal(t, bench.StatusSkipped, rep.Runs[1].Status)
	require.Equal(t, bench.StatusSkipped, rep.Runs[2].Status)
	require.NotEmpty(t, rep.Runs[0].Log)
	logged, err := os.ReadFile(rep.Runs[0].Log)
	require.NoError(t, err)
	adaptertest.CheckStream(t, logged)
	pid := 0
	evs, err := event.ReadAll(bytes.NewReader(logged))
	require.NoError(t, err)
	for _, ev := range evs {
		if s, ok := ev.Body.(*event.SessionStart); ok && s.PID != 0 {
			pid = s.PID
		}
	}
	require.NotZero(t, pid)
	_, err = os.Stat("/proc/" + strconv.Itoa(pid))
	require.True(t, os.IsNotExist(err), "the agent (pid %d) is gone", pid)
}

func TestBenchProgressRedraw(t *testing.T) {
	var buf bytes.Buffer
	v := &progressView{w: &buf, redraw: true, done: make(chan struct{})}
	a := bench.Spec{Index: 0, Agent: "claude", Repeat: 1}
	b := bench.Spec{Index: 1, Agent: "codex", Model: "gpt-5", Repeat: 1, Task: bench.Task{Name: "t1"}}
	v.update(bench.Progress{Spec: a, State: bench.StateQueued})
	v.update(bench.Progress{Spec: b, State: bench.StateRunning, Tools: 2})
	pass := true
	v.update(bench.Progress{Spec: a, State: bench.StateDone, Status: "success", Passed: &pass, Elapsed: 1500 * time.Millisecond, Tools: 3})
	v.stop()
	v.stop()                                                     // idempotent
	v.update(bench.Progress{Spec: a, State: bench.StateRunning}) // after stop: nothing
	out := buf.String()
	require.Equal(t, 2, strings.Count(out, "\x1b[2A"), "each later draw goes back over both lines: %q", out)
	require.Equal(t, 1, strings.Count(out, "\x1b[1A"))
	last := out[strings.LastIndex(out, "\x1b[2A")+len("\x1b[2A"):]
	require.Contains(t, last, "#1 claude")
	require.Contains(t, last, "success, check passed")
	require.Contains(t, last, "1.5s  tools 3")
	require.Contains(t, last, "#2 codex gpt-5 [t1]")
	require.Contains(t, last, "running")
	require.Contains(t, last, "tools 2")
}

// An agent that is not installed did not run: the report counts it apart
// (not in its success rate) and the exit line says so.
func TestBenchNotRun(t *testing.T) {
	isolate(t)
	argv, _ := fakeagent.Command("bench-cli-writer")
	r := invoke(t, "", "bench", "--agents", "claude,codex", "-p", "x", "--workdir", benchSource(t),
		"--binary", "claude="+argv[0]+",codex=/nonexistent/codex", "--env", fakeagent.EnvVar+"=bench-cli-writer",
		"--linger", "100ms", "--kill-grace", "200ms", "--report", "json", "--no-log", "--no-store")
	require.Equal(t, exitAgentFailed, r.code, r.stderr)
	require.Contains(t, r.stderr, "bench: 0 of 2 runs failed or did not pass their check, 1 did not run")
	rep := decodeReport(t, r.stdout)
	codex := rep.Groups[1]
	require.Equal(t, "codex", codex.Agent)
	require.Equal(t, []int{0, 1}, []int{codex.Runs, codex.NotRun})
	require.Zero(t, codex.SuccessRate)
	require.Empty(t, rep.Comparisons[0].Pairs, "no pair with a run that did not run")
}

// A bench resumed under another --isolate is refused, exit 2, one line.
func TestBenchResumeUnderAnotherEngine(t *testing.T) {
	task, err := filepath.Abs("../../bench/testdata/harbor/create-file") // before isolate moves the working directory
	require.NoError(t, err)
	home := isolate(t)
	results := filepath.Join(home, "results")
	args := []string{"bench", "--agents", "oracle", "--tasks", task, "--results", results, "--report", "json", "--no-store"}
	r := invoke(t, "", append(args, "--isolate", "none")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "none", decodeReport(t, r.stdout).Isolate)
	r = invoke(t, "", append(args, "--isolate", "bwrap")...)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Equal(t, "harness: bench: --results "+results+" holds the runs of this plan under --isolate none, not bwrap: the runs of two engines do not mix; use another directory\n", r.stderr)
}

// A real bench resumed from the results of a --mock bench (or the other
// way round) is refused, exit 2, one line: before, it ran nothing and
// reported the scripted model's runs as resumed.
func TestBenchResumeWithAnotherMock(t *testing.T) {
	home := isolate(t)
	results := filepath.Join(home, "results")
	args := benchArgs(t, "bench-cli-writer", "--agents", "claude", "-p", "Say hi", "--workdir", benchSource(t),
		"--results", results, "--report", "json", "--no-store")
	r := invoke(t, "", append(args, "--mock", "text")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "text", decodeReport(t, r.stdout).Mock)
	r = invoke(t, "", args...)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Equal(t, "harness: bench: --results "+results+" holds the runs of this plan with --mock text, not without --mock: the runs of a scripted model and of another model do not mix; use another directory\n", r.stderr)
	r = invoke(t, "", append(args, "--mock", "text")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, decodeReport(t, r.stdout).Runs[0].Resumed)

	// Nor does merge mix them.
	real := filepath.Join(home, "real")
	r = invoke(t, "", append(args, "--results", real)...)
	require.Equal(t, 0, r.code, r.stderr)
	r = invoke(t, "", "bench", "--no-store", "merge", results, real)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Equal(t, "harness: bench: not the same plan: "+results+" ran with --mock text, "+real+" without --mock: the runs of a scripted model and of another model do not mix\n", r.stderr)
}

// A bench refused before any run (here a sandbox for a task of bench's
// own format, refused by bench.Run) leaves its -o and --events files as
// they were; before, both were emptied first.
func TestBenchRefusedLeavesItsFiles(t *testing.T) {
	home := isolate(t)
	report, events := filepath.Join(home, "report.json"), filepath.Join(home, "events.ndjson")
	require.NoError(t, os.WriteFile(report, []byte("precious report\n"), 0o644))
	require.NoError(t, os.WriteFile(events, []byte("precious events\n"), 0o644))
	r := invoke(t, "", "bench", "--agents", "claude", "-p", "x", "--workdir", benchSource(t), "--isolate", "bwrap",
		"-o", report, "--events", events, "--no-log", "--no-store")
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
	for path, want := range map[string]string{report: "precious report\n", events: "precious events\n"} {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, want, string(b), path)
	}
}

// A model given twice is refused, as an agent given twice is: their runs
// would be one pair of the comparison, one overwriting the other.
func TestBenchModelGivenTwice(t *testing.T) {
	isolate(t)
	r := invoke(t, "", "bench", "--agents", "claude,codex", "--models", "m1, m2,m1", "-p", "x", "--workdir", benchSource(t), "--no-log", "--no-store")
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Equal(t, "harness: bench: model m1 given twice\n", r.stderr)
	_, err := bench.Run(t.Context(), bench.Plan{Tasks: []bench.Task{{Name: "t", Prompt: "x"}}, Agents: []string{"claude"}, Models: []string{"m", "m"}}, bench.Options{})
	require.EqualError(t, err, `bench: model "m" given twice`)
}

// A plan over bench.Plan.CheckSize's bounds is refused before anything
// expands it: --repeat 100000000 took 5.7 GB before the refusal. The
// plan here is twice the bound, enough to show (some 140 MB expanded)
// and still safe to expand when the refusal comes too late.
func TestBenchRefusesHugePlanBeforeExpanding(t *testing.T) {
	isolate(t)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := invoke(t, "", "bench", "--agents", "nop", "-p", "hi", "--no-store", "--repeat", "200000")
	runtime.ReadMemStats(&after)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Equal(t, "harness: bench: 1 tasks × 1 models × 200000 repeats × 1 agents: more than 100000 runs\n", r.stderr)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(32<<20), "allocated before refusing")
}
