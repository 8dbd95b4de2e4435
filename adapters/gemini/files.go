package gemini

import (
	"strconv"
	"strings"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/adapters/internal/known"
	"github.com/agentharness/harness/event"
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
		e.valid = l.pContent.quoted
		e.content = l.pContent.text
	} else {
		e.valid = l.pOldString.quoted && l.pNewString.quoted
		e.old, e.new = l.pOldString.text, l.pNewString.text
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
//
// Gemini CLI 0.61 prints no output for a write_file or replace that
// succeeded, so it no longer says whether write_file created the file: a
// file it overwrote keeps its CRLF line ends. The content such a write
// left is known but for its line ends (unsure): the diffs of the calls on
// it are given as the agent's patch, which a live run checks against the
// disk, and never as the diff of the stream.
type files struct {
	known.Files
	unsure map[string]bool
}

// ForgetAll forgets every content.
func (f *files) ForgetAll() {
	f.Files.ForgetAll()
	clear(f.unsure)
}

// TouchedBy forgets every content when a tool of kind k may have changed
// files out of the stream's sight.
func (f *files) TouchedBy(k event.Kind) {
	if known.Unseen(k) {
		f.ForgetAll()
	}
}

// apply sets the diff of a finished write_file or replace call, and
// follows the file's content.
func (f *files) apply(te *event.ToolEnd, e edit) {
	if te.Status != event.StatusOK {
		if te.Status != event.StatusDenied {
			f.ForgetAll() // a failed write may have changed the file
		}
		return
	}
	before, after, hasBefore, sure, ok := f.change(te.Output, e)
	switch {
	case !ok:
		f.ForgetAll()
		te.DiffSkipped = event.DiffSkippedUnknown
		return
	case len(before.Text) > known.MaxFile || len(after.Text) > known.MaxFile:
		f.ForgetAll()
		te.DiffSkipped = event.DiffSkippedTooLarge
		return
	}
	f.Set(e.path, after)
	if sure {
		delete(f.unsure, e.path)
	} else {
		if f.unsure == nil {
			f.unsure = map[string]bool{}
		}
		f.unsure[strings.Clone(e.path)] = true
	}
	switch {
	case !hasBefore:
		te.DiffSkipped = event.DiffSkippedUnknown
	case sure:
		te.Diff, te.DiffSkipped = adapters.DiffOrSkip(e.path, before, after)
	default:
		te.DiffSkipped = event.DiffSkippedUnknown
		te.AgentPatch = adapters.Diff(e.path, before, after)
	}
}

// change returns the file after the call, and before it when the stream
// tells (hasBefore); sure says both are exact, not only but for the line
// ends of a file Gemini may have found with CRLF. It follows what Gemini
// CLI does: write_file writes the content as given unless it looks
// over-escaped (a backslash: the CLI may then unescape or correct it) and
// keeps a file's CRLF line ends; replace with an empty old_string creates
// a file that did not exist (it fails on one that does); otherwise it
// first tries the exact old_string, replaced everywhere, and keeps the
// file's trailing newline as it was. Any other path (flexible or
// model-corrected matching, a user's edit) is not followed. Older CLIs
// print what the call did ("Successfully overwrote file", "(N
// replacements)"), which is checked; 0.61 prints nothing.
func (f *files) change(output string, e edit) (before, after adapters.File, hasBefore, sure, ok bool) {
	if !e.valid || e.userEdited {
		return before, after, false, false, false
	}
	file, seen := f.Get(e.path)
	seen = seen && !strings.Contains(file.Text, "\r")
	sure = !f.unsure[e.path]
	switch e.name {
	case "write_file":
		if strings.ContainsAny(e.content, "\\\r") {
			return before, after, false, false, false
		}
		after = adapters.Present(e.content)
		switch {
		case strings.HasPrefix(output, "Successfully created and wrote to new file"):
			return adapters.File{}, after, true, true, true
		case seen && (output == "" || strings.HasPrefix(output, "Successfully overwrote file")):
			return file, after, true, sure, true
		case output == "":
			// Created or overwritten, the stream does not say: the
			// content is the file's, but for the CRLF line ends of a file
			// that was there (none to keep without a line end).
			return before, after, false, !strings.Contains(e.content, "\n"), true
		}
		return before, after, false, false, false
	}
	if strings.Contains(e.old, "\r") || strings.Contains(e.new, "\r") {
		return before, after, false, false, false
	}
	if e.old == "" {
		// Gemini creates the file only when it does not exist: a success
		// is a creation, whatever the output says ("Created new file: …",
		// 0.61 "Created NOTES.md").
		return adapters.File{}, adapters.Present(e.new), true, true, true
	}
	if !seen || (output != "" && !strings.HasPrefix(output, "Successfully modified file")) {
		return before, after, false, false, false
	}
	prev := file.Text
	n := int64(strings.Count(prev, e.old))
	r := reported(output)
	switch {
	case n == 0:
		return before, after, false, false, false // matched some other way
	case e.expected > 0 && n != e.expected:
		return before, after, false, false, false
	case e.expected == 0 && !e.multiple && n != 1:
		return before, after, false, false, false
	case r >= 0 && r != n:
		return before, after, false, false, false
	}
	text := strings.ReplaceAll(prev, e.old, e.new)
	// restoreTrailingNewline
	switch {
	case strings.HasSuffix(prev, "\n") && !strings.HasSuffix(text, "\n"):
		text += "\n"
	case !strings.HasSuffix(prev, "\n") && strings.HasSuffix(text, "\n"):
		text = text[:len(text)-1]
	}
	return file, adapters.Present(text), true, sure, true
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
