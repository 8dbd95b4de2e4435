package gemini

import (
	"strconv"
	"strings"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/adapters/internal/known"
	"github.com/agentharness/harness/event"
)

// Bounds on the file contents kept for diffs: a file over maxFileBytes
// gets no diff (too_large), and the parser keeps at most maxKnownBytes in
// all (past it, only the file changed last).
const (
	maxFileBytes  = 1 << 20
	maxKnownBytes = 8 << 20
)

// edit is what a write_file or replace call asked for, decoded.
type edit struct {
	name       string // write_file, replace or edit; "" for other tools
	path       string
	content    string // write_file
	old, new   string // replace
	valid      bool   // every parameter the call needs is a string
	multiple   bool   // allow_multiple
	expected   int64  // expected_replacements (older builds), 0 when absent
	userEdited bool   // modified_by_user: the user changed the proposal
}

func readEdit(name, path string, l *line) edit {
	e := edit{name: name, path: path, multiple: jsonscan.Bool(l.pAllowMultiple),
		expected: jsonscan.Int(l.pExpected), userEdited: jsonscan.Bool(l.pModifiedByUser)}
	if name == "write_file" {
		e.valid = jsonscan.IsString(l.pContent)
		e.content = jsonscan.Str(l.pContent)
	} else {
		e.valid = jsonscan.IsString(l.pOldString) && jsonscan.IsString(l.pNewString)
		e.old, e.new = jsonscan.Str(l.pOldString), jsonscan.Str(l.pNewString)
	}
	e.valid = e.valid && path != ""
	return e
}

// files holds the full content of files as the stream showed it, by the
// path the model gave: what write_file wrote, then what each replace made
// of it. Gemini's stream never shows a file it did not write, so a diff
// is only possible from a file's creation on; whenever the content can no
// longer be known exactly, everything is forgotten (a path may be named
// in several ways), and the calls after get no diff rather than a wrong
// one.
type files struct{ known.Files }

// apply sets the diff of a finished write_file or replace call, and
// follows the file's content.
func (f *files) apply(te *event.ToolEnd, e edit) {
	if te.Status != event.StatusOK {
		if te.Status != event.StatusDenied {
			f.ForgetAll() // a failed write may have changed the file
		}
		return
	}
	before, after, ok := f.change(te.Output, e)
	switch {
	case !ok:
		f.ForgetAll()
		te.DiffSkipped = event.DiffSkippedUnknown
	case len(before.Text) > maxFileBytes || len(after.Text) > maxFileBytes:
		f.ForgetAll()
		te.DiffSkipped = event.DiffSkippedTooLarge
	default:
		f.Set(e.path, after)
		te.Diff = adapters.Diff(e.path, before, after)
	}
}

// change returns the file before and after the call when the stream
// tells both exactly. It follows what Gemini CLI does: write_file writes
// the content as given unless it looks over-escaped (a backslash: the CLI
// may then unescape or correct it) and keeps a file's CRLF line ends;
// replace first tries the exact old_string, replaced everywhere, and keeps
// the file's trailing newline as it was. Any other path (flexible or
// model-corrected matching, a user's edit) is not followed.
func (f *files) change(output string, e edit) (before, after adapters.File, ok bool) {
	if !e.valid || e.userEdited {
		return before, after, false
	}
	file, seen := f.Get(e.path)
	prev := file.Text
	switch e.name {
	case "write_file":
		if strings.ContainsAny(e.content, "\\\r") {
			return before, after, false
		}
		switch {
		case strings.HasPrefix(output, "Successfully created and wrote to new file"):
			return adapters.File{}, adapters.Present(e.content), true
		case strings.HasPrefix(output, "Successfully overwrote file") && seen && !strings.Contains(prev, "\r"):
			return adapters.Present(prev), adapters.Present(e.content), true
		}
		return before, after, false
	}
	if strings.ContainsAny(e.old+e.new, "\r") {
		return before, after, false
	}
	if strings.HasPrefix(output, "Created new file") && e.old == "" {
		return adapters.File{}, adapters.Present(e.new), true
	}
	if !seen || e.old == "" || strings.Contains(prev, "\r") || !strings.HasPrefix(output, "Successfully modified file") {
		return before, after, false
	}
	n := int64(strings.Count(prev, e.old))
	switch {
	case n == 0:
		return before, after, false // matched some other way
	case e.expected > 0 && n != e.expected:
		return before, after, false
	case e.expected == 0 && !e.multiple && n != 1:
		return before, after, false
	case reported(output) >= 0 && reported(output) != n:
		return before, after, false
	}
	text := strings.ReplaceAll(prev, e.old, e.new)
	// restoreTrailingNewline
	switch {
	case strings.HasSuffix(prev, "\n") && !strings.HasSuffix(text, "\n"):
		text += "\n"
	case !strings.HasSuffix(prev, "\n") && strings.HasSuffix(text, "\n"):
		text = text[:len(text)-1]
	}
	return adapters.Present(prev), adapters.Present(text), true
}

// reported reads N in "... (N replacements).", -1 when absent.
func reported(output string) int64 {
	i := strings.LastIndex(output, " (")
	j := strings.LastIndex(output, " replacement")
	if i < 0 || j <= i+2 {
		return -1
	}
	n, err := strconv.ParseInt(output[i+2:j], 10, 64)
	if err != nil {
		return -1
	}
	return n
}
