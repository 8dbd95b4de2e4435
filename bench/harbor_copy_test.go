package bench_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/fifotest"
)

// copyTask writes a Harbor task named copy in a suite of its own, whose
// Dockerfile is dockerfile and whose verifier is verify (a bash script's
// body), and returns its directory.
func copyTask(t *testing.T, dockerfile, verify string, files map[string]string) string {
	t.Helper()
	task := filepath.Join(t.TempDir(), "copy")
	writeFiles(t, task, map[string]string{
		"instruction.md":         "Do nothing.\n",
		"task.toml":              "[verifier]\ntimeout_sec = 10.0\n",
		"environment/Dockerfile": dockerfile,
		"tests/test.sh":          "#!/bin/bash\n" + verify + "\necho 1 > /logs/verifier/reward.txt\n",
		"solution/solve.sh":      "#!/bin/bash\ntrue\n",
	})
	writeFiles(t, task, files)
	return task
}

// TestHarborCopySourcesRefused: a Dockerfile COPY or ADD source that
// leaves the build context (a .. path, a link out of environment/, or
// environment/ itself a link out of the task), or that is or holds a
// FIFO or a socket, is refused when the task loads, with one line naming
// the task and the source, however the task is given. Before, the task
// loaded and each run copied the source into the workspace: the host's
// files (a HOME that bwrap hides) were the agent's, and a FIFO hung the
// bench for ever, deaf to SIGINT and SIGTERM, its report lost.
func TestHarborCopySourcesRefused(t *testing.T) {
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{
		"secret.txt":      "HARNESS-COPY-SECRET\n",
		".ssh/id_ed25519": "HARNESS-COPY-SECRET\n",
		"env/Dockerfile":  "FROM x\nWORKDIR /app\nCOPY data.txt /app/\n",
		"env/data.txt":    "data\n",
	})
	for name, c := range map[string]struct {
		dockerfile string
		prepare    func(t *testing.T, env string) // env: the task's environment/
		want       string
	}{
		"fifo": {"COPY data.txt /app/data.txt\n", func(t *testing.T, env string) {
			fifotest.Make(t, filepath.Join(env, "data.txt"))
		}, "COPY data.txt: environment/data.txt: not a regular file (a FIFO)"},
		"fifo-in-dir": {"COPY d /app/d\n", func(t *testing.T, env string) {
			writeFiles(t, env, map[string]string{"d/a.txt": "a\n"})
			fifotest.Make(t, filepath.Join(env, "d", "sub", "pipe"))
		}, "COPY d: environment/d/sub/pipe: not a regular file (a FIFO)"},
		"fifo-by-pattern": {"COPY *.txt /app/\n", func(t *testing.T, env string) {
			writeFiles(t, env, map[string]string{"a.txt": "a\n"})
			fifotest.Make(t, filepath.Join(env, "b.txt"))
		}, "COPY *.txt: environment/b.txt: not a regular file (a FIFO)"},
		"socket-in-dir": {"COPY d/ /app/\n", func(t *testing.T, env string) {
			require.NoError(t, os.MkdirAll(filepath.Join(env, "d"), 0o755))
			l, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(env, "d", "s"), Net: "unix"})
			require.NoError(t, err)
			l.SetUnlinkOnClose(false)
			require.NoError(t, l.Close())
		}, "environment/d/s: not a regular file (a socket)"},
		"dotdot": {"COPY ../../../../../../../../OUTSIDE/secret.txt /app/leak.txt\n", nil,
			"COPY ../../../../../../../../OUTSIDE/secret.txt: outside the build context (environment/)"},
		"dotdot-dir-json": {"COPY [\"../../../../../../../../OUTSIDE/.ssh\", \"/app/ssh\"]\n", nil,
			"outside the build context"},
		"dotdot-outside-workdir": {"ADD ../x /etc/x\n", nil, "COPY ../x: outside the build context"},
		"absolute-dotdot":        {"COPY /../x /app/\n", nil, "outside the build context"},
		"link-out": {"COPY data.txt /app/\n", func(t *testing.T, env string) {
			require.NoError(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(env, "data.txt")))
		}, "COPY data.txt: environment/data.txt: a symbolic link out of the build context (environment/): not followed"},
		"link-to-task-file": {"COPY data.txt /app/\n", func(t *testing.T, env string) {
			require.NoError(t, os.Symlink("../task.toml", filepath.Join(env, "data.txt")))
		}, "environment/data.txt: a symbolic link out of the build context"},
		"link-out-in-dir": {"COPY d /app/d\n", func(t *testing.T, env string) {
			writeFiles(t, env, map[string]string{"d/a.txt": "a\n"})
			require.NoError(t, os.Symlink(filepath.Join(outside, ".ssh"), filepath.Join(env, "d", "ssh")))
		}, "COPY d: environment/d/ssh: a symbolic link out of the build context"},
		"dir-link-out": {"COPY home/.ssh/* /app/\n", func(t *testing.T, env string) {
			require.NoError(t, os.Symlink(outside, filepath.Join(env, "home")))
		}, "environment/home/.ssh/id_ed25519: a symbolic link out of the build context"},
		"environment-link-out": {"", func(t *testing.T, env string) {
			require.NoError(t, os.RemoveAll(env))
			require.NoError(t, os.Symlink(filepath.Join(outside, "env"), env))
		}, "environment: a symbolic link out of the task's directory"},
	} {
		t.Run(name, func(t *testing.T) {
			df := "FROM x\nWORKDIR /app\n" + strings.ReplaceAll(c.dockerfile, "OUTSIDE", strings.TrimPrefix(outside, "/"))
			task := copyTask(t, df, "", nil)
			if c.prepare != nil {
				c.prepare(t, filepath.Join(task, "environment"))
			}
			want := strings.ReplaceAll(c.want, "OUTSIDE", strings.TrimPrefix(outside, "/"))
			for _, dir := range []string{task, filepath.Dir(task)} {
				_, err := bench.LoadTasks(dir)
				require.ErrorContains(t, err, want, dir)
				require.ErrorContains(t, err, "harbor task "+task+": ", "names the task")
				require.NotContains(t, err.Error(), "\n")
				require.NotContains(t, err.Error(), "HARNESS-COPY-SECRET")
			}
		})
	}
}

// TestHarborCopySourcesInside: what stays in the build context is copied
// as docker copies it: an absolute source is read in the context, a
// named source that is a link in it is followed, a link in a copied
// directory that stays in it is kept as a link, and a .. that stays in
// it is cleaned.
func TestHarborCopySourcesInside(t *testing.T) {
	task := copyTask(t, "FROM x\nWORKDIR /app\nCOPY /data.txt alias.txt sub/../d /app/\nCOPY d /app/again/\n",
		`set -e
test "$(cat /app/data.txt)" = data
test "$(cat /app/alias.txt)" = data
test ! -L /app/alias.txt
test "$(cat /app/inner.txt)" = inner
test "$(readlink /app/link)" = inner.txt
test "$(readlink /app/again/dangling)" = nowhere.txt`,
		map[string]string{"environment/data.txt": "data\n", "environment/d/inner.txt": "inner\n", "environment/sub/keep": ""})
	env := filepath.Join(task, "environment")
	require.NoError(t, os.Symlink("data.txt", filepath.Join(env, "alias.txt")))
	require.NoError(t, os.Symlink("inner.txt", filepath.Join(env, "d", "link")))
	require.NoError(t, os.Symlink("nowhere.txt", filepath.Join(env, "d", "dangling")))
	tasks, err := bench.LoadTasks(task)
	require.NoError(t, err)
	rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"oracle"}}, bench.Options{Dir: t.TempDir(),
		Setup: func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
			tk.Budgets = small()
			return tk, harness.Observer{}, nil
		}})
	require.NoError(t, err)
	r := rep.Runs[0]
	require.NotNil(t, r.Check, r.Error)
	require.True(t, r.Check.Passed, "%s: %s", r.Check.Detail, r.Check.Output)
}

// TestHarborCopySourceChangedAfterLoad: a COPY source that becomes a
// FIFO, or a link out of the build context, once the task loaded fails
// the run (reason setup), at once, and copies nothing of the host.
// Before, the FIFO's open hung the run for ever and the link's target,
// a host file, was copied into the workspace.
func TestHarborCopySourceChangedAfterLoad(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("HARNESS-COPY-SECRET\n"), 0o600))
	for name, c := range map[string]struct {
		change func(t *testing.T, p string)
		want   string
	}{
		"fifo": {func(t *testing.T, p string) { fifotest.Make(t, p) }, "not a regular file (a FIFO)"},
		"link-out": {func(t *testing.T, p string) {
			require.NoError(t, os.Symlink(secret, p))
		}, "a symbolic link out of the environment: not followed"},
	} {
		t.Run(name, func(t *testing.T) {
			task := copyTask(t, "FROM x\nWORKDIR /app\nCOPY data.txt /app/\n",
				"grep -q HARNESS-COPY-SECRET /app/data.txt && exit 3", map[string]string{"environment/data.txt": "data\n"})
			tasks, err := bench.LoadTasks(task)
			require.NoError(t, err)
			p := filepath.Join(task, "environment", "data.txt")
			require.NoError(t, os.Remove(p))
			c.change(t, p)
			rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"oracle"}}, bench.Options{Dir: t.TempDir(),
				Setup: func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
					tk.Budgets = small()
					return tk, harness.Observer{}, nil
				}})
			require.NoError(t, err)
			r := rep.Runs[0]
			require.Equal(t, bench.ReasonSetup, r.Reason, "%s %v", r.Error, r.Check)
			require.Contains(t, r.Error, "COPY data.txt: ")
			require.Contains(t, r.Error, c.want)
		})
	}
}

// TestHarborTaskFileLinks: an instruction.md or a task.toml that is a
// symbolic link out of the task's directory is refused at load, as a
// tests/ that is, with one line naming the task; one that stays in it is
// read. Before, a link to any host file (/etc/hostname) was read and
// its text was the agent's prompt.
func TestHarborTaskFileLinks(t *testing.T) {
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{
		"prompt.md": "HARNESS-HOST-PROMPT\n",
		"task.toml": "[verifier]\ntimeout_sec = 10.0\n",
	})
	for name, c := range map[string]struct {
		links map[string]string // link → target (OUTSIDE: the outside directory)
		want  string            // "": it loads
	}{
		"instruction-out":    {map[string]string{"instruction.md": "OUTSIDE/prompt.md"}, "instruction.md: a symbolic link out of the task's directory"},
		"instruction-suite":  {map[string]string{"instruction.md": "../prompt.md"}, "instruction.md: a symbolic link out of the task's directory"},
		"task.toml-out":      {map[string]string{"task.toml": "OUTSIDE/task.toml"}, "task.toml: a symbolic link out of the task's directory"},
		"instruction-inside": {map[string]string{"instruction.md": "docs/prompt.md"}, ""},
		"task.toml-inside":   {map[string]string{"task.toml": "docs/task.toml"}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			task := filepath.Join(t.TempDir(), "links")
			writeFiles(t, filepath.Dir(task), map[string]string{"prompt.md": "HARNESS-HOST-PROMPT\n"})
			writeFiles(t, task, map[string]string{
				"docs/prompt.md":         "The task's own prompt.\n",
				"docs/task.toml":         "[verifier]\ntimeout_sec = 10.0\n",
				"environment/Dockerfile": "FROM x\nWORKDIR /app\n",
				"tests/test.sh":          "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
			})
			for _, f := range []string{"instruction.md", "task.toml"} {
				if c.links[f] == "" {
					writeFiles(t, task, map[string]string{f: map[string]string{"instruction.md": "The task's prompt.\n", "task.toml": "[verifier]\n"}[f]})
					continue
				}
				require.NoError(t, os.Symlink(strings.Replace(c.links[f], "OUTSIDE", outside, 1), filepath.Join(task, f)))
			}
			for _, dir := range []string{task, filepath.Dir(task)} {
				tasks, err := bench.LoadTasks(dir)
				if c.want == "" {
					require.NoError(t, err)
					require.Len(t, tasks, 1)
					want := "The task's prompt.\n"
					if c.links["instruction.md"] != "" {
						want = "The task's own prompt.\n"
					}
					require.Equal(t, want, tasks[0].Prompt)
					continue
				}
				require.ErrorContains(t, err, c.want, dir)
				require.ErrorContains(t, err, task, "names the task")
				require.NotContains(t, err.Error(), "\n")
			}
		})
	}
}
