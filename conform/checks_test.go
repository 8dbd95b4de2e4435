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
}

// TestCheckDiffs: a diff passes when git apply takes it on the files as
// they were and gives the file the run left; a wrong or missing diff
// fails, except diff_skipped unknown where KnownNoDiff says why.
func TestCheckDiffs(t *testing.T) {
	create := "diff --git a/out.txt b/out.txt\nnew file mode 100644\n--- /dev/null\n+++ b/out.txt\n@@ -0,0 +1 @@\n+hello\n"
	wrong := "diff --git a/out.txt b/out.txt\nnew file mode 100644\n--- /dev/null\n+++ b/out.txt\n@@ -0,0 +1 @@\n+bye\n"
	for _, tc := range []struct {
		name, agent string
		end         event.ToolEnd
		status      string
		detail      string
	}{
		{"replays", "claude", event.ToolEnd{Diff: create}, Pass, ""},
		{"wrong-content", "claude", event.ToolEnd{Diff: wrong}, Fail, "is not the file the run left"},
		{"no-diff", "claude", event.ToolEnd{}, Fail, "has no diff"},
		{"skipped", "claude", event.ToolEnd{DiffSkipped: event.DiffSkippedUnknown}, Fail, "never skipped"},
		{"skipped-known", "codex", event.ToolEnd{DiffSkipped: event.DiffSkippedUnknown}, Pass, "diff_skipped unknown (Codex applies"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			work := filepath.Join(dir, "work")
			require.NoError(t, os.MkdirAll(work, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(work, "out.txt"), []byte("hello\n"), 0o644))
			end := tc.end
			end.CallID, end.Name, end.Kind, end.Status, end.Paths = "c1", "Write", event.KindWrite, event.StatusOK, []string{"out.txt"}
			r := runOf(work, &end)
			r.Dir, r.Agent, r.Protocol = dir, tc.agent, CLI
			st, detail := r.checkDiffs(true, nil)
			require.Equal(t, tc.status, st, detail)
			require.Contains(t, detail, tc.detail)
		})
	}
	st, _ := runOf(t.TempDir(), &event.ToolEnd{Kind: event.KindShell}).checkDiffs(false, nil)
	require.Equal(t, NA, st, "no file tool, none expected")
	st, _ = runOf(t.TempDir()).checkDiffs(true, nil)
	require.Equal(t, Fail, st, "an edit scenario without a file tool")
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
