package codex

import (
	"strings"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/event"
)

// change is one entry of a file_change item's changes.
type change struct {
	path, kind string
	// diff is the raw JSON string of the new file (add), the old one
	// (delete) or the hunks (update), decoded only for the item's end.
	diff string
}

// readChange reads one raw change. kind is a string in exec's JSON
// ("add"), an object with a type in the app-server's ({"type":"update",
// "move_path":…}). The text is "diff" (exec, app-server) or, in older
// shapes, "unified_diff". rest may go on past the change: n is the
// change's length (0 when it is not an object).
func readChange(rest string) (c change, n int) {
	var path, kind str
	var diff, unified string
	n = jsonscan.Fields(rest, func(k, rest string) (int, bool) {
		switch k {
		case "path":
			return path.read(rest), true
		case "kind":
			return kind.read(rest), true
		case "diff":
			return first(&diff, rest), true
		case "unified_diff":
			return first(&unified, rest), true
		}
		return 0, true
	})
	c = change{path: path.text, kind: changeKindOf(kind)}
	switch {
	case jsonscan.IsString(diff):
		c.diff = diff
	case jsonscan.IsString(unified):
		c.diff = unified
	}
	return c, n
}

// fileDiff is the diff of a change, from Codex's own data only: an added
// file's content is the whole new file and a deleted file's content the
// whole old one (format_file_change_diff in codex-rs); an update carries
// the hunks apply_patch computed from the file on disk, to which the
// headers are added. Headers name the path from cwd, the run's (the
// task's, a reparse's meta's, or the app-server thread's; exec's lines
// name none), where the file is inside it, else as given (absolute:
// a/tmp/work/x.go). A move (the update text then ends "Moved to: …") or
// anything not a well-formed set of hunks is not known (ok false): no diff
// rather than a wrong one. An empty file added or deleted ("diff":"", its
// whole content) is known and has no diff: "", ok.
func (c change) fileDiff(cwd string) (diff string, ok bool) {
	if c.diff == "" || c.path == "" {
		return "", false // no text: Codex 0.169's changes carry none
	}
	name, text := adapters.DisplayPath(cwd, c.path), jsonscan.Str(c.diff)
	switch c.kind {
	case "add", "delete":
		if text == "" {
			// Nothing a diff could show: known, and no diff (as
			// adapters.DiffOrSkip has it for the other agents).
			return "", true
		}
		before, after := adapters.File{}, adapters.Present(text)
		if c.kind == "delete" {
			before, after = after, before
		}
		diff = adapters.Diff(name, before, after)
		return diff, diff != "" // "": no header can name the file
	case "update":
		if !wellFormedHunks(text) {
			return "", false
		}
		hunks := text
		if !strings.HasSuffix(hunks, "\n") {
			hunks += "\n"
		}
		// The headers adapters.Diff writes.
		name, ok := adapters.HeaderName(name)
		if !ok {
			return "", false
		}
		return "--- a/" + name + "\n+++ b/" + name + "\n" + hunks, true
	}
	return "", false
}

// wellFormedHunks reports whether s is one or more unified-diff hunks and
// nothing else, each with as many lines as its header counts, in order,
// and each new range where the hunks before it put it (as event's checker
// applies them).
func wellFormedHunks(s string) bool {
	if s == "" {
		return false
	}
	// Lines are taken off rest one at a time (no slice of them: a large
	// update was a fifth of a codex parse's allocations).
	rest := s
	next := func() string {
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			l := rest
			rest = ""
			return l
		}
		l := rest[:i+1]
		rest = rest[i+1:]
		return l
	}
	next0, delta := 0, 0 // the first old line after the last hunk; new lines less old ones so far
	for rest != "" {
		h, err := event.ParseHunkHeader(next()) // as the stream's checker reads it
		if err != nil || h.OldAt() < next0 || h.NewAt() != h.OldAt()+delta {
			return false
		}
		oldN, newN := h.OldCount, h.NewCount
		next0, delta = h.OldAt()+oldN, delta+newN-oldN
		for oldN > 0 || newN > 0 {
			if rest == "" {
				return false
			}
			switch next()[0] {
			case ' ':
				oldN--
				newN--
			case '-':
				oldN--
			case '+':
				newN--
			default:
				return false
			}
			if strings.HasPrefix(rest, `\ No newline at end of file`) {
				next()
			}
		}
		if oldN != 0 || newN != 0 {
			return false
		}
	}
	return true
}

// allAdded reports whether every change adds a file: Codex writes an added
// file in place (fs::write), over whatever was there.
func allAdded(changes []change) bool {
	for _, c := range changes {
		if c.kind != "add" {
			return false
		}
	}
	return true
}

// fileChange fills a completed file_change's paths and diff. The diff is
// given only when every change of a successful item is known exactly (an
// empty file created or removed adds nothing to it); otherwise
// diff_skipped says it could not be known.
func fileChange(te *event.ToolEnd, changes []change, cwd string) {
	for _, c := range changes {
		if c.path != "" {
			if te.Paths == nil {
				te.Paths = make([]string, 0, len(changes))
			}
			te.Paths = append(te.Paths, c.path)
		}
	}
	if te.Status != event.StatusOK || len(te.Paths) == 0 {
		return // no diff to give: none is made
	}
	diffs := make([]string, 0, len(changes))
	for _, c := range changes {
		d, ok := c.fileDiff(cwd)
		if !ok {
			te.DiffSkipped = event.DiffSkippedUnknown
			return
		}
		diffs = append(diffs, d)
	}
	te.Diff = adapters.JoinDiffs(diffs...)
}

// maxDiffsHeld bounds the bytes of diffs the parser holds to check the
// next ones against: Codex runs a command between most edits, which makes
// it forget them all.
const maxDiffsHeld = 8 << 20

// diffCheck holds Codex's diffs to each other, as the stream's checker
// does (event.DiffReplay). They are Codex's own (apply_patch's hunks), not
// made from content the parser knows: one that contradicts what the
// earlier ones showed of its file (a file changed outside the stream, one
// change given twice) is not passed on as exact.
//
// Only a diff naming a file that an earlier one named since the replay
// last forgot can contradict it, and most never do (a command comes
// between). So a diff is held unread until a later one names one of its
// files, or the held ones outgrow maxDiffsHeld; then the held ones are
// replayed in order, and that one with them. Codex's diffs rename nothing,
// so diffs of other files cannot bear on each other.
type diffCheck struct {
	replay event.DiffReplay
	held   []string        // diffs not replayed yet, in order
	bytes  int             // their length
	named  map[string]bool // the files named by diffs since the replay last forgot
}

// check holds te's diff, whose headers name files from cwd, to the
// earlier ones; one that does not hold is dropped, te's diff then unknown.
func (d *diffCheck) check(te *event.ToolEnd, cwd string) {
	learns, forgets := event.Replays(te)
	if forgets {
		_ = d.replay.Apply(te) // forgets
		d.forgotten()
		return
	}
	if !learns {
		return
	}
	if d.named == nil {
		d.named = map[string]bool{}
	}
	again := false
	for _, path := range te.Paths {
		// Keyed as the diff's headers name the file (adapters.Diff,
		// fileDiff) and event.ParsePatch reads them back.
		name, _ := adapters.HeaderName(adapters.DisplayPath(cwd, path))
		again = again || d.named[name]
		d.named[name] = true
	}
	if !again && d.bytes+len(te.Diff) <= maxDiffsHeld {
		d.held = append(d.held, te.Diff)
		d.bytes += len(te.Diff)
		return
	}
	var err error
	for _, h := range d.held {
		if err = d.replay.Apply(&event.ToolEnd{Kind: event.KindEdit, Diff: h}); err != nil {
			break // the adapter's own fault (the stream's checker fails there too); te goes unknown with it
		}
	}
	d.held, d.bytes = d.held[:0], 0
	if err == nil {
		err = d.replay.Apply(te)
	}
	if err != nil { // the replay forgot everything
		te.Diff, te.DiffSkipped = "", event.DiffSkippedUnknown
		d.forgotten()
	}
}

// forgotten follows the replay forgetting everything.
func (d *diffCheck) forgotten() {
	d.held, d.bytes = d.held[:0], 0
	if len(d.named) > 0 { // as DiffReplay's forget
		clear(d.named)
	}
}
