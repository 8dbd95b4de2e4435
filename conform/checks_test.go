package conform

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/mockmodel"
)

// TestCheckUsage: usage passes only when its events are the scripted
// model's calls, whole, and sum to result.usage; over ACP absent usage
// passes with a note, over the CLI it fails.
func TestCheckUsage(t *testing.T) {
	multi, err := mockmodel.Builtin("multi") // three calls of 120 in, 25 out
	require.NoError(t, err)
	u := func(in, out int64) *event.Usage { return &event.Usage{InputTokens: in, OutputTokens: out} }
	res := func(in, out int64) *event.Result {
		return &event.Result{Status: event.ResultSuccess, Usage: event.Usage{InputTokens: in, OutputTokens: out}}
	}
	for _, tc := range []struct {
		name     string
		protocol string
		evs      []event.Body
		status   string
		detail   string
	}{
		{"per-call", CLI, []event.Body{u(120, 25), u(120, 25), u(120, 25), res(360, 75)}, Pass, ""},
		{"per-turn", CLI, []event.Body{u(240, 50), u(120, 25), res(360, 75)}, Pass, ""},
		{"cache-read-counts-as-input", CLI, []event.Body{&event.Usage{InputTokens: 300, CacheReadTokens: 60, OutputTokens: 75},
			&event.Result{Status: event.ResultSuccess, Usage: event.Usage{InputTokens: 300, CacheReadTokens: 60, OutputTokens: 75}}}, Pass, ""},
		{"result-not-the-sum", CLI, []event.Body{u(360, 75), res(300, 75)}, Fail, "is not the sum"},
		{"mid-call-snapshot", CLI, []event.Body{u(120, 3), u(120, 25), u(120, 25), res(360, 53)}, Fail, "usage event 120 in/3 out, want 120/25"},
		{"a-call-missing", CLI, []event.Body{u(240, 50), res(240, 50)}, Fail, "cover 2 of the 3"},
		{"inflated", ACP, []event.Body{u(6000, 600), res(6000, 600)}, Fail, "want 360/75"},
		{"absent-over-acp", ACP, []event.Body{res(0, 0)}, Pass, "not reported over ACP"},
		{"absent-over-cli", CLI, []event.Body{res(0, 0)}, Fail, "cover 0 of the 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runOf("/w", tc.evs...)
			r.Protocol, r.Script = tc.protocol, multi
			st, detail := r.checkUsage()
			require.Equal(t, tc.status, st, detail)
			require.Contains(t, detail, tc.detail)
		})
	}
	errScript, err := mockmodel.Builtin("error")
	require.NoError(t, err)
	r := runOf("/w", u(120, 25), res(120, 25))
	r.Protocol, r.Script = CLI, errScript
	st, detail := r.checkUsage()
	require.Equal(t, Fail, st, "the model served no usage: none may be reported")
	require.Contains(t, detail, "served none")

	// A stalled call (hang) sent its input as it began: an agent stopped
	// mid-call may report that, with no output, and nothing else.
	hang, err := mockmodel.Builtin("hang")
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		evs    []event.Body
		status string
	}{
		{"none", []event.Body{res(0, 0)}, Pass},
		{"its-input", []event.Body{u(120, 0), res(120, 0)}, Pass},
		{"with-output", []event.Body{u(120, 25), res(120, 25)}, Fail},
		{"more", []event.Body{u(240, 0), res(240, 0)}, Fail},
	} {
		t.Run("stalled-"+tc.name, func(t *testing.T) {
			r := runOf("/w", tc.evs...)
			r.Protocol, r.Script = CLI, hang
			st, detail := r.checkUsage()
			require.Equal(t, tc.status, st, detail)
		})
	}
}

// TestCheckDiffs: a diff passes when git apply takes it on the files as
// they were and gives the files the run left, the whole work directory;
// a wrong or missing diff fails, and so does a file the run left,
// changed or removed that no diff shows (except where a shell command
// may have written it), and diff_skipped unknown except where
// KnownNoDiff says why.
func TestCheckDiffs(t *testing.T) {
	create := "diff --git a/out.txt b/out.txt\nnew file mode 100644\n--- /dev/null\n+++ b/out.txt\n@@ -0,0 +1 @@\n+hello\n"
	wrong := "diff --git a/out.txt b/out.txt\nnew file mode 100644\n--- /dev/null\n+++ b/out.txt\n@@ -0,0 +1 @@\n+bye\n"
	out := map[string]string{"out.txt": "hello\n"}
	notes := map[string]string{"notes.md": "n\n"}
	for _, tc := range []struct {
		name, agent string
		end         event.ToolEnd
		before      map[string]string // the work directory before the run
		left        map[string]string // … and after it (nil: out)
		shell       bool              // the run also made a shell call
		status      string
		detail      string
	}{
		{name: "replays", agent: "claude", end: event.ToolEnd{Diff: create}, status: Pass},
		{name: "replays-beside-a-file-before", agent: "claude", end: event.ToolEnd{Diff: create}, before: notes,
			left: map[string]string{"notes.md": "n\n", "out.txt": "hello\n"}, status: Pass},
		{name: "wrong-content", agent: "claude", end: event.ToolEnd{Diff: wrong}, status: Fail, detail: "out.txt after the diffs is not the file the run left"},
		{name: "no-diff", agent: "claude", status: Fail, detail: "has no diff"},
		{name: "skipped", agent: "claude", end: event.ToolEnd{DiffSkipped: event.DiffSkippedUnknown}, status: Fail, detail: "never skipped"},
		{name: "skipped-known", agent: "codex", end: event.ToolEnd{DiffSkipped: event.DiffSkippedUnknown}, status: Pass, detail: "diff_skipped unknown (Codex applies"},
		{name: "a-file-no-diff-made", agent: "claude", end: event.ToolEnd{Diff: create},
			left: map[string]string{"out.txt": "hello\n", "extra.txt": "sneaky\n"}, status: Fail, detail: "extra.txt: the run left it, the diffs do not make it"},
		{name: "a-file-no-diff-made-in-a-directory", agent: "claude", end: event.ToolEnd{Diff: create},
			left: map[string]string{"out.txt": "hello\n", "sub/extra.txt": "sneaky\n"}, status: Fail, detail: "sub/extra.txt: the run left it"},
		{name: "a-file-before-removed", agent: "claude", end: event.ToolEnd{Diff: create}, before: notes,
			status: Fail, detail: "notes.md: the run removed it, the diffs did not"},
		{name: "a-file-before-changed", agent: "claude", end: event.ToolEnd{Diff: create}, before: notes,
			left: map[string]string{"notes.md": "tampered\n", "out.txt": "hello\n"}, status: Fail, detail: "notes.md after the diffs is not the file the run left"},
		{name: "the-file-made-then-removed", agent: "claude", end: event.ToolEnd{Diff: create},
			left: map[string]string{}, status: Fail, detail: "out.txt: the run removed it, the diffs did not"},
		{name: "absolute-header", agent: "claude", end: event.ToolEnd{Diff: "--- /dev/null\n+++ /elsewhere/out.txt\n@@ -0,0 +1 @@\n+hello\n"},
			status: Fail, detail: "/elsewhere/out.txt: diff headers must be relative to the run's cwd"},
		{name: "a-file-a-shell-command-made", agent: "claude", end: event.ToolEnd{Diff: create}, shell: true,
			left: map[string]string{"out.txt": "hello\n", "shell.txt": "from the shell\n"}, status: Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			work := filepath.Join(dir, "work")
			left := tc.left
			if left == nil {
				left = out
			}
			writeFiles(t, work, left)
			end := tc.end
			end.CallID, end.Name, end.Kind, end.Status, end.Paths = "c1", "Write", event.KindWrite, event.StatusOK, []string{"out.txt"}
			evs := []event.Body{&end}
			if tc.shell {
				evs = append(evs, &event.ToolEnd{CallID: "c2", Name: "Bash", Kind: event.KindShell, Status: event.StatusOK})
			}
			r := runOf(work, evs...)
			r.Dir, r.Agent, r.Protocol = dir, tc.agent, CLI
			st, detail := r.checkDiffs(true, tc.before)
			require.Equal(t, tc.status, st, detail)
			require.Contains(t, detail, tc.detail)
		})
	}
	st, _ := runOf(t.TempDir(), &event.ToolEnd{Kind: event.KindShell}).checkDiffs(false, nil)
	require.Equal(t, NA, st, "no file tool, none expected")
	st, _ = runOf(t.TempDir()).checkDiffs(true, nil)
	require.Equal(t, Fail, st, "an edit scenario without a file tool")
}

// TestCheckAnswer: the answer holds when result.text is the script's and
// the work directory holds exactly the files the scenario had and its
// tools write: a file more (wherever, whatever it is), one changed or one
// missing fails. Before, only the files the scenario writes were read,
// and a CLI that wrote a file no tool call reported passed.
func TestCheckAnswer(t *testing.T) {
	w := want{text: "DONE", files: map[string]string{"out.txt": "hello\n"}}
	before := map[string]string{"notes.md": "n\n"}
	for _, tc := range []struct {
		name   string
		left   map[string]string
		link   bool // the run also left a symlink, extra.lnk
		status string
		detail string
	}{
		{name: "exact", left: map[string]string{"notes.md": "n\n", "out.txt": "hello\n"}, status: Pass},
		{name: "a-file-more", left: map[string]string{"notes.md": "n\n", "out.txt": "hello\n", "extra.txt": "sneaky\n"},
			status: Fail, detail: `extra.txt: the run left "sneaky\n", which no tool of the scenario writes`},
		{name: "a-file-more-in-a-directory", left: map[string]string{"notes.md": "n\n", "out.txt": "hello\n", "a/b/extra.txt": ""},
			status: Fail, detail: `a/b/extra.txt: the run left ""`},
		{name: "a-symlink-more", left: map[string]string{"notes.md": "n\n", "out.txt": "hello\n"}, link: true,
			status: Fail, detail: `extra.lnk: the run left a symlink to "out.txt"`},
		{name: "written-wrong", left: map[string]string{"notes.md": "n\n", "out.txt": "hello\ntampered\n"},
			status: Fail, detail: `out.txt holds "hello\ntampered\n", want "hello\n"`},
		{name: "a-file-before-changed", left: map[string]string{"notes.md": "tampered\n", "out.txt": "hello\n"},
			status: Fail, detail: `notes.md holds "tampered\n", want "n\n"`},
		{name: "not-written", left: map[string]string{"notes.md": "n\n"}, status: Fail, detail: "out.txt: the run did not leave it"},
		{name: "a-file-before-removed", left: map[string]string{"out.txt": "hello\n"}, status: Fail, detail: "notes.md: the run did not leave it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			writeFiles(t, work, tc.left)
			require.NoError(t, os.Mkdir(filepath.Join(work, "empty"), 0o755)) // a directory is no file
			if tc.link {
				require.NoError(t, os.Symlink("out.txt", filepath.Join(work, "extra.lnk")))
			}
			r := runOf(work, &event.Result{Status: event.ResultSuccess, Text: "DONE"})
			st, detail := r.checkAnswer(w, before)
			require.Equal(t, tc.status, st, detail)
			require.Contains(t, detail, tc.detail)
		})
	}
	r := runOf(t.TempDir(), &event.Result{Status: event.ResultSuccess, Text: "done"})
	st, detail := r.checkAnswer(w, nil)
	require.Equal(t, Fail, st)
	require.Equal(t, `result text "done", want "DONE"`, detail)
}

// writeFiles makes dir with files (path relative to dir: content).
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for p, text := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644))
	}
}

// TestCheckTools: a failed shell command must end "error" with its exit
// code where the agent reports one; "ok" passes only where
// KnownNoExitStatus says the agent cannot tell.
func TestCheckTools(t *testing.T) {
	two, three := 2, 3
	want := []tool{{kinds: []event.Kind{event.KindShell}, status: event.StatusError, exit: 2}}
	for _, tc := range []struct {
		name, agent string
		end         event.ToolEnd
		status      string
		detail      string
	}{
		{"error-with-exit", "claude", event.ToolEnd{Status: event.StatusError, ExitCode: &two}, Pass, ""},
		{"error-no-exit", "claude", event.ToolEnd{Status: event.StatusError}, Pass, ""},
		{"wrong-exit", "claude", event.ToolEnd{Status: event.StatusError, ExitCode: &three}, Fail, "exit_code 3, want 2"},
		{"ok", "claude", event.ToolEnd{Status: event.StatusOK}, Fail, "status ok, want error"},
		{"ok-known", "gemini", event.ToolEnd{Status: event.StatusOK}, Pass, "status ok (Gemini's"},
		{"wrong-kind", "claude", event.ToolEnd{Kind: event.KindRead, Status: event.StatusError}, Fail, "kind read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			end := tc.end
			end.Name = "sh"
			if end.Kind == "" {
				end.Kind = event.KindShell
			}
			r := runOf("/w", &end)
			r.Agent, r.Protocol = tc.agent, CLI
			st, detail := r.checkTools(want)
			require.Equal(t, tc.status, st, detail)
			require.Contains(t, detail, tc.detail)
		})
	}
	st, detail := runOf("/w").checkTools(want)
	require.Equal(t, Fail, st)
	require.Equal(t, "0 tool calls [], want 1", detail)
}

// TestCheckToolsHoldsASucceedingShellsExitCode: a shell command the
// script runs succeeds, so an exit code the call reports must be 0; a
// call "ok" with exit_code 1 is a stream that misread the command.
// Before, an exit code was held only where the scenario's command fails,
// and tool and multi passed such a call.
func TestCheckToolsHoldsASucceedingShellsExitCode(t *testing.T) {
	zero, one := 0, 1
	for _, tc := range []struct {
		name   string
		exit   *int
		status string
	}{
		{"no-exit-code", nil, Pass},
		{"exit-0", &zero, Pass},
		{"exit-1", &one, Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runOf("/w", &event.ToolEnd{Name: "Bash", Kind: event.KindShell, Status: event.StatusOK, ExitCode: tc.exit})
			r.Agent, r.Protocol = "claude", CLI
			st, detail := r.checkTools(shells(1)(r.Agent))
			require.Equal(t, tc.status, st, detail)
			if tc.status == Fail {
				require.Equal(t, "Bash: exit_code 1, want 0", detail)
			}
		})
	}
}

// TestCheckStatusOverloadedIsTheFatalError: the overloaded scenario ends
// on one fatal error of class overloaded, whatever HTTP status the agent
// gives it (Codex gives none). Before, an overloaded error anywhere
// passed: a run whose fatal error was misread as server_error, beside a
// non-fatal overloaded one (a retry's notice), held.
func TestCheckStatusOverloadedIsTheFatalError(t *testing.T) {
	sc, ok := lookup("overloaded")
	require.True(t, ok)
	overloaded := func(fatal bool, status int) *event.Error {
		return &event.Error{Code: event.ErrAgentError, Class: event.ClassOverloaded, Fatal: fatal, Status: status}
	}
	res := &event.Result{Status: event.ResultError}
	for _, tc := range []struct {
		name   string
		errs   []event.Body
		status string
		detail string
	}{
		{"fatal-529", []event.Body{overloaded(true, 529)}, Pass, ""},
		{"fatal-no-status", []event.Body{overloaded(true, 0)}, Pass, ""},
		{"fatal-misread", []event.Body{overloaded(false, 529), &event.Error{Code: event.ErrAgentError, Class: event.ClassServerError, Fatal: true}},
			Fail, `fatal error class "server_error", want overloaded`},
		{"no-fatal", []event.Body{overloaded(false, 529)}, Fail, "0 fatal errors, want one of class overloaded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runOf("/w", append(tc.errs, res)...)
			r.Agent, r.Protocol, r.Exit = "claude", CLI, 1
			st, detail := r.checkStatus(sc.want)
			require.Equal(t, tc.status, st, detail)
			require.Contains(t, detail, tc.detail)
		})
	}
	// The error scenario's status is still held: 500, or none where
	// KnownNoHTTPStatus says why.
	sc, ok = lookup("error")
	require.True(t, ok)
	for _, tc := range []struct {
		agent, protocol string
		http            int
		status, detail  string
	}{
		{"claude", CLI, 500, Pass, ""},
		{"claude", CLI, 502, Fail, "fatal error http_status 502, want 500"},
		{"claude", CLI, 0, Fail, "fatal error http_status 0, want 500"},
		{"opencode", ACP, 0, Pass, "no http_status (opencode acp"},
	} {
		r := runOf("/w", &event.Error{Code: event.ErrAgentError, Class: event.ClassServerError, Fatal: true, Status: tc.http}, res)
		r.Agent, r.Protocol, r.Exit = tc.agent, tc.protocol, 1
		st, detail := r.checkStatus(sc.want)
		require.Equal(t, tc.status, st, detail)
		require.Contains(t, detail, tc.detail)
	}
}
