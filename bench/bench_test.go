package bench_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/process"
)

func TestMain(m *testing.M) { harnesstest.Main(m) }

func small() *harness.Budgets {
	return &harness.Budgets{Idle: 10 * time.Second, Hard: 30 * time.Second, Linger: 100 * time.Millisecond, KillGrace: 200 * time.Millisecond}
}

// fakes runs each agent of a plan as a named fake (parsed as Claude), with
// $BENCH_WHO set to the agent's name.
func fakes(byAgent map[string]string) func(bench.Spec, harness.Task) (harness.Task, harness.Observer, error) {
	return func(s bench.Spec, t harness.Task) (harness.Task, harness.Observer, error) {
		argv, env := fakeagent.Command(byAgent[s.Agent])
		t.Agent, t.Binary, t.BaseEnv = "claude", argv[0], env
		t.Env = []string{"BENCH_WHO=" + s.Agent}
		t.Budgets = small()
		return t, harness.Observer{}, nil
	}
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return strings.TrimSpace(string(out))
}

// source makes a starting tree with one file, as a git repo or not.
func source(t *testing.T, repo bool) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "keep.txt"), []byte("original\n"), 0o644))
	if repo {
		gitRun(t, dir, "init", "-q")
		gitRun(t, dir, "add", "-A")
		gitRun(t, dir, "commit", "-q", "-m", "start")
	}
	return dir
}

func TestIsolation(t *testing.T) {
	for _, repo := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain-copy", true: "git-worktree"}[repo], func(t *testing.T) {
			src := source(t, repo)
			runs := t.TempDir()
			plan := bench.Plan{Tasks: []bench.Task{{Prompt: "write out.txt", Tree: src}}, Agents: []string{"claude", "codex"}}
			rep, err := bench.Run(context.Background(), plan, bench.Options{Parallel: 2, Dir: runs, Keep: true,
				Setup: fakes(map[string]string{"claude": "bench-writer", "codex": "bench-writer"})})
			require.NoError(t, err)
			require.Len(t, rep.Runs, 2)
			for _, r := range rep.Runs {
				require.Equal(t, event.ResultSuccess, r.Status, "%+v", r)
				got, err := os.ReadFile(filepath.Join(r.Tree, "out.txt"))
				require.NoError(t, err)
				require.Equal(t, r.Agent, string(got), "each run sees only its own edit")
				kept, err := os.ReadFile(filepath.Join(r.Tree, "sub", "keep.txt"))
				require.NoError(t, err)
				require.Equal(t, "original\n", string(kept), "the run starts from the source tree")
				require.Equal(t, &bench.FilesChanged{Files: 1, Insertions: 1, Paths: []string{"out.txt"}}, r.Files)
			}
			require.NotEqual(t, rep.Runs[0].Tree, rep.Runs[1].Tree)
			require.NoFileExists(t, filepath.Join(src, "out.txt"), "the source tree is untouched")
			if repo {
				require.Empty(t, gitRun(t, src, "status", "--porcelain"))
				require.Equal(t, "start", gitRun(t, rep.Runs[0].Tree, "log", "-1", "--format=%s"), "a repository of its own at HEAD")
			}

			// Without --keep every tree goes.
			rep, err = bench.Run(context.Background(), plan, bench.Options{Parallel: 2, Dir: runs,
				Setup: fakes(map[string]string{"claude": "bench-writer", "codex": "bench-writer"})})
			require.NoError(t, err)
			for _, r := range rep.Runs {
				require.Equal(t, event.ResultSuccess, r.Status)
				require.Empty(t, r.Tree)
			}
			left, _ := filepath.Glob(filepath.Join(runs, "bench-*"))
			require.Len(t, left, 1, "only the kept bench of the first run is left: %v", left)
		})
	}
}

// TestSubdirectoryOfARepoIsCopied: a task's fixture kept in a project is
// copied as it is on disk (uncommitted files too), not the whole project.
func TestSubdirectoryOfARepoIsCopied(t *testing.T) {
	src := source(t, true)
	require.NoError(t, os.WriteFile(filepath.Join(src, "sub", "new.txt"), []byte("not committed"), 0o644))
	plan := bench.Plan{Tasks: []bench.Task{{Prompt: "x", Tree: filepath.Join(src, "sub")}}, Agents: []string{"claude"},
		Check: "test -f keep.txt && test -f new.txt && test -f out.txt && test ! -d ../sub"}
	rep, err := bench.Run(context.Background(), plan, bench.Options{Setup: fakes(map[string]string{"claude": "bench-writer"})})
	require.NoError(t, err)
	r := rep.Runs[0]
	require.True(t, r.Check.Passed, "%+v", r.Check)
	require.Equal(t, []string{"out.txt"}, r.Files.Paths)
	require.Equal(t, "start", gitRun(t, src, "log", "--format=%s"), "the project's history is untouched")
	require.Equal(t, 1, strings.Count(gitRun(t, src, "worktree", "list"), "\n")+1)
}

func TestCheck(t *testing.T) {
	plan := bench.Plan{Tasks: []bench.Task{{Prompt: "x"}}, Agents: []string{"claude", "codex"},
		Check: "echo checking; cat out.txt; grep -q claude out.txt"}
	rep, err := bench.Run(context.Background(), plan, bench.Options{Parallel: 2,
		Setup: fakes(map[string]string{"claude": "bench-writer", "codex": "bench-writer"})})
	require.NoError(t, err)
	pass, fail := rep.Runs[0].Check, rep.Runs[1].Check
	require.True(t, pass.Passed)
	require.Equal(t, 0, pass.ExitCode)
	// The fake's out.txt holds its --env value (BENCH_WHO=claude), which
	// the report redacts as the session log does; codex is too short a
	// value to be redacted (logger.MinValueLen).
	require.Equal(t, "checking\n[REDACTED]", pass.Output)
	require.False(t, fail.Passed)
	require.Equal(t, 1, fail.ExitCode)
	require.Equal(t, "checking\ncodex", fail.Output)
	require.Equal(t, 1, rep.Groups[0].Passed)
	require.Equal(t, 0, rep.Groups[1].Passed)
	require.Equal(t, 1.0, *rep.Groups[0].PassRate)

	t.Run("task-check-wins", func(t *testing.T) {
		plan := bench.Plan{Tasks: []bench.Task{{Prompt: "x", Check: "true"}}, Agents: []string{"claude"}, Check: "false"}
		rep, err := bench.Run(context.Background(), plan, bench.Options{Setup: fakes(map[string]string{"claude": "bench-writer"})})
		require.NoError(t, err)
		require.True(t, rep.Runs[0].Check.Passed)
	})
	t.Run("timeout", func(t *testing.T) {
		plan := bench.Plan{Tasks: []bench.Task{{Prompt: "x"}}, Agents: []string{"claude"}, Check: "echo started; sleep 30"}
		start := time.Now()
		rep, err := bench.Run(context.Background(), plan, bench.Options{CheckTimeout: time.Second,
			Setup: fakes(map[string]string{"claude": "bench-writer"})})
		require.NoError(t, err)
		c := rep.Runs[0].Check
		require.True(t, c.TimedOut)
		require.False(t, c.Passed)
		require.Equal(t, "started\n", c.Output)
		require.Less(t, time.Since(start), 15*time.Second, "the check's sleep is killed with its group")
		require.Equal(t, 1, rep.Groups[0].Checked, "a timed-out check counts as a fail")
	})
}

func TestFiguresOfARun(t *testing.T) {
	plan := bench.Plan{Tasks: []bench.Task{{Name: "t1", Prompt: "x"}}, Agents: []string{"claude", "codex"}}
	rep, err := bench.Run(context.Background(), plan, bench.Options{
		Setup: fakes(map[string]string{"claude": "bench-writer", "codex": "bench-fail"})})
	require.NoError(t, err)
	ok, bad := rep.Runs[0], rep.Runs[1]
	require.Equal(t, event.ResultSuccess, ok.Status)
	require.Equal(t, 1, ok.ToolCalls)
	require.Equal(t, map[string]int{"write": 1}, ok.ToolsByKind)
	require.Equal(t, 2, ok.Turns)
	require.Equal(t, event.Tokens{Input: 240, Output: 50, CacheRead: 30, CacheWrite: 7}, ok.Tokens)
	require.InDelta(t, 0.00147, *ok.CostUSD, 1e-12)
	require.False(t, ok.CostEstimated)
	require.NotNil(t, ok.FirstOutputMS)
	require.NotNil(t, ok.FirstToolMS)
	require.LessOrEqual(t, *ok.FirstOutputMS, *ok.FirstToolMS)
	require.LessOrEqual(t, *ok.FirstToolMS, ok.WallMS)
	require.Equal(t, "fake-model", ok.ReportedModel)
	require.True(t, strings.HasPrefix(ok.Run, "run_"))
	require.Equal(t, "t1", ok.Task)

	require.Equal(t, event.ResultError, bad.Status)
	require.Equal(t, "agent_error", bad.Reason)
	require.Zero(t, bad.ToolCalls)
	require.Nil(t, bad.FirstToolMS)
	require.Equal(t, &bench.FilesChanged{}, bad.Files)
	require.Equal(t, 1.0, rep.Groups[0].SuccessRate)
	require.Equal(t, 0.0, rep.Groups[1].SuccessRate)
}

func TestNotInstalledIsAFigure(t *testing.T) {
	plan := bench.Plan{Tasks: []bench.Task{{Prompt: "x"}}, Agents: []string{"gemini"}}
	rep, err := bench.Run(context.Background(), plan, bench.Options{Setup: func(s bench.Spec, t harness.Task) (harness.Task, harness.Observer, error) {
		t.Binary = "/nonexistent/gemini"
		return t, harness.Observer{}, nil
	}})
	require.NoError(t, err)
	require.Equal(t, event.ResultError, rep.Runs[0].Status)
	require.Equal(t, event.ErrNotInstalled, rep.Runs[0].Reason)
}

// TestParallelism counts the runs between Setup and the observer's Close: never more than
// Parallel, and (with a barrier that only Parallel runs at once can pass)
// exactly Parallel.
func TestParallelism(t *testing.T) {
	for _, parallel := range []int{1, 2} {
		t.Run(strconv.Itoa(parallel), func(t *testing.T) {
			var mu sync.Mutex
			cur, peak, arrived := 0, 0, 0
			all := make(chan struct{})
			inner := fakes(map[string]string{"claude": "bench-writer", "codex": "bench-writer"})
			setup := func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
				mu.Lock()
				cur++
				peak = max(peak, cur)
				arrived++
				if arrived == parallel {
					close(all)
				}
				mu.Unlock()
				select { // the first runs wait for each other: proof they overlap
				case <-all:
				case <-time.After(20 * time.Second):
				}
				tk, obs, err := inner(s, tk)
				obs.Close = func(*event.Result) {
					mu.Lock()
					cur--
					mu.Unlock()
				}
				return tk, obs, err
			}
			plan := bench.Plan{Tasks: []bench.Task{{Prompt: "x"}}, Agents: []string{"claude", "codex"}, Repeat: 2}
			rep, err := bench.Run(context.Background(), plan, bench.Options{Parallel: parallel, Setup: setup})
			require.NoError(t, err)
			require.Equal(t, parallel, peak)
			require.Equal(t, parallel, rep.Parallel)
			for _, r := range rep.Runs {
				require.Equal(t, event.ResultSuccess, r.Status)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var pids []int
	var progress []bench.Progress
	inner := fakes(map[string]string{"claude": "hang-in-tool", "codex": "hang-in-tool"})
	setup := func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
		tk, obs, err := inner(s, tk)
		obs.OnNative = func(stream string, line []byte) {
			if pid := gjson.GetBytes(line, "pid"); pid.Exists() {
				mu.Lock()
				pids = append(pids, int(pid.Int()))
				mu.Unlock()
			}
		}
		return tk, obs, err
	}
	plan := bench.Plan{Tasks: []bench.Task{{Prompt: "x"}}, Agents: []string{"claude", "codex"}, Repeat: 2}
	start := time.Now()
	rep, err := bench.Run(ctx, plan, bench.Options{Parallel: 1, Setup: setup, Progress: func(p bench.Progress) {
		progress = append(progress, p)
		if p.State == bench.StateRunning && p.Tools > 0 {
			cancel() // the first run is mid-tool
		}
	}})
	require.NoError(t, err)
	require.Less(t, time.Since(start), 15*time.Second)
	require.True(t, rep.Cancelled)
	require.Equal(t, event.ResultCancelled, rep.Runs[0].Status)
	require.Equal(t, event.ErrInterrupted, rep.Runs[0].Reason)
	require.Equal(t, 1, rep.Runs[0].ToolCalls)
	require.NotNil(t, rep.Runs[0].Files, "an interrupted run's tree is still measured")
	for _, r := range rep.Runs[1:] {
		require.Equal(t, bench.StatusSkipped, r.Status)
	}
	require.Equal(t, 0, rep.Groups[0].Runs, "the run cut short is in no figure")
	require.Equal(t, 1, rep.Groups[0].Cancelled)
	require.Equal(t, 1, rep.Groups[0].Skipped)
	require.Len(t, pids, 1)
	require.False(t, process.Alive(pids[0]), "the interrupted agent is gone")
	var skipped int
	for _, p := range progress {
		if p.State == bench.StateSkipped {
			skipped++
		}
	}
	require.Equal(t, 3, skipped)
}

// TestSecondInterruptKills: the first interrupt asks (SIGINT, SIGTERM,
// then SIGKILL after the grace); a second one within 2 s kills at once,
// so an agent deaf to signals ends long before its 20 s grace.
func TestSecondInterruptKills(t *testing.T) {
	intr := make(chan struct{}, 2)
	inner := fakes(map[string]string{"claude": "hang-in-tool-deaf"})
	setup := func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
		tk, obs, err := inner(s, tk)
		tk.Budgets.KillGrace = 20 * time.Second
		return tk, obs, err
	}
	plan := bench.Plan{Tasks: []bench.Task{{Prompt: "x"}}, Agents: []string{"claude"}, Repeat: 2}
	start := time.Now()
	rep, err := bench.Run(context.Background(), plan, bench.Options{Parallel: 1, Setup: setup, Interrupt: intr,
		Progress: func(p bench.Progress) {
			if p.State == bench.StateRunning && p.Tools > 0 {
				intr <- struct{}{}
				intr <- struct{}{}
			}
		}})
	require.NoError(t, err)
	require.Less(t, time.Since(start), 10*time.Second, "killed at once, not after the grace")
	require.True(t, rep.Cancelled)
	require.Equal(t, event.ResultCancelled, rep.Runs[0].Status)
	require.True(t, rep.Runs[0].Killed, "%+v", rep.Runs[0])
	require.Equal(t, bench.StatusSkipped, rep.Runs[1].Status)
}

func TestBadPlans(t *testing.T) {
	task := []bench.Task{{Prompt: "x"}}
	for name, p := range map[string]bench.Plan{
		"no-task":       {Agents: []string{"claude"}},
		"no-agent":      {Tasks: task},
		"unknown-agent": {Tasks: task, Agents: []string{"nope"}},
		"twice":         {Tasks: task, Agents: []string{"claude", "claude-code"}},
		"no-prompt":     {Tasks: []bench.Task{{Name: "t"}}, Agents: []string{"claude"}},
		"missing-tree":  {Tasks: []bench.Task{{Prompt: "x", Tree: "/nonexistent/tree"}}, Agents: []string{"claude"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := bench.Run(context.Background(), p, bench.Options{})
			require.Error(t, err)
			require.True(t, strings.HasPrefix(err.Error(), "bench: "), err.Error())
		})
	}
}

func TestSpecsOrder(t *testing.T) {
	p := bench.Plan{Tasks: []bench.Task{{Name: "a"}, {Name: "b"}}, Agents: []string{"claude", "codex"}, Models: []string{"m1", "m2"}, Repeat: 2}
	specs := p.Specs()
	require.Len(t, specs, 16)
	require.Equal(t, bench.Spec{Index: 0, Task: bench.Task{Name: "a"}, Agent: "claude", Model: "m1", Repeat: 1}, specs[0])
	require.Equal(t, bench.Spec{Index: 1, Task: bench.Task{Name: "a"}, Agent: "codex", Model: "m1", Repeat: 1}, specs[1])
	require.Equal(t, "m2", specs[4].Model)
	require.Equal(t, "b", specs[8].Task.Name)
	for i, s := range specs {
		require.Equal(t, i, s.Index)
	}
}
