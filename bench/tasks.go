package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/agentharness/harness/internal/regfile"
)

// A task suite is a directory; each entry is one task, named after it:
//
//   - NAME.toml: a TOML file with
//     prompt = "…"            (or prompt_file = "path", relative to the file)
//     tree = "path"           optional starting tree, relative to the file
//     check = "shell command" optional verifier
//   - NAME/: a folder with prompt.md (or prompt.txt), an optional tree/
//     directory (the starting tree), an optional check.sh (its text is
//     the verifier, run with sh -c in the run's tree), or a task.toml
//     with the keys above, relative to the folder, whose values win.
//
// Other files (README.md, …) and hidden entries are ignored. Tasks are
// sorted by name; two entries naming one task (NAME.toml and NAME/) are
// refused.

// taskFile is the TOML form of a task.
type taskFile struct {
	Prompt     string `toml:"prompt"`
	PromptFile string `toml:"prompt_file"`
	Tree       string `toml:"tree"`
	Check      string `toml:"check"`
}

// LoadTasks reads the task suite in dir. dir may also be one task: a
// Harbor task (harbor.go), or any directory holding an instruction.md or
// a task.toml (a task's own files, which a suite's directory does not
// hold), refused with its own reason when it cannot run. A suite may
// hold Harbor task folders next to its own.
func LoadTasks(dir string) ([]Task, error) {
	if isHarborTask(dir) {
		t, err := harborTask(dir)
		if err != nil {
			return nil, fmt.Errorf("bench: harbor task %s: %w", dir, err)
		}
		return []Task{t}, nil
	}
	if isTaskDir(dir) {
		// Read as a suite, its environment/ or tree/ would be a task.
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("bench: tasks: %w", err)
		}
		t, err := folderTask(abs)
		if err != nil {
			return nil, fmt.Errorf("bench: task %s: %w", dir, err)
		}
		return []Task{t}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("bench: tasks: %w", err)
	}
	var tasks []Task
	from := map[string]string{} // task name → the entry that gave it
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(dir, name)
		var t Task
		switch {
		case (e.IsDir() || e.Type()&os.ModeSymlink != 0 && isDir(p) == nil) && isHarborTask(p):
			if t, err = harborTask(p); err != nil {
				return nil, fmt.Errorf("bench: harbor task %s: %w", p, err)
			}
		case e.IsDir() || e.Type()&os.ModeSymlink != 0 && isDir(p) == nil:
			t, err = folderTask(p)
		case strings.HasSuffix(name, ".toml"):
			t, err = tomlTask(p, strings.TrimSuffix(name, ".toml"))
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("bench: task %s: %w", p, err)
		}
		// Runs are paired by task name: two tasks of one name would be
		// compared as one, their pairs overwriting each other.
		if first, ok := from[t.Name]; ok {
			return nil, fmt.Errorf("bench: tasks: %s and %s are both task %s: rename one", first, p, t.Name)
		}
		from[t.Name] = p
		tasks = append(tasks, t)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("bench: no task in %s (want NAME.toml files, NAME/ folders with a prompt.md, or Harbor tasks: instruction.md beside a task.toml with [verifier])", dir)
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].Name < tasks[j].Name })
	return tasks, nil
}

// maxTaskFile caps each file of a task that bench reads (its TOML, its
// prompt, its check, its Dockerfile): a prompt is at most 16 MiB.
const maxTaskFile = 16 << 20

// readTaskBytes reads a file of a task: a regular file of at most
// maxTaskFile bytes. A FIFO or a device in a suite, or named by one,
// would otherwise hang the bench or fill its memory.
func readTaskBytes(path string) ([]byte, error) {
	return regfile.ReadFile(path, maxTaskFile)
}

func readTaskFile(path string) (taskFile, error) {
	var tf taskFile
	b, err := readTaskBytes(path)
	if err != nil {
		return tf, err
	}
	dec := toml.NewDecoder(bytes.NewReader(b)).DisallowUnknownFields()
	if err := dec.Decode(&tf); err != nil {
		var sm *toml.StrictMissingError
		if errors.As(err, &sm) {
			return tf, fmt.Errorf("%s: unknown key (want prompt, prompt_file, tree, check): %s", filepath.Base(path), oneLine(sm.String()))
		}
		return tf, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return tf, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// resolve turns a task file's values into a Task, paths relative to base.
func (tf taskFile) resolve(name, base string) (Task, error) {
	t := Task{Name: name, Prompt: tf.Prompt, Check: tf.Check}
	if tf.Prompt != "" && tf.PromptFile != "" {
		return t, errors.New("give prompt or prompt_file, not both")
	}
	if tf.PromptFile != "" {
		b, err := readTaskBytes(rel(base, tf.PromptFile))
		if err != nil {
			return t, err
		}
		t.Prompt = string(b)
	}
	if tf.Tree != "" {
		t.Tree = rel(base, tf.Tree)
		if err := isDir(t.Tree); err != nil {
			return t, fmt.Errorf("tree: %w", err)
		}
	}
	return t, nil
}

func rel(base, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(base, p)
}

func tomlTask(path, name string) (Task, error) {
	tf, err := readTaskFile(path)
	if err != nil {
		return Task{}, err
	}
	t, err := tf.resolve(name, filepath.Dir(path))
	if err == nil && strings.TrimSpace(t.Prompt) == "" {
		err = errors.New("no prompt (set prompt or prompt_file)")
	}
	return t, err
}

// isTaskDir reports whether dir holds an instruction.md or a task.toml
// (of any type: one that is not a regular file is refused as a task's).
func isTaskDir(dir string) bool {
	for _, f := range []string{"instruction.md", "task.toml"} {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// folderTask reads a task folder of bench's own format, or says why a
// Harbor task (an instruction.md, or a task.toml with [verifier]) that
// isHarborTask did not take cannot run.
func folderTask(dir string) (Task, error) {
	var tf taskFile
	_, statErr := os.Stat(filepath.Join(dir, "instruction.md"))
	instruction := statErr == nil
	m, err := readTOML(filepath.Join(dir, "task.toml"))
	switch {
	case instruction && err != nil && !errors.Is(err, fs.ErrNotExist):
		return Task{}, fmt.Errorf("a Harbor task (instruction.md) whose %w", err)
	case instruction && err == nil:
		return Task{}, errors.New("a Harbor task (instruction.md) whose task.toml has no [verifier] table")
	case err == nil && m["verifier"] != nil:
		return Task{}, errors.New("a Harbor task (a task.toml with [verifier]) with no instruction.md (the prompt)")
	}
	if _, err := os.Stat(filepath.Join(dir, "task.toml")); err == nil {
		if tf, err = readTaskFile(filepath.Join(dir, "task.toml")); err != nil {
			return Task{}, err
		}
	}
	if tf.Prompt == "" && tf.PromptFile == "" {
		for _, f := range []string{"prompt.md", "prompt.txt"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				tf.PromptFile = f
				break
			}
		}
	}
	if tf.Tree == "" && isDir(filepath.Join(dir, "tree")) == nil {
		tf.Tree = "tree"
	}
	if tf.Check == "" {
		b, err := readTaskBytes(filepath.Join(dir, "check.sh"))
		switch {
		case err == nil:
			tf.Check = string(b)
		case !errors.Is(err, fs.ErrNotExist):
			return Task{}, err
		}
	}
	t, err := tf.resolve(filepath.Base(dir), dir)
	switch {
	case err == nil && strings.TrimSpace(t.Prompt) == "" && instruction:
		err = errors.New("a Harbor task (instruction.md) with no task.toml")
	case err == nil && strings.TrimSpace(t.Prompt) == "":
		err = errors.New("no prompt (want prompt.md, prompt.txt or a task.toml with prompt)")
	}
	return t, err
}
