// Package filediff gives the file tools of a live run the diff of what
// really changed on disk (Diffs), and reads files as those diffs do
// (ReadRegularFile): never a named pipe or a device.
package filediff

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// MaxFileBytes is the largest file a live run diffs; a larger one gets
// diff_skipped too_large.
const MaxFileBytes = 1 << 20

// Diffs gives the file tools of a live run the diff of what really
// changed on disk: the files a write/edit/delete call names are read when
// it starts and again when it ends, and the diff of the two replaces the
// adapter's. The adapter's diff is built from what the agent said it would
// do; the disk says what was done.
//
// A call the agent reports only once it is complete (OpenCode: its start
// and end on one line) cannot be read before: it keeps the adapter's diff,
// or gets diff_skipped unknown when there is none.
//
// It is used by the stdout goroutine only.
//
// An agent may start changing a file as soon as it has printed the call's
// start (Codex applies its patch within a millisecond of item.started),
// so a file may already be changing when the harness reads it. A file
// modified after the previous chunk of the agent's output arrived (less a
// margin for the file system's coarse clock) was changed by the call now
// starting, not before it: its content before is unknown, and the call
// gets diff_skipped unknown rather than a diff from a half-written file.
//
// Arrival times lag the agent's writes when the harness reads its output
// late (a loaded machine), so that test can miss a file the agent has just
// truncated to rewrite it (Codex writes a file as create-truncate, then
// write): a file found empty at a call's start that changed during the
// run is taken as possibly half written as well.
//
// Where the agent says a call may add its files, writing them in place
// (ToolStart.Creates: Codex's change kind add, Gemini's write_file), a
// file found changing is
// taken as absent before the call when the disk says it was created by it:
// its inode was born after the run started (a file that was there before
// keeps its inode when rewritten in place), and nothing else of the run
// may have made it — no earlier call named it, and no tool that changes
// files out of the stream's sight (a shell command, a sub-agent, an MCP or
// unknown tool) has run. Codex's add alone does not say it: its
// apply_patch writes an added file over whatever is there.
type Diffs struct {
	cwd     string
	started time.Time             // when the run started (wall clock)
	before  map[string][]snapshot // by the agent's call id
	named   map[string]string     // files the run's file calls named so far, absolute: the first call's id
	unseen  bool                  // a tool that may change files out of sight has started
	// prevChunk and chunk are when the previous and the current chunk of
	// stdout arrived (wall clock, as file times are).
	prevChunk, chunk time.Time
}

// mtimeSlack allows for file times that lag the wall clock: Linux stamps
// files with a clock that ticks once per scheduler tick (up to 10 ms).
const mtimeSlack = 25 * time.Millisecond

// emptySlack is how much older than the run a file found empty at a
// call's start must look to be taken for empty before the call: one the
// call has just truncated to rewrite it (Codex) looks as old as the file
// clock says, and on a loaded VM that clock lagged the run's own by more
// than mtimeSlack (CI: a Codex edit's file, truncated 260 ms into the run,
// looked older than the run, and its diff showed the whole file added).
// Taking a file emptied shortly before the run for unknown costs a diff;
// the other way round a diff is wrong.
const emptySlack = 10 * time.Second

// Arrived records that a chunk of stdout arrived at t.
func (d *Diffs) Arrived(t time.Time) {
	d.prevChunk, d.chunk = d.chunk, t
}

// snapshot is one file as read at a moment: its content, or why it cannot
// be diffed.
type snapshot struct {
	path string // as the agent named it
	file adapters.File
	skip string // an event.DiffSkipped* reason
}

func New(cwd string) *Diffs {
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	now := time.Now()
	return &Diffs{cwd: cwd, started: now, before: map[string][]snapshot{}, named: map[string]string{}, prevChunk: now, chunk: now}
}

func isFileKind(k event.Kind) bool {
	return k == event.KindWrite || k == event.KindEdit || k == event.KindDelete
}

// Observe reads the files of the calls that start in bodies (the events of
// one native line) and sets the diff of the calls that end there. It runs
// before the Stream sees the bodies, on the agent's own call ids.
func (d *Diffs) Observe(bodies []event.Body) {
	var startedHere map[string]bool
	for _, b := range bodies {
		switch v := b.(type) {
		case *event.ToolStart:
			if !isFileKind(v.Kind) {
				d.unseen = d.unseen || changesUnseen(v.Kind)
				continue
			}
			if startedHere == nil {
				startedHere = map[string]bool{}
			}
			startedHere[v.CallID] = true
			if paths := startPaths(v); len(paths) > 0 {
				snaps := make([]snapshot, len(paths))
				for i, p := range paths {
					snaps[i] = d.read(p, d.prevChunk.Add(-mtimeSlack))
					if snaps[i].skip == event.DiffSkippedUnknown && v.Creates && d.createdByCall(p, v.CallID) {
						snaps[i] = snapshot{path: p} // absent
					}
				}
				for _, p := range paths {
					d.name(p, v.CallID)
				}
				d.before[v.CallID] = snaps
			}
		case *event.ToolEnd:
			before, tracked := d.before[v.CallID]
			delete(d.before, v.CallID)
			if isFileKind(v.Kind) {
				for _, p := range v.Paths {
					d.name(p, v.CallID)
				}
			}
			if !isFileKind(v.Kind) && !tracked {
				continue
			}
			if !tracked || startedHere[v.CallID] {
				// Read after the fact (or never): the disk cannot say what
				// the file was before.
				if v.Diff == "" && v.AgentPatch != "" && v.Status == event.StatusOK {
					if diff, ok := d.verify(v.AgentPatch, v.CallID); ok {
						v.Diff, v.DiffSkipped = diff, ""
						continue
					}
				}
				if v.Diff == "" && v.DiffSkipped == "" && v.Status == event.StatusOK {
					v.DiffSkipped = event.DiffSkippedUnknown
				}
				v.Diff = d.relativize(v.Diff)
				continue
			}
			d.end(v, before)
			if v.DiffSkipped == event.DiffSkippedUnknown && v.AgentPatch != "" && v.Status == event.StatusOK {
				// The disk could not say what the file was before (it
				// changed as the call started); the agent's own patch,
				// checked to undo exactly, can.
				if diff, ok := d.verify(v.AgentPatch, v.CallID); ok {
					v.Diff, v.DiffSkipped = diff, ""
				}
			}
		}
	}
}

// createdByCall reports whether the disk says the file at path was created
// by the call now starting, which the agent says adds it in place: its
// inode was born after the run started, no earlier call of the run named
// it, and no tool that may change files out of sight has run.
func (d *Diffs) createdByCall(path, callID string) bool {
	if d.unseen || d.namedBefore(path, callID) {
		return false
	}
	born, ok := bornAt(d.abs(path))
	return ok && born.After(d.started)
}

// name records that call callID named the file at path.
func (d *Diffs) name(path, callID string) {
	if _, ok := d.named[d.abs(path)]; !ok {
		d.named[d.abs(path)] = callID
	}
}

// namedBefore reports whether a call other than callID named the file at
// path: the run then knew the file before callID, so callID cannot be
// what created it.
func (d *Diffs) namedBefore(path, callID string) bool {
	id, ok := d.named[d.abs(path)]
	return ok && id != callID
}

// mayCreate reports whether call callID may have created the file at path
// for all the run knows: no earlier call named it, and the disk does not
// say it is older than the run. (Where the disk keeps no birth time, the
// agent's word stands.)
func (d *Diffs) mayCreate(path, callID string) bool {
	if d.namedBefore(path, callID) {
		return false
	}
	born, ok := bornAt(path)
	return !ok || !born.Before(d.started.Add(-mtimeSlack)) // the coarse clock lags
}

// changesUnseen reports whether a tool of kind k may change files the
// stream does not name: anything but reads, searches, web and to-do tools
// (file tools name theirs).
func changesUnseen(k event.Kind) bool {
	switch k {
	case event.KindRead, event.KindSearch, event.KindWeb, event.KindTodo:
		return false
	}
	return !isFileKind(k)
}

// startPaths are the files a call names when it starts.
func startPaths(v *event.ToolStart) []string {
	if len(v.Paths) > 0 {
		return v.Paths
	}
	if v.Path != "" {
		return []string{v.Path}
	}
	return nil
}

// end sets v's diff from the files as they were at the start and are now.
// A file named only at the end was not read before: the call's diff is
// then unknown, never a partial one.
//
// Where a file's content before is unknown (it was already changing when
// read), the agent's own patch, if any, may still say it exactly: it is
// checked against the disk as verify does.
func (d *Diffs) end(v *event.ToolEnd, before []snapshot) {
	candidate := v.AgentPatch
	if candidate == "" && !v.DiffTruncated {
		candidate = v.Diff
	}
	v.Diff, v.DiffTruncated, v.DiffSkipped = "", false, ""
	if v.Status == event.StatusDenied {
		// A denied call did not run: it touched no file, whatever it
		// named, and the disk's changes meanwhile are not its. Its end
		// has the paths the agent gave it, as a reparse's has, and no
		// diff is looked for.
		return
	}
	known := map[string]bool{}
	for _, s := range before {
		known[d.abs(s.path)] = true
	}
	for _, p := range v.Paths {
		if !known[d.abs(p)] {
			v.DiffSkipped = event.DiffSkippedUnknown
			return
		}
	}
	if len(v.Paths) == 0 {
		for _, s := range before {
			v.Paths = append(v.Paths, s.path)
		}
	}
	diffs := make([]string, 0, len(before))
	for _, b := range before {
		a := d.read(b.path, time.Time{})
		if skip := cmpSkip(b.skip, a.skip); skip != "" {
			if skip == event.DiffSkippedUnknown && candidate != "" {
				if diff, ok := d.verify(candidate, v.CallID); ok {
					v.Diff = diff
					return
				}
			}
			v.Diff, v.DiffSkipped = "", skip
			return
		}
		diff, skipped := adapters.DiffOrSkip(adapters.DisplayPath(d.cwd, d.abs(b.path)), b.file, a.file)
		if skipped != "" {
			v.DiffSkipped = skipped
			return
		}
		diffs = append(diffs, diff)
	}
	v.Diff = adapters.JoinDiffs(diffs...)
}

// verify makes the diff of a call the harness could not read before from
// the agent's own patch: each file as the call left it is read, the patch
// is applied in reverse, exactly (no fuzz, no offset), and the diff is made
// from the two contents. A patch that does not undo exactly — trimmed
// indentation, a later change, a file too large — gives no diff.
//
// A patch that creates a file is taken only where the call may have
// created it (mayCreate): reversed, a creation undoes to "absent" whatever
// the file held before: an agent that reports its rewrite of a file the
// run already knew as a creation (an ACP diff with no oldText, in a second
// turn) would otherwise get a diff of something that did not happen.
func (d *Diffs) verify(patch, callID string) (string, bool) {
	ps, err := event.ParsePatch(patch)
	if err != nil || len(ps) == 0 {
		return "", false
	}
	diffs := make([]string, 0, len(ps))
	for _, p := range ps {
		name := p.To
		if name == "" {
			name = p.From
		}
		path := d.abs(name)
		if !filepath.IsAbs(name) {
			if _, err := os.Stat(path); err != nil {
				path = "/" + name // a header of an absolute path, its slash cut
			}
		}
		after := d.read(path, time.Time{})
		if after.skip != "" || (p.From == "" && !d.mayCreate(path, callID)) {
			return "", false
		}
		text, exists, err := event.ApplyPatch(p.Reverse(), after.file.Text, after.file.Exists)
		if err != nil {
			return "", false
		}
		before := adapters.File{Text: text, Exists: exists}
		diff, skipped := adapters.DiffOrSkip(adapters.DisplayPath(d.cwd, path), before, after.file)
		if skipped != "" {
			return "", false // as end: not half the change
		}
		diffs = append(diffs, diff)
	}
	return adapters.JoinDiffs(diffs...), true
}

// cmpSkip is the reason to skip a file's diff given both readings: not
// regular wins over too large, too large over binary, binary over unknown.
func cmpSkip(a, b string) string {
	for _, r := range []string{event.DiffSkippedNotRegular, event.DiffSkippedTooLarge, event.DiffSkippedBinary, event.DiffSkippedUnknown} {
		if a == r || b == r {
			return r
		}
	}
	return ""
}

func (d *Diffs) abs(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(d.cwd, path)
}

// read reads one file, bounded: a file over MaxFileBytes or not text is
// not kept. A file modified after changedAfter (when not zero), or while
// it was read, is unknown.
func (d *Diffs) read(path string, changedAfter time.Time) snapshot {
	s := snapshot{path: path}
	f, st, err := openRegular(d.abs(path))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s // absent: the zero File
	case errors.Is(err, ErrNotRegular):
		s.skip = event.DiffSkippedNotRegular
		return s
	case err != nil:
		s.skip = event.DiffSkippedUnknown
		return s
	}
	defer f.Close()
	switch {
	case st.Size() > MaxFileBytes:
		s.skip = event.DiffSkippedTooLarge
		return s
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	switch {
	case err != nil:
		s.skip = event.DiffSkippedUnknown
	case len(data) > MaxFileBytes:
		s.skip = event.DiffSkippedTooLarge
	case bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data):
		s.skip = event.DiffSkippedBinary
	default:
		s.file = adapters.Present(string(data))
	}
	if s.skip == "" {
		again, err := f.Stat()
		atStart := !changedAfter.IsZero()
		if err != nil || !again.ModTime().Equal(st.ModTime()) || again.Size() != st.Size() ||
			(atStart && again.ModTime().After(changedAfter)) ||
			(atStart && len(data) == 0 && again.ModTime().After(d.started.Add(-emptySlack))) {
			s.file, s.skip = adapters.File{}, event.DiffSkippedUnknown
		}
	}
	return s
}

// ErrNotRegular is openRegular's error for a path that is not a regular
// file.
var ErrNotRegular = errors.New("harness: not a regular file") // the prefix of the package it came from, as the ACP server has always said it

// openRegular opens path for reading only if it is a regular file (a
// symbolic link is followed), and returns its Fstat. Anything else is
// ErrNotRegular and is never opened for real: opening a named pipe blocks
// until a writer comes (an agent's Write to a FIFO hung the run past its
// timeout), and opening a device may act on it. The path is asked what it
// is first; the open is non-blocking, in case it was swapped for a FIFO
// in between, and the open file is asked again.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, nil, err
	} else if !st.Mode().IsRegular() {
		return nil, nil, ErrNotRegular
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = ErrNotRegular
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// ReadRegularFile reads the regular file at path, as the live diffs do:
// anything that is not a regular file is an error and is never opened
// (see openRegular), nor is a file over max bytes read.
func ReadRegularFile(path string, max int64) ([]byte, error) {
	f, st, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > max {
		return nil, fmt.Errorf("%s: over %d bytes", path, max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("%s: over %d bytes", path, max)
	}
	return data, err
}

// relativize rewrites the headers of an adapter's diff to name files
// relative to the run's cwd, as every diff of the stream does: an adapter
// that does not know the cwd (OpenCode's stream never says it) names a
// file by its absolute path, without the leading slash. A diff that does
// not parse is left as it is.
func (d *Diffs) relativize(diff string) string {
	ps, err := event.ParsePatch(diff)
	if err != nil || len(ps) == 0 {
		return diff
	}
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("--- " + d.header("a/", p.From) + "\n+++ " + d.header("b/", p.To) + "\n")
		for _, h := range p.Hunks {
			b.WriteString("@@ -" + span(h.OldStart, h.OldCount) + " +" + span(h.NewStart, h.NewCount) + " @@\n")
			for _, l := range h.Lines {
				b.WriteString(l)
				if !strings.HasSuffix(l, "\n") {
					b.WriteString("\n\\ No newline at end of file\n")
				}
			}
		}
	}
	return b.String()
}

// span is one side of a hunk header as diff -u writes it, and as the
// adapters' own diffs have it: the count is left out when it is 1.
func span(start, count int) string {
	if count == 1 {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(count)
}

// header is a diff header's path: relative to the cwd when the path, taken
// as absolute, is inside it.
func (d *Diffs) header(prefix, name string) string {
	if name == "" {
		return "/dev/null"
	}
	abs := "/" + strings.TrimPrefix(name, "/")
	if rel := adapters.DisplayPath(d.cwd, abs); rel != abs {
		name = rel
	}
	return prefix + strings.TrimPrefix(name, "/")
}
