package filediff

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/gemini"
	"github.com/agentharness/harness/event"
)

// gitApplies checks that diff, applied by git apply to files holding
// before (absent when missing from the map), gives after.
func gitApplies(t *testing.T, diff string, before, after map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for p, text := range before {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644))
	}
	cmd := exec.Command("git", "apply", "-")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(diff)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git apply: %s\n%s", out, diff)
	for p := range before {
		if _, ok := after[p]; !ok {
			require.NoFileExists(t, filepath.Join(dir, p))
		}
	}
	for p, text := range after {
		got, err := os.ReadFile(filepath.Join(dir, p))
		require.NoError(t, err)
		require.Equal(t, text, string(got), p)
	}
	// The stream's own checker agrees.
	ps, err := event.ParsePatch(diff)
	require.NoError(t, err)
	for _, fp := range ps {
		b, exists := before[fp.From]
		text, _, err := event.ApplyPatch(fp, b, exists)
		require.NoError(t, err)
		require.Equal(t, after[fp.To], text)
	}
}

// write writes a file last changed an hour ago: before the agent's
// previous output arrived, so it is not taken for a change in progress.
func write(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(path, old, old))
}

// call runs one file tool call through d: its start, then change, then its
// end carrying the adapter's diff.
func call(d *Diffs, start *event.ToolStart, change func(), end *event.ToolEnd) *event.ToolEnd {
	d.Arrived(time.Now())
	d.Observe([]event.Body{start})
	change()
	d.Observe([]event.Body{end})
	return end
}

func TestLiveDiffsComeFromTheDisk(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	d := New(cwd)
	notes := filepath.Join(cwd, "docs", "notes.md")
	before := "# Notes\n\n- one\n- two\n- three\n\nend\n"
	after := "# Notes\n\n- one\n- TWO\n- three\n\nend\n"
	write(t, notes, before)

	t.Run("edit-replaces-the-adapters-diff", func(t *testing.T) {
		end := call(d, &event.ToolStart{CallID: "e1", Name: "Edit", Kind: event.KindEdit, Path: notes},
			func() { write(t, notes, after) },
			&event.ToolEnd{CallID: "e1", Kind: event.KindEdit, Status: event.StatusOK, Paths: []string{notes},
				Diff: "--- a/docs/notes.md\n+++ b/docs/notes.md\n@@ -1 +1 @@\n-- two\n+- TWO\n\\ No newline at end of file\n"})
		require.Empty(t, end.DiffSkipped)
		require.Contains(t, end.Diff, "--- a/docs/notes.md\n+++ b/docs/notes.md\n@@ -1,7 +1,7 @@")
		gitApplies(t, end.Diff, map[string]string{"docs/notes.md": before}, map[string]string{"docs/notes.md": after})
	})
	t.Run("create-relative-path", func(t *testing.T) {
		end := call(d, &event.ToolStart{CallID: "w1", Name: "write_file", Kind: event.KindWrite, Path: "new/file.txt"},
			func() { write(t, filepath.Join(cwd, "new", "file.txt"), "a\nb") },
			&event.ToolEnd{CallID: "w1", Kind: event.KindWrite, Status: event.StatusOK})
		require.Equal(t, []string{"new/file.txt"}, end.Paths)
		require.True(t, strings.HasPrefix(end.Diff, "--- /dev/null\n+++ b/new/file.txt\n"), end.Diff)
		gitApplies(t, end.Diff, map[string]string{}, map[string]string{"new/file.txt": "a\nb"})
	})
	t.Run("delete", func(t *testing.T) {
		gone := filepath.Join(cwd, "gone.txt")
		write(t, gone, "bye\n")
		end := call(d, &event.ToolStart{CallID: "d1", Name: "rm", Kind: event.KindDelete, Path: gone},
			func() { require.NoError(t, os.Remove(gone)) },
			&event.ToolEnd{CallID: "d1", Kind: event.KindDelete, Status: event.StatusOK})
		gitApplies(t, end.Diff, map[string]string{"gone.txt": "bye\n"}, map[string]string{})
	})
	t.Run("change-set", func(t *testing.T) {
		a, b := filepath.Join(cwd, "a.go"), filepath.Join(cwd, "b.go")
		write(t, a, "package a\n")
		end := call(d, &event.ToolStart{CallID: "p1", Name: "file_change", Kind: event.KindEdit, Path: a, Paths: []string{a, b}},
			func() { write(t, a, "package a // changed\n"); write(t, b, "package b\n") },
			&event.ToolEnd{CallID: "p1", Kind: event.KindEdit, Status: event.StatusOK, Paths: []string{a, b}})
		gitApplies(t, end.Diff, map[string]string{"a.go": "package a\n"}, map[string]string{"a.go": "package a // changed\n", "b.go": "package b\n"})
	})
	t.Run("a-file-named-only-at-the-end", func(t *testing.T) {
		a, c := filepath.Join(cwd, "a2.go"), filepath.Join(cwd, "c2.go")
		end := call(d, &event.ToolStart{CallID: "p2", Name: "file_change", Kind: event.KindEdit, Path: a},
			func() { write(t, a, "x\n"); write(t, c, "y\n") },
			&event.ToolEnd{CallID: "p2", Kind: event.KindEdit, Status: event.StatusOK, Paths: []string{a, c}, Diff: "adapter's"})
		require.Empty(t, end.Diff, "half a change set is not its diff")
		require.Equal(t, event.DiffSkippedUnknown, end.DiffSkipped)
	})
	t.Run("outside-cwd", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "o.txt")
		end := call(d, &event.ToolStart{CallID: "o1", Name: "Write", Kind: event.KindWrite, Path: other},
			func() { write(t, other, "o\n") },
			&event.ToolEnd{CallID: "o1", Kind: event.KindWrite, Status: event.StatusOK})
		require.Contains(t, end.Diff, "+++ b/"+strings.TrimPrefix(other, "/")+"\n")
	})
	t.Run("too-large", func(t *testing.T) {
		big := filepath.Join(cwd, "big.txt")
		write(t, big, strings.Repeat("x\n", MaxFileBytes))
		end := call(d, &event.ToolStart{CallID: "b1", Name: "Edit", Kind: event.KindEdit, Path: big},
			func() { write(t, big, "small\n") },
			&event.ToolEnd{CallID: "b1", Kind: event.KindEdit, Status: event.StatusOK, Diff: "--- a/big.txt\n"})
		require.Empty(t, end.Diff)
		require.Equal(t, event.DiffSkippedTooLarge, end.DiffSkipped)
	})
	t.Run("binary", func(t *testing.T) {
		bin := filepath.Join(cwd, "img.png")
		write(t, bin, "\x89PNG\x00\x01")
		end := call(d, &event.ToolStart{CallID: "i1", Name: "Write", Kind: event.KindWrite, Path: bin},
			func() { write(t, bin, "\x89PNG\x00\x02") },
			&event.ToolEnd{CallID: "i1", Kind: event.KindWrite, Status: event.StatusOK})
		require.Empty(t, end.Diff)
		require.Equal(t, event.DiffSkippedBinary, end.DiffSkipped)
	})
	t.Run("reported-complete-keeps-the-adapters-diff", func(t *testing.T) {
		// OpenCode: start and end on one line, after the fact.
		start := &event.ToolStart{CallID: "oc1", Name: "edit", Kind: event.KindEdit, Path: notes}
		end := &event.ToolEnd{CallID: "oc1", Kind: event.KindEdit, Status: event.StatusOK, Diff: "exact diff from the agent"}
		d.Observe([]event.Body{start, end})
		require.Equal(t, "exact diff from the agent", end.Diff)
		start2 := &event.ToolStart{CallID: "oc2", Name: "edit", Kind: event.KindEdit, Path: notes}
		end2 := &event.ToolEnd{CallID: "oc2", Kind: event.KindEdit, Status: event.StatusOK}
		d.Observe([]event.Body{start2, end2})
		require.Empty(t, end2.Diff)
		require.Equal(t, event.DiffSkippedUnknown, end2.DiffSkipped)
		// OpenCode never says its cwd: its adapter names files by their
		// absolute paths, which the live run makes relative.
		abs := strings.TrimPrefix(filepath.Join(cwd, "oc.txt"), "/")
		start3 := &event.ToolStart{CallID: "oc3", Name: "write", Kind: event.KindWrite, Path: "/" + abs}
		end3 := &event.ToolEnd{CallID: "oc3", Kind: event.KindWrite, Status: event.StatusOK,
			Diff: "Index: /" + abs + "\n====\n--- /dev/null\n+++ b/" + abs + "\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n"}
		d.Observe([]event.Body{start3, end3})
		require.Equal(t, "--- /dev/null\n+++ b/oc.txt\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n", end3.Diff)
		gitApplies(t, end3.Diff, map[string]string{}, map[string]string{"oc.txt": "x"})
	})
	t.Run("changing-when-read", func(t *testing.T) {
		// Codex applies its patch as soon as it has printed item.started:
		// a file changed since the agent's previous output may be half
		// written when the harness reads it.
		racy := filepath.Join(cwd, "racy.txt")
		write(t, racy, "one\ntwo\n")
		d.Arrived(time.Now())
		start := &event.ToolStart{CallID: "r1", Name: "file_change", Kind: event.KindEdit, Path: racy}
		require.NoError(t, os.WriteFile(racy, nil, 0o644)) // truncated, about to be written
		d.Arrived(time.Now())
		d.Observe([]event.Body{start})
		require.NoError(t, os.WriteFile(racy, []byte("one\nTWO\n"), 0o644))
		end := &event.ToolEnd{CallID: "r1", Kind: event.KindEdit, Status: event.StatusOK}
		d.Arrived(time.Now())
		d.Observe([]event.Body{end})
		require.Empty(t, end.Diff, "a diff from a half-written file would be wrong")
		require.Equal(t, event.DiffSkippedUnknown, end.DiffSkipped)

		// The same race, but the agent's own diff says what it did: it is
		// held to the file on disk, and kept only when it undoes exactly.
		write(t, racy, "one\nTWO\n")
		d.Arrived(time.Now())
		start = &event.ToolStart{CallID: "r2", Name: "file_change", Kind: event.KindEdit, Path: racy}
		require.NoError(t, os.WriteFile(racy, nil, 0o644))
		d.Arrived(time.Now())
		d.Observe([]event.Body{start})
		require.NoError(t, os.WriteFile(racy, []byte("one\nthree\n"), 0o644))
		own := "--- a/racy.txt\n+++ b/racy.txt\n@@ -1,2 +1,2 @@\n one\n-TWO\n+three\n"
		end = &event.ToolEnd{CallID: "r2", Kind: event.KindEdit, Status: event.StatusOK, Diff: own}
		d.Arrived(time.Now())
		d.Observe([]event.Body{end})
		require.Empty(t, end.DiffSkipped)
		gitApplies(t, end.Diff, map[string]string{"racy.txt": "one\nTWO\n"}, map[string]string{"racy.txt": "one\nthree\n"})
	})
	t.Run("truncated-when-read-late", func(t *testing.T) {
		// The same race seen late: the harness reads the agent's lines
		// a second after they were written, so the truncation looks older
		// than the previous output. An empty file changed during the run
		// is not taken for the file before the call.
		late := filepath.Join(cwd, "late.txt")
		write(t, late, "one\ntwo\n")
		require.NoError(t, os.WriteFile(late, nil, 0o644)) // truncated, about to be written
		d.Arrived(time.Now().Add(time.Second))
		d.Arrived(time.Now().Add(time.Second))
		start := &event.ToolStart{CallID: "l1", Name: "file_change", Kind: event.KindEdit, Path: late}
		d.Observe([]event.Body{start})
		require.NoError(t, os.WriteFile(late, []byte("one\nTWO\n"), 0o644))
		end := &event.ToolEnd{CallID: "l1", Kind: event.KindEdit, Status: event.StatusOK}
		d.Observe([]event.Body{end})
		require.Empty(t, end.Diff, "a diff from a truncated file would be wrong")
		require.Equal(t, event.DiffSkippedUnknown, end.DiffSkipped)

		// An empty file that was empty before the run is a file like any
		// other: its edit gets its diff.
		empty := filepath.Join(cwd, "empty.txt")
		write(t, empty, "")
		end = call(d, &event.ToolStart{CallID: "l2", Name: "Edit", Kind: event.KindEdit, Path: empty},
			func() { require.NoError(t, os.WriteFile(empty, []byte("x\n"), 0o644)) },
			&event.ToolEnd{CallID: "l2", Kind: event.KindEdit, Status: event.StatusOK})
		require.Empty(t, end.DiffSkipped)
		gitApplies(t, end.Diff, map[string]string{"empty.txt": ""}, map[string]string{"empty.txt": "x\n"})
	})
	t.Run("other-kinds-untouched", func(t *testing.T) {
		end := call(d, &event.ToolStart{CallID: "s1", Name: "Bash", Kind: event.KindShell, Command: "ls"},
			func() {}, &event.ToolEnd{CallID: "s1", Kind: event.KindShell, Status: event.StatusOK})
		require.Empty(t, end.Diff)
		require.Empty(t, end.DiffSkipped)
	})
}

// TestAgentPatchCheckedAgainstTheDisk: a call reported only once complete
// (OpenCode) gets its diff from the agent's own patch only when the patch,
// reversed, applies exactly to the file the call left; a patch with its
// common indentation trimmed (as OpenCode's may be) gives no diff.
func TestAgentPatchCheckedAgainstTheDisk(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	main := filepath.Join(cwd, "main.go")
	before := "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"
	after := "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"
	write(t, main, after)
	d := New(cwd)
	opencode := "Index: " + main + "\n===================================================================\n--- " + main + "\n+++ " + main +
		"\n@@ -1,5 +1,5 @@\n package main\n \n func main() {\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n }\n"
	end := func(patch string) *event.ToolEnd {
		e := &event.ToolEnd{CallID: "c", Name: "edit", Kind: event.KindEdit, Status: event.StatusOK, Paths: []string{main}, AgentPatch: patch}
		d.Observe([]event.Body{&event.ToolStart{CallID: "c", Name: "edit", Kind: event.KindEdit, Path: main}, e})
		return e
	}
	got := end(opencode)
	require.Empty(t, got.DiffSkipped)
	require.Contains(t, got.Diff, "--- a/main.go\n+++ b/main.go\n")
	gitApplies(t, got.Diff, map[string]string{"main.go": before}, map[string]string{"main.go": after})

	trimmed := "--- " + main + "\n+++ " + main + "\n@@ -4,1 +4,1 @@\n-println(\"hi\")\n+println(\"hello\")\n"
	got = end(trimmed)
	require.Empty(t, got.Diff, "a patch that does not undo exactly is no diff")
	require.Equal(t, event.DiffSkippedUnknown, got.DiffSkipped)
}

// TestAgentPatchWhenTheStartCameTooLate: a call named its file at its start,
// but the file was already changing (Codex, ACP agents): the disk cannot say
// what it was before, and the agent's own patch, checked, can.
func TestAgentPatchWhenTheStartCameTooLate(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	out := filepath.Join(cwd, "out.txt")
	d := New(cwd)
	d.Arrived(time.Now().Add(-time.Second))
	require.NoError(t, os.WriteFile(out, []byte("new\n"), 0o644)) // written as the call starts
	d.Arrived(time.Now())
	start := &event.ToolStart{CallID: "c", Name: "edit", Kind: event.KindEdit, Path: out}
	d.Observe([]event.Body{start})
	end := &event.ToolEnd{CallID: "c", Name: "edit", Kind: event.KindEdit, Status: event.StatusOK, Paths: []string{out},
		AgentPatch: "--- /dev/null\n+++ b/" + strings.TrimPrefix(out, "/") + "\n@@ -0,0 +1 @@\n+new\n"}
	d.Observe([]event.Body{end})
	require.Empty(t, end.DiffSkipped)
	require.Equal(t, "--- /dev/null\n+++ b/out.txt\n@@ -0,0 +1 @@\n+new\n", end.Diff)

	// A patch that does not undo to what the disk holds is still no diff.
	start2 := &event.ToolStart{CallID: "d", Name: "edit", Kind: event.KindEdit, Path: out}
	require.NoError(t, os.WriteFile(out, []byte("newer\n"), 0o644))
	d.Arrived(time.Now())
	d.Observe([]event.Body{start2})
	end2 := &event.ToolEnd{CallID: "d", Name: "edit", Kind: event.KindEdit, Status: event.StatusOK, Paths: []string{out},
		AgentPatch: "--- /dev/null\n+++ b/" + strings.TrimPrefix(out, "/") + "\n@@ -0,0 +1 @@\n+new\n"}
	d.Observe([]event.Body{end2})
	require.Empty(t, end2.Diff)
	require.Equal(t, event.DiffSkippedUnknown, end2.DiffSkipped)
}

// TestGeminiReplaceRightAfterItsWrite: Gemini CLI 0.61 prints its
// write_file result a few milliseconds after writing, and prints no output
// for either call, so the file a replace then changes was last written
// just before the agent's previous output: the disk cannot say what it
// was before the replace. The content write_file showed whole, held to
// the disk, can.
func TestGeminiReplaceRightAfterItsWrite(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	path := filepath.Join(cwd, "greet.txt")
	q := strconv.Quote
	lines := []string{
		`{"type":"init","timestamp":"2026-11-25T01:26:43.861Z","session_id":"s","model":"gemini-2.5-flash"}`,
		`{"type":"tool_use","timestamp":"2026-11-25T01:26:45.385Z","tool_name":"write_file","tool_id":"w1","parameters":{"content":"alpha\nbeta\ngamma\n","file_path":` + q(path) + `}}`,
		`{"type":"tool_result","timestamp":"2026-11-25T01:26:46.696Z","tool_id":"w1","status":"success"}`,
		`{"type":"message","timestamp":"2026-11-25T01:26:46.982Z","role":"assistant","content":"Replacing.","delta":true}`,
		`{"type":"tool_use","timestamp":"2026-11-25T01:26:47.132Z","tool_name":"replace","tool_id":"r1","parameters":{"file_path":` + q(path) + `,"instruction":"beta to BETA","new_string":"BETA\n","old_string":"beta\n"}}`,
		`{"type":"tool_result","timestamp":"2026-11-25T01:26:47.321Z","tool_id":"r1","status":"success"}`,
		`{"type":"result","timestamp":"2026-11-25T01:26:48.995Z","status":"success","stats":{"total_tokens":10,"input_tokens":5,"output_tokens":5}}`,
	}
	// What Gemini does on disk once it has printed a call's start.
	does := map[string]string{"w1": "alpha\nbeta\ngamma\n", "r1": "alpha\nBETA\ngamma\n"}
	p := (&gemini.Adapter{}).NewParser()
	d := New(cwd)
	var ends []*event.ToolEnd
	feed := func(bodies []event.Body) {
		d.Observe(bodies)
		for _, b := range bodies {
			switch v := b.(type) {
			case *event.ToolStart:
				require.NoError(t, os.WriteFile(path, []byte(does[v.CallID]), 0o644))
			case *event.ToolEnd:
				ends = append(ends, v)
			}
		}
	}
	for _, l := range lines {
		d.Arrived(time.Now()) // each line a chunk, read as soon as written
		bodies, _ := p.Parse(nil, []byte(l))
		feed(bodies)
	}
	feed(p.Flush(nil))
	require.Len(t, ends, 2)
	for _, e := range ends {
		require.Empty(t, e.DiffSkipped, "%s", e.CallID)
	}
	gitApplies(t, ends[0].Diff, map[string]string{}, map[string]string{"greet.txt": does["w1"]})
	gitApplies(t, ends[1].Diff, map[string]string{"greet.txt": does["w1"]}, map[string]string{"greet.txt": does["r1"]})
}

// TestAgentCreatesAFileTheRunKnew: an ACP agent reports each write of a
// file as a creation (no oldText). The first write is one; a second call
// that writes the same file again is not, whatever it holds: its creation
// patch still undoes to "absent" on the disk, and taking it gave a stream
// that event.Check rejects (created twice). The second call's diff is
// unknown.
func TestAgentCreatesAFileTheRunKnew(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	out := filepath.Join(cwd, "out.txt")
	d := New(cwd)
	create := "--- /dev/null\n+++ b/" + strings.TrimPrefix(out, "/") + "\n@@ -0,0 +1 @@\n+new\n"
	reported := func(id string) *event.ToolEnd {
		end := &event.ToolEnd{CallID: id, Name: "write", Kind: event.KindWrite, Status: event.StatusOK, Paths: []string{out}, AgentPatch: create}
		d.Observe([]event.Body{&event.ToolStart{CallID: id, Name: "write", Kind: event.KindWrite, Path: out, Creates: true}, end})
		return end
	}
	require.NoError(t, os.WriteFile(out, []byte("new\n"), 0o644))
	first := reported("a")
	require.Empty(t, first.DiffSkipped)
	require.Equal(t, "--- /dev/null\n+++ b/out.txt\n@@ -0,0 +1 @@\n+new\n", first.Diff)

	require.NoError(t, os.WriteFile(out, []byte("new\n"), 0o644))
	second := reported("b")
	require.Empty(t, second.Diff, "a file the run already knew was not created by the second call")
	require.Equal(t, event.DiffSkippedUnknown, second.DiffSkipped)

}

// TestUnnameableFileIsUnknown: a changed file that no diff header can name
// (a tab, CR or newline in its name: adapters.HeaderName) leaves the whole
// call's diff unknown, never one that says nothing changed or shows only
// the call's other files.
func TestUnnameableFileIsUnknown(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	d := New(cwd)
	plain := filepath.Join(cwd, "plain.txt")
	for i, name := range []string{"a\tb.txt", "x\r", "new\nline"} {
		odd := filepath.Join(cwd, name)
		write(t, odd, "one\n")
		write(t, plain, "one\n")
		id := "c" + strconv.Itoa(i)
		end := call(d, &event.ToolStart{CallID: id, Name: "Edit", Kind: event.KindEdit, Path: odd},
			func() { write(t, odd, "two\n") },
			&event.ToolEnd{CallID: id, Kind: event.KindEdit, Status: event.StatusOK, Paths: []string{odd}})
		require.Empty(t, end.Diff, "%q", name)
		require.Equal(t, event.DiffSkippedUnknown, end.DiffSkipped, "%q", name)

		id += "m"
		end = call(d, &event.ToolStart{CallID: id, Name: "apply_patch", Kind: event.KindEdit, Paths: []string{plain, odd}},
			func() { write(t, plain, "two\n"); write(t, odd, "three\n") },
			&event.ToolEnd{CallID: id, Kind: event.KindEdit, Status: event.StatusOK, Paths: []string{plain, odd}})
		require.Empty(t, end.Diff, "%q", name)
		require.Equal(t, event.DiffSkippedUnknown, end.DiffSkipped, "%q", name)
	}
}

// TestTruncatedWhileTheFileClockLags: a file the call has just truncated
// to rewrite it (Codex) whose time, from the kernel's coarse file clock,
// looks older than the run itself (seen in CI on a loaded VM, by some
// hundreds of ms): its content before is unknown, not the empty file.
// Before, the edit's diff showed the whole file added, which git apply
// refused.
func TestTruncatedWhileTheFileClockLags(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	notes := filepath.Join(cwd, "notes.md")
	write(t, notes, "one\ntwo\n")
	d := New(cwd)
	d.Arrived(time.Now())
	require.NoError(t, os.WriteFile(notes, nil, 0o644)) // truncated, about to be written
	lagged := time.Now().Add(-time.Second)              // as the lagging file clock stamped it
	require.NoError(t, os.Chtimes(notes, lagged, lagged))
	d.Arrived(time.Now())
	d.Observe([]event.Body{&event.ToolStart{CallID: "c", Name: "file_change", Kind: event.KindEdit, Path: notes}})
	require.NoError(t, os.WriteFile(notes, []byte("one\nTWO\n"), 0o644))
	end := &event.ToolEnd{CallID: "c", Kind: event.KindEdit, Status: event.StatusOK}
	d.Observe([]event.Body{end})
	require.Empty(t, end.Diff, "a diff from the truncated file would be wrong")
	require.Equal(t, event.DiffSkippedUnknown, end.DiffSkipped)
}

// TestDeniedCallTouchedNothing: a denied Claude Write (its tool_end names
// no path) gets no paths from the files read at its start, nor a diff,
// even when the file changed meanwhile (not by the call): a reparse of the
// run, which reads no disk, gives the same end. The live end used to have
// the path read at the start.
func TestDeniedCallTouchedNothing(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	d := New(cwd)
	out := filepath.Join(cwd, "out.txt")
	write(t, out, "old\n")
	end := call(d, &event.ToolStart{CallID: "w", Name: "Write", Kind: event.KindWrite, Path: out},
		func() { require.NoError(t, os.WriteFile(out, []byte("changed by someone else\n"), 0o644)) },
		&event.ToolEnd{CallID: "w", Name: "Write", Kind: event.KindWrite, Status: event.StatusDenied})
	require.Empty(t, end.Paths)
	require.Empty(t, end.Diff)
	require.Empty(t, end.DiffSkipped)

	// A call that ran still gets its paths and diff from the disk.
	other := filepath.Join(cwd, "other.txt")
	write(t, other, "old\n")
	ok := call(d, &event.ToolStart{CallID: "w2", Name: "Write", Kind: event.KindWrite, Path: other},
		func() { require.NoError(t, os.WriteFile(other, []byte("new\n"), 0o644)) },
		&event.ToolEnd{CallID: "w2", Name: "Write", Kind: event.KindWrite, Status: event.StatusOK})
	require.Equal(t, []string{other}, ok.Paths)
	require.Contains(t, ok.Diff, "+new")
}

// TestGeminiWriteFileReadLate: on a loaded machine harness may read
// Gemini's write_file start only after Gemini has written the file (CI:
// conform's edit-after-write, diff_skipped unknown). A file born during
// the run that nothing else of it made was absent before the call: the
// diff creates it. One that was there before the run, rewritten in place
// as Gemini does, keeps its inode: still unknown, never a creation.
func TestGeminiWriteFileReadLate(t *testing.T) {
	t.Parallel()
	q := strconv.Quote
	// writeLate plays the call in a run that started ago earlier: the
	// file clock is coarse, and stamps a file made within a tick of the
	// run's start as born before it.
	writeLate := func(t *testing.T, cwd, path string, ago time.Duration) *event.ToolEnd {
		t.Helper()
		p := (&gemini.Adapter{}).NewParser()
		d := New(cwd)
		d.started = d.started.Add(-ago)
		var end *event.ToolEnd
		for i, l := range []string{
			`{"type":"init","timestamp":"2026-11-25T01:26:43.861Z","session_id":"s","model":"gemini-2.5-flash"}`,
			`{"type":"tool_use","timestamp":"2026-11-25T01:26:45.385Z","tool_name":"write_file","tool_id":"w1","parameters":{"content":"alpha\nbeta\n","file_path":` + q(path) + `}}`,
			`{"type":"tool_result","timestamp":"2026-11-25T01:26:45.386Z","tool_id":"w1","status":"success"}`,
		} {
			if i == 1 { // Gemini wrote it before harness read the start
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
				require.NoError(t, err)
				_, err = f.WriteString("alpha\nbeta\n")
				require.NoError(t, err)
				require.NoError(t, f.Close())
			}
			d.Arrived(time.Now())
			bodies, _ := p.Parse(nil, []byte(l))
			d.Observe(bodies)
			for _, b := range bodies {
				if e, ok := b.(*event.ToolEnd); ok {
					end = e
				}
			}
		}
		require.NotNil(t, end)
		return end
	}

	cwd := t.TempDir()
	end := writeLate(t, cwd, filepath.Join(cwd, "notes.md"), time.Second)
	require.Empty(t, end.DiffSkipped)
	gitApplies(t, end.Diff, map[string]string{}, map[string]string{"notes.md": "alpha\nbeta\n"})

	cwd = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "notes.md"), []byte("old\n"), 0o644)) // before the run
	end = writeLate(t, cwd, filepath.Join(cwd, "notes.md"), 0)
	require.Empty(t, end.Diff)
	require.Equal(t, event.DiffSkippedUnknown, end.DiffSkipped)
}
