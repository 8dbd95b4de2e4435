package conform

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/mockmodel"
)

// scenario is one script for the model and what every agent must make
// of it, over either protocol.
type scenario struct {
	name string
	// builtin names a mockmodel scenario; else script writes one.
	builtin string
	script  func(agent, workdir string) (string, error)
	before  map[string]string // the workdir's files before the run
	// idle is --idle-timeout by protocol, where the scenario needs its own.
	idle map[string]string
	want want
}

// want is what a scenario's run must show.
type want struct {
	exit   int
	status string // result.status
	fatal  string // exactly one fatal error, of this class
	http   int    // … with this HTTP status (0: whatever status it has, or none)
	code   string // some error with this code
	text   string // result.text
	// files are what the run's tools write: with before's, every file
	// the work directory holds after the run.
	files map[string]string
	tools func(agent string) []tool
	// edits: the run changes files with file tools, whose diffs must replay.
	edits bool
}

// tool is one expected tool call.
type tool struct {
	kinds  []event.Kind // any of these
	status string
	exit   int    // when the call reports an exit code, this one (0: the command succeeds)
	path   string // a path of the call ends with this
}

func shells(n int) func(string) []tool {
	return func(string) []tool {
		var ts []tool
		for range n {
			ts = append(ts, tool{kinds: []event.Kind{event.KindShell}, status: event.StatusOK})
		}
		return ts
	}
}

// Texts and files of the scenarios conform writes itself.
const (
	// ShellFailureAnswer ends the shell-failure scenario.
	ShellFailureAnswer = "DONE: the command failed"
	// ShellFailureCommand fails with exit status 1 and says why. Not ls
	// or cat: codex-acp classifies a command by what it does (ls is a
	// search, cat a read); not test or grep: Claude Code takes their
	// status 1 for an answer, not a failure.
	ShellFailureCommand = "mkdir missing/dir"
	shellFailureExit    = 1

	notesPath   = "notes.md"
	notesBefore = "# Notes\n\nalpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\n"
	notesAfter  = "# Notes\n\nalpha\nbeta\ngamma\nDELTA\nepsilon\nzeta\neta\ntheta\n"
	notesOld    = "gamma\ndelta\nepsilon\n"
	notesNew    = "gamma\nDELTA\nepsilon\n"
)

var scenarios = []scenario{
	{name: "text", builtin: "text", want: want{status: event.ResultSuccess, text: mockmodel.TextAnswer, tools: shells(0)}},
	{name: "tool", builtin: "tool", want: want{status: event.ResultSuccess, text: mockmodel.ToolAnswer,
		files: map[string]string{"out.txt": "hello-from-tool\n"}, tools: shells(1)}},
	{name: "shell-failure", script: shellFailureScript, want: want{status: event.ResultSuccess, text: ShellFailureAnswer,
		tools: func(string) []tool {
			return []tool{{kinds: []event.Kind{event.KindShell}, status: event.StatusError, exit: shellFailureExit}}
		}}},
	{name: "edit-new", builtin: "edit", want: want{status: event.ResultSuccess, text: mockmodel.EditAnswer,
		files: map[string]string{mockmodel.EditPath: mockmodel.EditContent}, edits: true,
		tools: func(string) []tool {
			return []tool{{kinds: []event.Kind{event.KindWrite, event.KindEdit}, status: event.StatusOK, path: mockmodel.EditPath}}
		}}},
	{name: "edit-existing", script: editExistingScript, before: map[string]string{notesPath: notesBefore},
		want: want{status: event.ResultSuccess, text: mockmodel.EditAnswer, files: map[string]string{notesPath: notesAfter}, edits: true,
			tools: func(agent string) []tool {
				edit := tool{kinds: []event.Kind{event.KindEdit}, status: event.StatusOK, path: notesPath}
				if readsBeforeEdit(agent) {
					return []tool{{kinds: []event.Kind{event.KindRead}, status: event.StatusOK}, edit}
				}
				return []tool{edit}
			}}},
	// A file written, then changed by the next call right after (Gemini
	// prints its write's result ~25 ms after writing): each diff must hold.
	{name: "edit-after-write", script: editAfterWriteScript,
		want: want{status: event.ResultSuccess, text: mockmodel.EditAnswer, files: map[string]string{notesPath: notesAfter}, edits: true,
			tools: func(string) []tool {
				return []tool{
					{kinds: []event.Kind{event.KindWrite, event.KindEdit}, status: event.StatusOK, path: notesPath},
					{kinds: []event.Kind{event.KindEdit}, status: event.StatusOK, path: notesPath},
				}
			}}},
	{name: "multi", builtin: "multi", want: want{status: event.ResultSuccess, text: mockmodel.MultiAnswer,
		files: map[string]string{"first.txt": "first\n", "second.txt": "second\n", "out.txt": "first\nsecond\n"}, tools: shells(3)}},
	// The scripted model answers HTTP 500: one fatal server_error with
	// the status, on every agent (Codex's "high demand" text is its
	// fixed wording of a 500), and no answer.
	{name: "error", builtin: "error", want: want{exit: 1, status: event.ResultError, fatal: event.ClassServerError, http: 500, tools: shells(0)}},
	{name: "overloaded", builtin: "overloaded", want: want{exit: 1, status: event.ResultError, fatal: event.ClassOverloaded, tools: shells(0)}},
	// The model stops mid-answer: the idle budget ends the run, and an
	// answer cut off mid-sentence is not the answer.
	{name: "hang", builtin: "hang", idle: map[string]string{CLI: "3s", ACP: "20s"},
		want: want{exit: 124, status: event.ResultTimeout, code: event.ErrIdleTimeout, tools: shells(0)}},
}

// Scenarios are the names of the scenarios, in report order.
func Scenarios() []string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.name
	}
	return names
}

func lookup(name string) (scenario, bool) {
	for _, s := range scenarios {
		if s.name == name {
			return s, true
		}
	}
	return scenario{}, false
}

// flags are the run flags the scenario adds for protocol.
func (s scenario) flags(protocol string) []string {
	if d, ok := s.idle[protocol]; ok {
		return []string{"--idle-timeout", d}
	}
	return nil
}

// prepare makes workdir with the scenario's files, writes its script
// into dir when it is not a built-in, and returns the script and the
// --mock argument.
func (s scenario) prepare(agent, workdir, dir string) (*mockmodel.Scenario, string, error) {
	if err := os.MkdirAll(workdir, 0o755); err != nil {
		return nil, "", fmt.Errorf("conform: %w", err)
	}
	for p, text := range s.before {
		if err := os.WriteFile(filepath.Join(workdir, p), []byte(text), 0o644); err != nil {
			return nil, "", fmt.Errorf("conform: %w", err)
		}
	}
	if s.builtin != "" {
		sc, err := mockmodel.Builtin(s.builtin)
		return sc, s.builtin, err
	}
	text, err := s.script(agent, workdir)
	if err != nil {
		return nil, "", err
	}
	sc, err := mockmodel.ParseScenario([]byte(text))
	if err != nil {
		return nil, "", err
	}
	file := filepath.Join(dir, s.name+".toml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		return nil, "", fmt.Errorf("conform: %w", err)
	}
	return sc, file, nil
}

// turn is one [[turn]] of a script: a line of text, then tool, with the
// built-in scenarios' usage.
func turn(text, tool string) string {
	s := fmt.Sprintf("[[turn]]\ntext = [%s]\nusage = { input = %d, output = %d }\n", strconv.Quote(text),
		mockmodel.DefaultUsage.InputTokens, mockmodel.DefaultUsage.OutputTokens)
	if tool != "" {
		s += "[[turn.tool]]\n" + tool + "\n"
	}
	return s
}

func shellFailureScript(string, string) (string, error) {
	return "name = \"shell-failure\"\n" + turn("Checking the file.", `kind = "shell"`+"\ncommand = "+strconv.Quote(ShellFailureCommand)) +
		turn(ShellFailureAnswer, ""), nil
}

// readsBeforeEdit: the agent refuses to edit a file it has not read.
func readsBeforeEdit(agent string) bool { return agent == "claude" || agent == "opencode" }

// editExistingScript changes delta to DELTA in the middle of notes.md
// with the agent's own edit tool (after reading the file where the agent
// refuses to edit a file it has not read): the diff must name the file's
// real lines, not the edit's strings at line 1.
func editExistingScript(agent, workdir string) (string, error) {
	q := strconv.Quote
	path := filepath.Join(workdir, notesPath)
	var read string
	switch agent {
	case "claude":
		read = `kind = "Read"` + "\nargs = { file_path = " + q(path) + " }"
	case "opencode":
		read = `kind = "read"` + "\nargs = { filePath = " + q(path) + " }"
	}
	return withEdit("edit-existing", "no edit tool", agent, path, read)
}

// editAfterWriteScript creates notes.md with the agent's own write tool,
// then changes delta to DELTA in it with its edit tool.
func editAfterWriteScript(agent, workdir string) (string, error) {
	q := strconv.Quote
	path := filepath.Join(workdir, notesPath)
	var write string
	switch agent {
	case "claude":
		write = `kind = "Write"` + "\nargs = { file_path = " + q(path) + ", content = " + q(notesBefore) + " }"
	case "opencode":
		write = `kind = "write"` + "\npath = " + q(path) + "\ncontent = " + q(notesBefore)
	case "gemini":
		write = `kind = "write_file"` + "\nargs = { file_path = " + q(path) + ", content = " + q(notesBefore) + " }"
	case "codex":
		write = applyPatch("*** Begin Patch\n*** Add File: " + notesPath + "\n+" +
			strings.ReplaceAll(strings.TrimSuffix(notesBefore, "\n"), "\n", "\n+") + "\n*** End Patch")
	}
	return withEdit("edit-after-write", "no write and edit tools", agent, path, write)
}

// withEdit is the edit script named name that makes the call first (if
// not empty), then the agent's edit of path; missing says what is not
// known for an agent without an edit tool.
func withEdit(name, missing, agent, path, first string) (string, error) {
	edit, ok := editTool(agent, path)
	if !ok {
		return "", fmt.Errorf("conform: %s: %s known for %s", name, missing, agent)
	}
	if first == "" {
		return editScript(name, []string{edit}), nil
	}
	return editScript(name, []string{first, edit}), nil
}

// editTool is the agent's own tool call that changes delta to DELTA in
// the notes file at path; ok is false for an agent whose edit tool is not
// known.
func editTool(agent, path string) (string, bool) {
	q := strconv.Quote
	switch agent {
	case "claude":
		return `kind = "Edit"` + "\nargs = { file_path = " + q(path) + ", old_string = " + q(notesOld) + ", new_string = " + q(notesNew) + " }", true
	case "opencode":
		return `kind = "edit"` + "\nargs = { filePath = " + q(path) + ", oldString = " + q(notesOld) + ", newString = " + q(notesNew) + " }", true
	case "gemini":
		return `kind = "replace"` + "\nargs = { file_path = " + q(path) + ", instruction = \"Change delta to DELTA.\", old_string = " +
			q(notesOld) + ", new_string = " + q(notesNew) + " }", true
	case "codex":
		return applyPatch("*** Begin Patch\n*** Update File: " + notesPath + "\n@@\n gamma\n-delta\n+DELTA\n epsilon\n*** End Patch"), true
	}
	return "", false
}

// applyPatch is Codex's apply_patch call of patch.
func applyPatch(patch string) string {
	return `kind = "apply_patch"` + "\ncontent = " + strconv.Quote(patch) + "\nargs = { input = " + strconv.Quote(patch) + " }"
}

// editScript is the script named name that makes each tool call in turn,
// then gives the edit scenarios' answer.
func editScript(name string, tools []string) string {
	var b strings.Builder
	b.WriteString("name = " + strconv.Quote(name) + "\n")
	for _, t := range tools {
		b.WriteString(turn("Working on it.", t))
	}
	b.WriteString(turn(mockmodel.EditAnswer, ""))
	return b.String()
}
