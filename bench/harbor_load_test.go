package bench_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
)

// writeFiles writes files (path relative to dir → content) under dir;
// a .sh file is executable.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		require.NoError(t, os.WriteFile(full, []byte(content), mode))
	}
}

// TestHarborWorkdirTmp: a task whose WORKDIR is /tmp runs under
// --isolate none, its run directories under the host's /tmp: the
// instruction and tests/test.sh are rewritten once (/tmp to the
// workspace, /logs to the run's logs), and its verifier's reward counts.
// Before, rewriting the paths never ended: the run's directory under
// /tmp holds /tmp/ again, and the loop that rewrote until nothing
// changed grew the text for ever, spinning, deaf to SIGINT and SIGTERM.
func TestHarborWorkdirTmp(t *testing.T) {
	task := filepath.Join(t.TempDir(), "wtmp")
	writeFiles(t, task, map[string]string{
		"instruction.md":         "Leave /tmp/marker as it is; the verifier writes /logs/verifier/reward.txt.\n",
		"task.toml":              "[verifier]\ntimeout_sec = 10.0\n",
		"environment/Dockerfile": "FROM localhost/harness-base:bookworm-2\nWORKDIR /tmp\nCOPY marker /tmp/marker\n",
		"environment/marker":     "here\n",
		"tests/test.sh":          "#!/bin/bash\ntest -f /tmp/marker || exit 3\necho 1 > /logs/verifier/reward.txt\n",
	})
	tasks, err := bench.LoadTasks(task)
	require.NoError(t, err)
	runs, err := os.MkdirTemp("/tmp", "harness-wtmp-test-") // under /tmp whatever TMPDIR says
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(runs) })
	var prompt string
	rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"nop"}}, bench.Options{Dir: runs,
		Setup: func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
			prompt = tk.Prompt
			tk.Budgets = small()
			return tk, harness.Observer{}, nil
		}})
	require.NoError(t, err)
	r := rep.Runs[0]
	require.NotNil(t, r.Check, r.Error)
	require.True(t, r.Check.Passed, "%s: %s", r.Check.Detail, r.Check.Output)
	run := `/tmp/harness-wtmp-test-\d+/bench-\d+/001-wtmp-nop-r1/`
	require.Regexp(t, `^Leave `+run+`app/marker as it is; the verifier writes `+run+`logs/verifier/reward.txt.\n$`, prompt)
}

// TestLoadHarborTaskDirectly: a Harbor task given to --tasks itself (not
// in a suite) that cannot run is refused with its own reason, as it is
// in a suite. Before, a task.toml that did not parse (or had no
// [verifier]) made the directory a suite, whose environment/ was then a
// task of bench's own format without a prompt.
func TestLoadHarborTaskDirectly(t *testing.T) {
	big := "[verifier]\n# " + strings.Repeat("x", 17<<20) + "\n"
	for name, c := range map[string]struct {
		toml string // "" for none
		want string
	}{
		"unclosed-table": {"[verifier\ntimeout_sec = 1\n", "whose task.toml: toml: "},
		"duplicate-key":  {"[verifier]\ntimeout_sec = 1\ntimeout_sec = 2\n", "whose task.toml: toml: "},
		"too-big":        {big, "more than 16777216 bytes"},
		"no-verifier":    {"[agent]\ntimeout_sec = 1\n", "whose task.toml has no [verifier] table"},
		"no-task-toml":   {"", "no task.toml"},
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{
				"instruction.md":         "Do it.\n",
				"environment/Dockerfile": "FROM x\nWORKDIR /app\n",
				"tests/test.sh":          "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
				"solution/solve.sh":      "#!/bin/bash\ntrue\n",
			}
			if c.toml != "" {
				files["task.toml"] = c.toml
			}
			suite := t.TempDir()
			task := filepath.Join(suite, "bad")
			writeFiles(t, task, files)
			for _, dir := range []string{task, suite} {
				_, err := bench.LoadTasks(dir)
				require.ErrorContains(t, err, c.want, dir)
				require.ErrorContains(t, err, task, "the error names the task")
				require.NotContains(t, err.Error(), "environment", "not read as a suite")
				require.NotContains(t, err.Error(), "\n")
			}
		})
	}
	t.Run("harbor-toml-without-instruction", func(t *testing.T) {
		task := t.TempDir()
		writeFiles(t, task, map[string]string{"task.toml": "[verifier]\n", "tests/test.sh": "true\n", "environment/Dockerfile": "FROM x\n"})
		_, err := bench.LoadTasks(task)
		require.ErrorContains(t, err, "no instruction.md")
		require.ErrorContains(t, err, task)
	})
	t.Run("own-task-folder", func(t *testing.T) {
		// A folder of bench's own format with a task.toml is one task too.
		task := filepath.Join(t.TempDir(), "greet")
		writeFiles(t, task, map[string]string{"task.toml": "prompt = \"Say hello.\"\ncheck = \"true\"\n"})
		tasks, err := bench.LoadTasks(task)
		require.NoError(t, err)
		require.Equal(t, []bench.Task{{Name: "greet", Prompt: "Say hello.", Check: "true"}}, tasks)
	})
}

// TestHarborTaskLinks: tests/, tests/test.sh, solution/ and
// solution/solve.sh that are symbolic links are followed while they stay
// in the task's directory (the verifier and the oracle get the files they
// lead to, rewritten under --isolate none) and refused at load, with one
// line naming the task, when they leave it or lead nowhere. Before, they
// loaded, and every run copied the link as a link: tests/ copied nothing
// (verifier_error, exit 127), tests/test.sh ran the task's own file
// unrewritten, or the host's, counted as failed checks.
func TestHarborTaskLinks(t *testing.T) {
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{
		"tests/test.sh":     "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
		"solution/solve.sh": "#!/bin/bash\necho hello > /app/hello.txt\n",
	})
	base := map[string]string{
		"instruction.md":         "Write /app/hello.txt.\n",
		"task.toml":              "[verifier]\ntimeout_sec = 10.0\n",
		"environment/Dockerfile": "FROM x\nWORKDIR /app\n",
	}
	verifier := "#!/bin/bash\ntest -f /app/hello.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n"
	solve := "#!/bin/bash\necho hello > /app/hello.txt\n"
	inside := map[string]struct {
		files map[string]string
		links map[string]string // link → target
	}{
		"tests-dir": {map[string]string{"shared/tests/test.sh": verifier, "solution/solve.sh": solve},
			map[string]string{"tests": "shared/tests"}},
		"test.sh": {map[string]string{"shared/verify.sh": verifier, "solution/solve.sh": solve},
			map[string]string{"tests/test.sh": "../shared/verify.sh"}},
		"solve.sh-absolute": {map[string]string{"tests/test.sh": verifier, "shared/solve.sh": solve},
			map[string]string{"solution/solve.sh": "TASK/shared/solve.sh"}},
		"solution-dir": {map[string]string{"tests/test.sh": verifier, "shared/solution/solve.sh": solve},
			map[string]string{"solution": "shared/solution"}},
	}
	makeTask := func(t *testing.T, files, links map[string]string) string {
		task := filepath.Join(t.TempDir(), "links")
		writeFiles(t, task, base)
		writeFiles(t, task, files)
		for link, target := range links {
			target = strings.Replace(target, "TASK", task, 1)
			target = strings.Replace(target, "OUTSIDE", outside, 1)
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(task, link)), 0o755))
			require.NoError(t, os.Symlink(target, filepath.Join(task, link)))
		}
		return task
	}
	for name, c := range inside {
		t.Run(name, func(t *testing.T) {
			task := makeTask(t, c.files, c.links)
			tasks, err := bench.LoadTasks(task)
			require.NoError(t, err)
			rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"oracle", "nop"}}, bench.Options{Dir: t.TempDir(),
				Setup: func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
					tk.Budgets = small()
					return tk, harness.Observer{}, nil
				}})
			require.NoError(t, err)
			for _, r := range rep.Runs {
				require.NotNil(t, r.Check, "%s: %s", r.Agent, r.Error)
				require.Equal(t, bench.OutcomeReward, r.Check.Outcome, "%s: %s %s", r.Agent, r.Check.Detail, r.Check.Output)
				require.Equal(t, r.Agent == "oracle", r.Check.Passed, "%s: %s", r.Agent, r.Check.Output)
			}
			// The plan id hashes the verifier the runs get.
			f, err := os.OpenFile(filepath.Join(task, "tests", "test.sh"), os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteString("# changed\n")
			require.NoError(t, errors.Join(err, f.Close()))
			again, err := bench.LoadTasks(task)
			require.NoError(t, err)
			require.NotEqual(t, tasks[0].Harbor.Digest, again[0].Harbor.Digest)
		})
	}
	for name, links := range map[string]map[string]string{
		"tests-dir-out":     {"tests": "OUTSIDE/tests"},
		"test.sh-out":       {"tests/test.sh": "OUTSIDE/tests/test.sh"},
		"test.sh-in-suite":  {"tests/test.sh": "../../verify.sh"},
		"solution-dir-out":  {"solution": "OUTSIDE/solution", "tests/test.sh": "../shared/verify.sh"},
		"solve.sh-out":      {"solution/solve.sh": "OUTSIDE/solution/solve.sh", "tests/test.sh": "../shared/verify.sh"},
		"test.sh-dangling":  {"tests/test.sh": "../nowhere.sh"},
		"tests-dir-to-task": {"tests": "."},
	} {
		t.Run(name, func(t *testing.T) {
			task := makeTask(t, map[string]string{"shared/verify.sh": verifier}, links)
			writeFiles(t, filepath.Dir(task), map[string]string{"verify.sh": verifier}) // beside the task, in its suite
			for _, dir := range []string{task, filepath.Dir(task)} {
				_, err := bench.LoadTasks(dir)
				if name == "tests-dir-to-task" { // inside, but no tests/test.sh there
					require.ErrorContains(t, err, "no tests/test.sh")
					continue
				}
				require.Error(t, err, dir)
				require.ErrorContains(t, err, task, "names the task")
				require.NotContains(t, err.Error(), "\n")
				if name == "test.sh-dangling" {
					require.ErrorContains(t, err, "tests/test.sh: a symbolic link to nothing")
				} else {
					require.ErrorContains(t, err, "a symbolic link out of the task's directory")
				}
			}
		})
	}
}
