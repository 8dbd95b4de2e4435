package cursor

import (
	"path/filepath"
	"strings"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/event"
)

// fileDiff sets the diff of a completed write, edit or delete from exact
// data only: an edit's full contents before and after
// (beforeFullFileContent, afterFullFileContent; a new file has no before,
// and Cursor's own diffString then starts from /dev/null), a delete's
// prevContent, a write's fileText over a content this stream showed
// earlier. Cursor's diffString names no file and a strReplace gives no
// line numbers, so neither is used. A successful call without such data
// gets diff_skipped "unknown". Headers name the file relative to the
// run's directory.
func (p *parser) fileDiff(c *call, end *event.ToolEnd) {
	p.files.TouchedBy(c.kind) // a shell command, a sub-agent, an MCP tool
	switch c.kind {
	case event.KindWrite, event.KindEdit, event.KindDelete:
	default:
		return
	}
	path := c.path()
	if len(end.Paths) > 0 {
		path = end.Paths[0]
	}
	abs := path
	if !filepath.IsAbs(abs) && p.cwd != "" {
		abs = filepath.Join(p.cwd, abs)
	}
	if end.Status != event.StatusOK || path == "" {
		p.files.Forget(abs) // a failed call may have changed it all the same
		return
	}
	before, after, ok := c.contents()
	if known, has := p.files.Get(abs); !ok && c.kind == event.KindWrite {
		before, ok = known, has
	} else if ok && has && known != before {
		// The call's own data contradicts what this stream showed of the
		// file (a line repeated, a change made out of sight): no diff
		// rather than a wrong one.
		ok = false
	}
	if after.Exists || c.kind == event.KindDelete {
		p.files.Set(abs, after)
	} else {
		p.files.Forget(abs)
	}
	if !ok {
		end.DiffSkipped = event.DiffSkippedUnknown
		return
	}
	end.Diff, end.DiffSkipped = adapters.DiffOrSkip(adapters.DisplayPath(p.cwd, path), before, after)
}

// contents returns the file before and after the call as the call's own
// data states them, and whether the before is known.
func (c *call) contents() (before, after adapters.File, ok bool) {
	e := &c.env
	diff, beforeRaw, afterRaw, prev := e.raw(e.diffString), e.raw(e.beforeFull), e.raw(e.afterFull), e.raw(e.prevContent)
	switch c.kind {
	case event.KindDelete:
		if jsonscan.IsString(prev) {
			return adapters.Present(jsonscan.Str(prev)), adapters.File{}, true
		}
		return adapters.File{}, adapters.File{}, false
	case event.KindWrite:
		if text := c.a.fileText; jsonscan.IsString(text) {
			after = adapters.Present(jsonscan.Str(text))
		}
		return adapters.File{}, after, false
	}
	if !jsonscan.IsString(afterRaw) {
		return adapters.File{}, adapters.File{}, false
	}
	after = adapters.Present(jsonscan.Str(afterRaw))
	switch {
	case jsonscan.IsString(beforeRaw):
		return adapters.Present(jsonscan.Str(beforeRaw)), after, true
	case strings.HasPrefix(jsonscan.Str(diff), "--- /dev/null"):
		// A new file: Cursor leaves the before out and diffs from nothing.
		return adapters.File{}, after, true
	}
	return adapters.File{}, after, false
}
