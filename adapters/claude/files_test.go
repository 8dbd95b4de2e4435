package claude

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

const initLine = `{"type":"system","subtype":"init","cwd":"/w","session_id":"s"}`

func useLine(id, name, input string) string {
	return `{"type":"assistant","message":{"id":"m_` + id + `","content":[{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":` + input + `}]}}`
}

func resultLine(id, toolUseResult string) string {
	l := `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"ok"}]}`
	if toolUseResult != "" {
		l += `,"tool_use_result":` + toolUseResult
	}
	return l + `}`
}

// diffs returns the diff (or the reason there is none) of every tool_end.
func diffs(t *testing.T, lines ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, te := range only[*event.ToolEnd](adaptertest.Bodies(newParser(), append([]string{initLine}, lines...)...)) {
		out[te.CallID] = te.Diff
		if te.DiffSkipped != "" {
			out[te.CallID] = "skipped: " + te.DiffSkipped
		}
	}
	return out
}

func TestDiffSources(t *testing.T) {
	t.Parallel()
	write := useLine("w", "Write", `{"file_path":"/w/a.txt","content":"one\ntwo\n"}`)
	created := resultLine("w", `{"type":"create","filePath":"/w/a.txt","content":"one\ntwo\n","structuredPatch":[],"originalFile":null}`)
	edit := useLine("e", "Edit", `{"file_path":"/w/a.txt","old_string":"two","new_string":"2"}`)
	t.Run("an-edit-of-a-file-the-stream-wrote", func(t *testing.T) {
		t.Parallel()
		got := diffs(t, write, created, edit, resultLine("e", ""))
		require.Equal(t, "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n", got["w"])
		require.Equal(t, "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n", got["e"])
	})
	t.Run("a-shell-command-between-forgets-the-file", func(t *testing.T) {
		t.Parallel()
		got := diffs(t, write, created, useLine("b", "Bash", `{"command":"sed -i s/two/xx/ a.txt"}`), resultLine("b", ""),
			edit, resultLine("e", ""))
		require.Equal(t, "skipped: "+event.DiffSkippedUnknown, got["e"])
	})
	t.Run("a-write-over-an-unknown-file-has-no-diff", func(t *testing.T) {
		t.Parallel()
		got := diffs(t, write, resultLine("w", ""))
		require.Equal(t, "skipped: "+event.DiffSkippedUnknown, got["w"])
	})
	t.Run("patch-where-the-strings-do-not-apply", func(t *testing.T) {
		t.Parallel()
		// Claude matched the straight quotes of old_string to the file's
		// curly ones: only its structuredPatch says what it did.
		got := diffs(t, useLine("q", "Edit", `{"file_path":"/w/q.txt","old_string":"say \"hi\"","new_string":"say \"yo\""}`),
			resultLine("q", `{"originalFile":"a\nsay “hi”\nb\n","structuredPatch":[{"oldStart":1,"oldLines":3,"newStart":1,"newLines":3,"lines":[" a","-say “hi”","+say “yo”"," b"]}]}`))
		require.Equal(t, "--- a/q.txt\n+++ b/q.txt\n@@ -1,3 +1,3 @@\n a\n-say “hi”\n+say “yo”\n b\n", got["q"])
	})
	t.Run("patch-and-strings-that-disagree-give-no-diff", func(t *testing.T) {
		t.Parallel()
		got := diffs(t, useLine("d", "Edit", `{"file_path":"/w/d.txt","old_string":"x","new_string":"y"}`),
			resultLine("d", `{"originalFile":"x\n","structuredPatch":[{"oldStart":1,"oldLines":1,"newStart":1,"newLines":1,"lines":["-x","+z"]}]}`))
		require.Equal(t, "skipped: "+event.DiffSkippedUnknown, got["d"])
	})
	t.Run("multiedit-applies-its-edits-in-order", func(t *testing.T) {
		t.Parallel()
		got := diffs(t, useLine("m", "MultiEdit", `{"file_path":"/w/n.md","edits":[{"old_string":"# Notes","new_string":"# Project notes"},{"old_string":"- todo","new_string":"- done"}]}`),
			resultLine("m", `{"filePath":"/w/n.md","originalFile":"# Notes\n- todo\n"}`))
		require.Equal(t, "--- a/n.md\n+++ b/n.md\n@@ -1,2 +1,2 @@\n-# Notes\n-- todo\n+# Project notes\n+- done\n", got["m"])
	})
	t.Run("an-ambiguous-edit-without-patch-gives-no-diff", func(t *testing.T) {
		t.Parallel()
		got := diffs(t, useLine("a", "Edit", `{"file_path":"/w/a.txt","old_string":"x","new_string":"y"}`),
			resultLine("a", `{"originalFile":"x\nx\n"}`))
		require.Equal(t, "skipped: "+event.DiffSkippedUnknown, got["a"])
	})
	t.Run("a-file-no-header-can-name-is-unknown", func(t *testing.T) {
		t.Parallel()
		got := diffs(t, useLine("t", "Write", `{"file_path":"/w/a\tb.txt","content":"hi\n"}`), resultLine("t", `{"type":"update","originalFile":"ho\n"}`))
		require.Equal(t, "skipped: "+event.DiffSkippedUnknown, got["t"], "not the diff of a.txt, nor none")
	})
	t.Run("a-path-outside-the-cwd-stays-absolute", func(t *testing.T) {
		t.Parallel()
		got := diffs(t, useLine("o", "Write", `{"file_path":"/etc/motd","content":"hi\n"}`), resultLine("o", `{"type":"update","originalFile":"ho\n"}`))
		require.Equal(t, "--- a/etc/motd\n+++ b/etc/motd\n@@ -1 +1 @@\n-ho\n+hi\n", got["o"])
	})
}

func TestApplyHunks(t *testing.T) {
	t.Parallel()
	hunks := func(s string) gjson.Result { return gjson.Parse(s) }
	got, ok := applyHunks("a\nb\nc", hunks(`[{"oldStart":3,"oldLines":1,"lines":["-c","\\ No newline at end of file","+C"]}]`))
	require.True(t, ok)
	require.Equal(t, "a\nb\nC\n", got)
	_, ok = applyHunks("a\nb\n", hunks(`[{"oldStart":1,"oldLines":1,"lines":["-b","+B"]}]`))
	require.False(t, ok, "a removed line that is not in the file")
	_, ok = applyHunks("a\nb\n", hunks(`[{"oldStart":2,"oldLines":0,"lines":["+x"]}]`))
	require.False(t, ok, "a bare insertion")
	_, ok = applyHunks("a\n", hunks(`[{"oldStart":9,"oldLines":1,"lines":["-a"]}]`))
	require.False(t, ok, "a hunk past the end")
}
