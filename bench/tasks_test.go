package bench_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

func TestLoadTasks(t *testing.T) {
	tasks, err := bench.LoadTasks(filepath.Join("testdata", "suite"))
	require.NoError(t, err)
	require.Equal(t, []bench.Task{
		{Name: "add-file", Prompt: "Create out.txt.\n", Tree: filepath.Join("testdata", "suite", "add-file", "tree"), Check: "test -f out.txt\n"},
		{Name: "greet", Prompt: "Say hello.", Check: "grep -q fake out.txt"},
	}, tasks)
}

func TestLoadTasksTOMLPaths(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "suite") // every folder in a suite is a task: trees live beside it
	require.NoError(t, os.MkdirAll(filepath.Join(root, "trees", "one"), 0o755))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.md"), []byte("from a file"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t.toml"), []byte("prompt_file = \"p.md\"\ntree = \"../trees/one\"\n"), 0o644))
	tasks, err := bench.LoadTasks(dir)
	require.NoError(t, err)
	require.Equal(t, []bench.Task{{Name: "t", Prompt: "from a file", Tree: filepath.Join(root, "trees", "one")}}, tasks)
}

func TestLoadTasksErrors(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"empty":         {},
		"unknown-key":   {"a.toml": "prompt = \"x\"\nchek = \"true\"\n"},
		"bad-toml":      {"a.toml": "prompt = \n"},
		"no-prompt":     {"a.toml": "check = \"true\"\n"},
		"both-prompts":  {"a.toml": "prompt = \"x\"\nprompt_file = \"p\"\n"},
		"missing-tree":  {"a.toml": "prompt = \"x\"\ntree = \"nope\"\n"},
		"folder-empty":  {"f/notes.txt": "hi"},
		"missing-pfile": {"a.toml": "prompt_file = \"nope.md\"\n"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for p, content := range files {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644))
			}
			_, err := bench.LoadTasks(dir)
			require.Error(t, err)
			require.NotContains(t, err.Error(), "\n")
		})
	}
	_, err := bench.LoadTasks("/nonexistent/suite")
	require.Error(t, err)
}

// Two entries of a suite that give one task name (foo.toml and foo/, a
// Harbor task among them) are refused: the runs of both would be paired
// as one task's, and a comparison would drop pairs.
func TestLoadTasksDuplicateNames(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"toml-and-folder": {"foo.toml": "prompt = \"x\"\n", "foo/prompt.md": "y"},
		"toml-and-harbor": {"foo.toml": "prompt = \"x\"\n", "foo/instruction.md": "y", "foo/task.toml": "[verifier]\n", "foo/tests/test.sh": "true\n"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for p, content := range files {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644))
			}
			_, err := bench.LoadTasks(dir)
			require.EqualError(t, err, "bench: tasks: "+filepath.Join(dir, "foo")+" and "+filepath.Join(dir, "foo.toml")+
				" are both task foo: rename one")
		})
	}
}

// A file of a task that is a FIFO or a device is refused with one line:
// before, reading it hung the bench (a FIFO no one writes) or filled its
// memory (/dev/zero). Each case is loaded with a deadline.
func TestLoadTasksNotRegularFiles(t *testing.T) {
	fifo := func(p string) { require.NoError(t, syscall.Mkfifo(p, 0o644)) }
	zero := func(p string) { require.NoError(t, os.Symlink("/dev/zero", p)) }
	write := func(p, s string) { require.NoError(t, os.WriteFile(p, []byte(s), 0o644)) }
	harbor := func(dir string) {
		copyDir(t, filepath.Join(harborSuite, "create-file"), dir)
	}
	// inHarbor makes a Harbor task h in suite s whose file rel is made by mk.
	inHarbor := func(s, rel string, mk func(string)) {
		harbor(filepath.Join(s, "h"))
		p := filepath.Join(s, "h", rel)
		os.Remove(p)
		mk(p)
	}
	for name, c := range map[string]struct {
		make func(suite string)
		want string
	}{
		"task toml fifo": {func(s string) { fifo(filepath.Join(s, "a.toml")) }, "a.toml: not a regular file"},
		"prompt_file fifo": {func(s string) {
			write(filepath.Join(s, "a.toml"), "prompt_file = \"p.md\"\n")
			fifo(filepath.Join(s, "p.md"))
		}, "p.md: not a regular file"},
		"prompt.md fifo": {func(s string) { os.Mkdir(filepath.Join(s, "f"), 0o755); fifo(filepath.Join(s, "f", "prompt.md")) }, "prompt.md: not a regular file"},
		"check.sh zero": {func(s string) {
			os.Mkdir(filepath.Join(s, "f"), 0o755)
			write(filepath.Join(s, "f", "prompt.md"), "x")
			zero(filepath.Join(s, "f", "check.sh"))
		}, "check.sh: not a regular file"},
		"instruction fifo": {func(s string) { inHarbor(s, "instruction.md", fifo) }, "instruction.md: not a regular file"},
		// A link out of a Harbor task is refused before what it leads to is looked at.
		"instruction zero": {func(s string) { inHarbor(s, "instruction.md", zero) }, "instruction.md: a symbolic link out of the task's directory (to /dev/zero)"},
		"harbor toml fifo": {func(s string) { inHarbor(s, "task.toml", fifo) }, "task.toml: not a regular file"},
		"dockerfile fifo":  {func(s string) { inHarbor(s, filepath.Join("environment", "Dockerfile"), fifo) }, "Dockerfile: not a regular file"},
		"instruction too big": {func(s string) {
			harbor(filepath.Join(s, "h"))
			write(filepath.Join(s, "h", "instruction.md"), strings.Repeat("x", 16<<20+1))
		}, "instruction.md: more than 16777216 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			suite := t.TempDir()
			c.make(suite)
			done := make(chan error, 1)
			go func() { _, err := bench.LoadTasks(suite); done <- err }()
			select {
			case err := <-done:
				require.ErrorContains(t, err, c.want)
				require.NotContains(t, err.Error(), "\n")
			case <-time.After(10 * time.Second):
				t.Fatal("LoadTasks hung")
			}
		})
	}
}
