package bench_test

import (
	"os"
	"path/filepath"
	"testing"

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
