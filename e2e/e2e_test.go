// Package e2e runs the real agent CLIs (installed by 'make agents') through
// the built harness binary against the scripted model on 127.0.0.1, and
// holds what comes out to the stream invariants and to each scenario's
// facts: the tool ran, kinds and statuses, exact token totals and per-call
// usage, diffs that git apply takes on the files as they were, final text,
// timeouts and error classes, and no process of the run left alive.
//
// Nothing here is skipped: a missing CLI fails the suite and says why.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mockmodel"
)

// agents are the CLIs that install from npm and run on the scripted model.
// Cursor cannot be installed here; its adapter is held to fixtures.
var agents = []string{"claude", "codex", "opencode", "gemini"}

var (
	harnessBin string
	agentsDir  string
)

func TestMain(m *testing.M) {
	os.Exit(setup(m))
}

func setup(m *testing.M) int {
	root, err := filepath.Abs("..")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	agentsDir = os.Getenv("HARNESS_AGENTS_DIR")
	if agentsDir == "" {
		agentsDir = filepath.Join(root, ".agents")
	}
	var missing []string
	for _, a := range agents {
		if _, err := os.Stat(filepath.Join(agentsDir, "node_modules", ".bin", a)); err != nil {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: the real agent CLIs %v are not installed in %s: run 'make agents' (make test does)\n", missing, agentsDir)
		return 1
	}
	dir, err := os.MkdirTemp("", "harness-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	harnessBin = filepath.Join(dir, "harness")
	build := exec.Command("go", "build", "-o", harnessBin, "./cmd/harness")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building harness: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// outcome is one harness run.
type outcome struct {
	agent   string
	code    int
	stdout  []byte
	stderr  string
	events  []event.Event
	result  *event.Result
	workdir string
}

// harness runs the built binary with a private config and session dir.
func harness(t *testing.T, workdir string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, harnessBin, args...)
	cmd.Dir = workdir
	cmd.Env = harnessEnv(t, "NO_COLOR=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	o := outcome{stdout: out.Bytes(), stderr: errb.String(), workdir: workdir}
	if ee, ok := err.(*exec.ExitError); ok {
		o.code = ee.ExitCode()
	} else {
		require.NoError(t, err, "harness did not run: %s", errb.String())
	}
	adaptertest.CheckStream(t, o.stdout)
	o.events, err = event.ReadAll(bytes.NewReader(o.stdout))
	require.NoError(t, err)
	o.result = o.events[len(o.events)-1].Body.(*event.Result)
	requireNoSurvivor(t, workdir)
	return o
}

// harnessEnv is the environment of a harness command: the installed
// agents, a private config and session dir, and extra.
func harnessEnv(t *testing.T, extra ...string) []string {
	home := t.TempDir()
	return append(append(os.Environ(), "HARNESS_AGENTS_DIR="+agentsDir,
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_DATA_HOME="+filepath.Join(home, "data")), extra...)
}

// requireNoSurvivor fails if any process still has its working directory
// in the run's directory: the agent, its node wrapper, or a tool command it
// started in a session of its own.
func requireNoSurvivor(t *testing.T, workdir string) {
	t.Helper()
	for _, p := range harnesstest.Processes() {
		if p.Cwd == workdir || strings.HasPrefix(p.Cwd, workdir+"/") {
			t.Errorf("process %d (%s) of the run is still alive", p.PID, strings.Join(p.Args, " "))
		}
	}
}

func (o outcome) all(typ event.Type) []event.Body { return harnesstest.Bodies(o.events, typ) }

func (o outcome) toolEnds() []*event.ToolEnd {
	var out []*event.ToolEnd
	for _, b := range o.all(event.TypeToolEnd) {
		out = append(out, b.(*event.ToolEnd))
	}
	return out
}

func (o outcome) errorClasses() []string {
	var out []string
	for _, b := range o.all(event.TypeError) {
		out = append(out, b.(*event.Error).Class)
	}
	return out
}

func (o outcome) String() string {
	return fmt.Sprintf("exit %d\nstderr: %s\nstdout:\n%s", o.code, o.stderr, o.stdout)
}

// usage is the scripted model's fixed usage for n model calls.
func usage(n int) (in, out int64) {
	u := mockmodel.DefaultUsage
	return int64(n * u.InputTokens), int64(n * u.OutputTokens)
}

func requireUsage(t *testing.T, o outcome, calls int) {
	t.Helper()
	in, out := usage(calls)
	require.Equal(t, in, o.result.Usage.InputTokens+o.result.Usage.CacheReadTokens, "input tokens\n%s", o)
	require.Equal(t, out, o.result.Usage.OutputTokens, "output tokens\n%s", o)
}

// requireUsagePerCall holds the usage events to what the scripted model
// sent for each of its calls: every event is the final count of one model
// call, or of several consecutive ones where the agent reports usage per
// turn (Codex), never a snapshot taken mid-call; together they are every
// call of the script, and the result's totals are their sum.
func requireUsagePerCall(t *testing.T, o outcome, scenario string) {
	t.Helper()
	sc, err := mockmodel.Builtin(scenario)
	require.NoError(t, err)
	var sum event.Usage
	next := 0 // the first call of the script not yet accounted for
	for _, b := range o.all(event.TypeUsage) {
		u := *b.(*event.Usage)
		sum.Add(u)
		var want mockmodel.Usage
		for next < len(sc.Turns) && (int64(want.InputTokens) < u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens || want.InputTokens == 0) {
			want.InputTokens += sc.Turns[next].Usage.InputTokens
			want.OutputTokens += sc.Turns[next].Usage.OutputTokens
			next++
		}
		require.Equal(t, int64(want.InputTokens), u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens,
			"usage event %+v: input of model calls up to %d of the script\n%s", u, next, o)
		require.Equal(t, int64(want.OutputTokens), u.OutputTokens, "usage event %+v: output of model calls up to %d of the script\n%s", u, next, o)
	}
	require.Equal(t, len(sc.Turns), next, "the usage events cover %d of the script's %d model calls\n%s", next, len(sc.Turns), o)
	sum.CostUSD, sum.CostEstimated = 0, false
	tot := o.result.Usage
	tot.CostUSD, tot.CostEstimated = 0, false
	require.Equal(t, sum, tot, "result.usage is the sum of the usage events")
}

// requireDiffsApply holds every file tool's diff to the real files: git
// apply takes the diffs, in order, on the run's directory as it was before
// (before: relative path -> content; a file not listed did not exist), and
// the files come out as the run left them.
func requireDiffsApply(t *testing.T, o outcome, before map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for p, text := range before {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644))
	}
	touched := map[string]bool{}
	n := 0
	for _, e := range o.toolEnds() {
		if e.Kind != event.KindWrite && e.Kind != event.KindEdit && e.Kind != event.KindDelete {
			continue
		}
		n++
		if e.DiffSkipped != "" && o.agent == "codex" {
			// Codex applies its patch as it prints item.started, before the
			// harness can read the file: its content before is unknown.
			require.Equal(t, event.DiffSkippedUnknown, e.DiffSkipped, "%s", o)
			t.Logf("%s %s (%s): diff_skipped %s (Codex changed the file before the harness could read it)", e.Name, e.CallID, e.Kind, e.DiffSkipped)
			return
		}
		require.Empty(t, e.DiffSkipped, "a small text file's diff is never skipped\n%s", o)
		require.NotEmpty(t, e.Diff, "%s call %s has no diff\n%s", e.Name, e.CallID, o)
		ps, err := event.ParsePatch(e.Diff)
		require.NoError(t, err)
		for _, p := range ps {
			touched[p.From], touched[p.To] = true, true
		}
		cmd := exec.Command("git", "apply", "--verbose", "-")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(e.Diff)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git apply refused the diff of %s:\n%s\n%s", e.Name, e.Diff, out)
	}
	require.Positive(t, n, "no file tool call\n%s", o)
	delete(touched, "")
	for p := range touched {
		want, werr := os.ReadFile(filepath.Join(o.workdir, p))
		got, gerr := os.ReadFile(filepath.Join(dir, p))
		if os.IsNotExist(werr) {
			require.True(t, os.IsNotExist(gerr), "%s: the run removed it, the diffs did not", p)
			continue
		}
		require.NoError(t, werr, "%s (diff headers must be relative to the run's cwd)", p)
		require.NoError(t, gerr, p)
		require.Equal(t, string(want), string(got), "%s after the diffs is not the file the run left", p)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err, "the agent's tool should have written %s", path)
	return string(b)
}

// run starts agent on the scripted model playing scenario in a fresh
// directory, with small budgets.
func run(t *testing.T, agent, scenario string, extra ...string) outcome {
	t.Helper()
	return runIn(t, t.TempDir(), agent, scenario, extra...)
}

// runIn is run in a directory the test prepared.
func runIn(t *testing.T, workdir, agent, scenario string, extra ...string) outcome {
	t.Helper()
	args := append([]string{"run", "--agent", agent, "--mock", scenario, "--cwd", workdir,
		"-p", "Follow the script.", "--idle-timeout", "30s", "--timeout", "2m", "--kill-grace", "2s"}, extra...)
	o := harness(t, workdir, args...)
	o.agent = agent
	return o
}

func TestRealAgents(t *testing.T) {
	for _, agent := range agents {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			for _, scenario := range []string{"text", "tool", "edit"} {
				t.Run(scenario, func(t *testing.T) {
					o := run(t, agent, scenario)
					requireScenario(t, o, scenario, requireUsage)
					if scenario == "edit" {
						// The scenario starts from an empty directory: out.txt does not exist.
						requireDiffsApply(t, o, map[string]string{})
					}
				})
			}
			t.Run("edit-existing", func(t *testing.T) {
				// A change in the middle of a file that exists: the diff must
				// name its real lines, not the edit's strings at line 1.
				workdir := t.TempDir()
				path := filepath.Join(workdir, notesPath)
				require.NoError(t, os.WriteFile(path, []byte(notesBefore), 0o644))
				o := runIn(t, workdir, agent, editExistingScenario(t, agent, path))
				require.Equal(t, 0, o.code, "%s", o)
				require.Equal(t, notesAfter, readFile(t, path), "%s", o)
				require.Equal(t, mockmodel.EditAnswer, o.result.Text)
				requireDiffsApply(t, o, map[string]string{notesPath: notesBefore})
			})
			t.Run("edit-after-write", func(t *testing.T) {
				// A file written, then changed by the next call: the change
				// comes right after the write (Gemini prints its write's
				// result ~25 ms after writing), and each diff must hold.
				workdir := t.TempDir()
				path := filepath.Join(workdir, notesPath)
				o := runIn(t, workdir, agent, editAfterWriteScenario(t, agent, path))
				require.Equal(t, 0, o.code, "%s", o)
				require.Equal(t, notesAfter, readFile(t, path), "%s", o)
				require.Equal(t, mockmodel.EditAnswer, o.result.Text)
				require.Len(t, o.toolEnds(), 2, "%s", o)
				requireDiffsApply(t, o, map[string]string{})
			})
			t.Run("multi", func(t *testing.T) {
				o := run(t, agent, "multi")
				require.Equal(t, 0, o.code, "%s", o)
				require.Equal(t, "first\nsecond\n", readFile(t, filepath.Join(o.workdir, "out.txt")))
				ends := o.toolEnds()
				require.Len(t, ends, 3, "%s", o)
				for _, e := range ends {
					require.Equal(t, event.KindShell, e.Kind)
					require.Equal(t, event.StatusOK, e.Status)
				}
				require.Equal(t, mockmodel.MultiAnswer, o.result.Text)
				requireUsage(t, o, 3)
				requireUsagePerCall(t, o, "multi")
			})
			t.Run("hang", func(t *testing.T) {
				o := run(t, agent, "hang", "--idle-timeout", "3s")
				requireIdleTimeout(t, o, "an answer cut off mid-sentence is not the answer")
			})
			t.Run("error", func(t *testing.T) {
				o := run(t, agent, "error")
				require.Equal(t, 1, o.code, "%s", o)
				require.Equal(t, event.ResultError, o.result.Status)
				// The scripted model answers HTTP 500: the same shape on every
				// agent, one fatal error of class server_error with the status
				// (Codex's "high demand" text is its fixed wording of a 500).
				var fatal []*event.Error
				for _, b := range o.all(event.TypeError) {
					if e := b.(*event.Error); e.Fatal {
						fatal = append(fatal, e)
					}
				}
				require.Len(t, fatal, 1, "%s", o)
				require.Equal(t, event.ClassServerError, fatal[0].Class, "%s", o)
				require.Equal(t, 500, fatal[0].Status, "%s", o)
				require.Empty(t, o.result.Text, "the error's message is the error event's, not the answer")
			})
			t.Run("overloaded", func(t *testing.T) {
				o := run(t, agent, "overloaded")
				require.Equal(t, 1, o.code, "%s", o)
				require.Equal(t, event.ResultError, o.result.Status)
				require.Contains(t, o.errorClasses(), event.ClassOverloaded, "%s", o)
			})
			t.Run("timeout-mid-tool", func(t *testing.T) {
				// The tool never ends by itself and runs in a session of its
				// own (Codex, OpenCode and Gemini do that), out of reach of
				// a group kill. Once the tool's budget has passed, silence
				// ends the run: timed from the tool's start, not the
				// agent's, and before Codex's own 10 s command timeout.
				o := run(t, agent, midToolScenario(t), "--tool-timeout", "1s", "--idle-timeout", "6s")
				requireIdleTimeout(t, o, "what the agent said before its tool call is not an answer")
				// OpenCode reports a tool only once it completes; the others
				// announce it, and its end is the agent's own (Claude ends its
				// tool on SIGTERM) or the harness's.
				if agent != "opencode" {
					require.NotEmpty(t, o.all(event.TypeToolStart), "%s", o)
					require.NotEmpty(t, o.toolEnds(), "%s", o)
				}
			})
		})
	}
}

// requireScenario holds o to what the built-in scenario (text, tool or
// edit) has every agent do, over either protocol; usage checks the usage
// of the scenario's model calls.
func requireScenario(t *testing.T, o outcome, scenario string, usage func(*testing.T, outcome, int)) {
	t.Helper()
	require.Equal(t, 0, o.code, "%s", o)
	require.Equal(t, event.ResultSuccess, o.result.Status, "%s", o)
	switch scenario {
	case "text":
		require.Equal(t, mockmodel.TextAnswer, o.result.Text, "%s", o)
		usage(t, o, 1)
	case "tool":
		require.Equal(t, "hello-from-tool\n", readFile(t, filepath.Join(o.workdir, "out.txt")))
		ends := o.toolEnds()
		require.Len(t, ends, 1, "%s", o)
		require.Equal(t, event.KindShell, ends[0].Kind)
		require.Equal(t, event.StatusOK, ends[0].Status)
		require.Equal(t, mockmodel.ToolAnswer, o.result.Text)
		usage(t, o, 2)
	case "edit":
		require.Equal(t, mockmodel.EditContent, readFile(t, filepath.Join(o.workdir, mockmodel.EditPath)))
		ends := o.toolEnds()
		require.Len(t, ends, 1, "%s", o)
		require.Contains(t, []event.Kind{event.KindWrite, event.KindEdit}, ends[0].Kind)
		require.Equal(t, event.StatusOK, ends[0].Status)
		require.NotEmpty(t, ends[0].Paths, "%s", o)
		require.Contains(t, ends[0].Paths[0], mockmodel.EditPath)
		require.Equal(t, mockmodel.EditAnswer, o.result.Text)
		usage(t, o, 2)
	default:
		t.Fatalf("no checks for scenario %s", scenario)
	}
}

// requireIdleTimeout holds o to a run the idle budget ended: exit status
// 124, an idle_timeout error, and no answer (why says why not).
func requireIdleTimeout(t *testing.T, o outcome, why string) {
	t.Helper()
	require.Equal(t, 124, o.code, "%s", o)
	require.Equal(t, event.ResultTimeout, o.result.Status)
	var codes []string
	for _, b := range o.all(event.TypeError) {
		codes = append(codes, b.(*event.Error).Code)
	}
	require.Contains(t, codes, event.ErrIdleTimeout)
	require.Empty(t, o.result.Text, "%s\n%s", why, o)
}

// The file the edit-existing scenario changes, before and after.
const (
	notesPath   = "notes.md"
	notesBefore = "# Notes\n\nalpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\n"
	notesAfter  = "# Notes\n\nalpha\nbeta\ngamma\nDELTA\nepsilon\nzeta\neta\ntheta\n"
	notesOld    = "gamma\ndelta\nepsilon\n"
	notesNew    = "gamma\nDELTA\nepsilon\n"
)

// editExistingScenario writes the scenario that changes delta to DELTA in
// path with agent's own edit tool, after reading the file where the agent
// refuses to edit a file it has not read (Claude Code, OpenCode).
func editExistingScenario(t *testing.T, agent, path string) string {
	t.Helper()
	q := func(s string) string { return strconv.Quote(s) }
	var tools []string
	switch agent {
	case "claude":
		tools = []string{
			`kind = "Read"` + "\nargs = { file_path = " + q(path) + " }",
			`kind = "Edit"` + "\nargs = { file_path = " + q(path) + ", old_string = " + q(notesOld) + ", new_string = " + q(notesNew) + " }",
		}
	case "opencode":
		tools = []string{
			`kind = "read"` + "\nargs = { filePath = " + q(path) + " }",
			`kind = "edit"` + "\nargs = { filePath = " + q(path) + ", oldString = " + q(notesOld) + ", newString = " + q(notesNew) + " }",
		}
	case "gemini":
		tools = []string{`kind = "replace"` + "\nargs = { file_path = " + q(path) + ", instruction = \"Change delta to DELTA.\", old_string = " +
			q(notesOld) + ", new_string = " + q(notesNew) + " }"}
	case "codex":
		patch := "*** Begin Patch\n*** Update File: " + notesPath + "\n@@\n gamma\n-delta\n+DELTA\n epsilon\n*** End Patch"
		tools = []string{`kind = "apply_patch"` + "\ncontent = " + q(patch) + "\nargs = { input = " + q(patch) + " }"}
	default:
		t.Fatalf("no edit tool known for %s", agent)
	}
	var b strings.Builder
	b.WriteString("name = \"edit-existing\"\n")
	for _, tool := range tools {
		b.WriteString("[[turn]]\ntext = [\"Working on it.\"]\nusage = { input = 120, output = 25 }\n[[turn.tool]]\n" + tool + "\n")
	}
	b.WriteString("[[turn]]\ntext = [" + q(mockmodel.EditAnswer) + "]\nusage = { input = 120, output = 25 }\n")
	file := filepath.Join(t.TempDir(), "edit-existing.toml")
	require.NoError(t, os.WriteFile(file, []byte(b.String()), 0o644))
	return file
}

// editAfterWriteScenario writes the scenario that creates path holding
// notesBefore with agent's own write tool, then changes delta to DELTA in
// it with its edit tool.
func editAfterWriteScenario(t *testing.T, agent, path string) string {
	t.Helper()
	q := func(s string) string { return strconv.Quote(s) }
	var tools []string
	switch agent {
	case "claude":
		tools = []string{
			`kind = "Write"` + "\nargs = { file_path = " + q(path) + ", content = " + q(notesBefore) + " }",
			`kind = "Edit"` + "\nargs = { file_path = " + q(path) + ", old_string = " + q(notesOld) + ", new_string = " + q(notesNew) + " }",
		}
	case "opencode":
		tools = []string{
			`kind = "write"` + "\npath = " + q(path) + "\ncontent = " + q(notesBefore),
			`kind = "edit"` + "\nargs = { filePath = " + q(path) + ", oldString = " + q(notesOld) + ", newString = " + q(notesNew) + " }",
		}
	case "gemini":
		tools = []string{
			`kind = "write_file"` + "\nargs = { file_path = " + q(path) + ", content = " + q(notesBefore) + " }",
			`kind = "replace"` + "\nargs = { file_path = " + q(path) + ", instruction = \"Change delta to DELTA.\", old_string = " +
				q(notesOld) + ", new_string = " + q(notesNew) + " }",
		}
	case "codex":
		add := "*** Begin Patch\n*** Add File: " + notesPath + "\n+" + strings.ReplaceAll(strings.TrimSuffix(notesBefore, "\n"), "\n", "\n+") + "\n*** End Patch"
		update := "*** Begin Patch\n*** Update File: " + notesPath + "\n@@\n gamma\n-delta\n+DELTA\n epsilon\n*** End Patch"
		for _, patch := range []string{add, update} {
			tools = append(tools, `kind = "apply_patch"`+"\ncontent = "+q(patch)+"\nargs = { input = "+q(patch)+" }")
		}
	default:
		t.Fatalf("no write and edit tools known for %s", agent)
	}
	var b strings.Builder
	b.WriteString("name = \"edit-after-write\"\n")
	for _, tool := range tools {
		b.WriteString("[[turn]]\ntext = [\"Working on it.\"]\nusage = { input = 120, output = 25 }\n[[turn.tool]]\n" + tool + "\n")
	}
	b.WriteString("[[turn]]\ntext = [" + q(mockmodel.EditAnswer) + "]\nusage = { input = 120, output = 25 }\n")
	file := filepath.Join(t.TempDir(), "edit-after-write.toml")
	require.NoError(t, os.WriteFile(file, []byte(b.String()), 0o644))
	return file
}

// midToolScenario writes a scenario whose tool never finishes by itself.
// Claude's Bash refuses a leading "sleep N" with more after it, so the
// command is a timeout around a tail that never ends.
func midToolScenario(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "midtool.toml")
	require.NoError(t, os.WriteFile(path, []byte(`name = "midtool"
[[turn]]
text = ["Running", " it."]
usage = { input = 120, output = 25 }
[[turn.tool]]
kind = "shell"
command = "timeout 300 tail -f /dev/null; echo done > out.txt"
[[turn]]
text = ["never reached"]
usage = { input = 120, output = 25 }
`), 0o644))
	return path
}

// TestMockDemo is the README's first command, as a test: the text
// transcript of a real agent on the scripted model.
func TestMockDemoTranscript(t *testing.T) {
	t.Parallel()
	workdir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, harnessBin, "run", "--no-log", "--agent", "claude", "--mock", "tool", "-f", "text", "-p", "make out.txt")
	cmd.Dir = workdir
	cmd.Env = harnessEnv(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "✓ Bash [shell] ok")
	require.Contains(t, string(out), mockmodel.ToolAnswer)
	require.Contains(t, string(out), "— success")
	var probe json.RawMessage
	require.Error(t, json.Unmarshal(out, &probe), "text output is for people, not JSON")
}

// TestBenchRealAgents is the offline bench: every real CLI on the
// same task, each in its own tree, checked by a verifier.
func TestBenchRealAgents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, harnessBin, "bench", "--agents", strings.Join(agents, ","), "--mock", "tool",
		"-p", "Create out.txt with the shell.", "--check", "test -f out.txt", "--report", "json", "--no-progress",
		"--parallel", "2", "--idle-timeout", "30s", "--timeout", "2m")
	cmd.Dir = dir
	cmd.Env = harnessEnv(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "stderr: %s\nstdout: %s", stderr.String(), out)
	var rep struct {
		Runs []struct {
			Agent, Status, Log string
			Check              struct{ Passed bool }
		}
	}
	require.NoError(t, json.Unmarshal(out, &rep), "%s", out)
	require.Len(t, rep.Runs, len(agents))
	for _, r := range rep.Runs {
		require.Equal(t, event.ResultSuccess, r.Status, r.Agent)
		require.True(t, r.Check.Passed, r.Agent)
		require.FileExists(t, r.Log)
	}
	_, err = os.Stat(filepath.Join(dir, "out.txt"))
	require.True(t, os.IsNotExist(err), "the agents worked in their own trees, not in the source")
}

// TestMCPDelegation: real Claude Code, on the scripted model, is given
// 'harness mcp' as an MCP server and calls run_agent to delegate to real
// Codex (on a scripted model too); the delegated result comes back into
// Claude's stream.
func TestMCPDelegation(t *testing.T) {
	t.Parallel()
	caller, delegate := t.TempDir(), t.TempDir()
	scenario := filepath.Join(t.TempDir(), "delegate.toml")
	require.NoError(t, os.WriteFile(scenario, []byte(fmt.Sprintf(`name = "delegate"
[[turn]]
text = ["Delegating to codex."]
usage = { input = 120, output = 25 }
[[turn.tool]]
kind = "mcp__harness__run_agent"
args = { agent = "codex", prompt = "Create out.txt with the shell.", cwd = %q, wait = "turn" }
[[turn]]
text = ["Codex finished the job."]
usage = { input = 120, output = 25 }
`, delegate)), 0o644))
	mcpConfig, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"harness": map[string]any{
		"command": harnessBin, "args": []string{"mcp", "--mock", "tool", "--no-log", "--root", delegate},
		"env": map[string]string{"HARNESS_AGENTS_DIR": agentsDir, "XDG_CONFIG_HOME": t.TempDir()},
	}}})
	require.NoError(t, err)
	o := harness(t, caller, "run", "--agent", "claude", "--mock", scenario, "--cwd", caller, "--no-log",
		"-p", "Delegate the task.", "--idle-timeout", "60s", "--timeout", "3m", "--", "--mcp-config", string(mcpConfig))
	require.Equal(t, 0, o.code, "%s", o)
	ends := o.toolEnds()
	require.Len(t, ends, 1, "%s", o)
	require.Equal(t, "mcp__harness__run_agent", ends[0].Name)
	require.Equal(t, event.KindMCP, ends[0].Kind)
	require.Equal(t, event.StatusOK, ends[0].Status, "%s", o)
	require.Contains(t, ends[0].Output, mockmodel.ToolAnswer, "the delegated agent's answer reaches the caller")
	require.Equal(t, "Codex finished the job.", o.result.Text)
	require.Equal(t, "hello-from-tool\n", readFile(t, filepath.Join(delegate, "out.txt")))
	requireNoSurvivor(t, delegate)
}
