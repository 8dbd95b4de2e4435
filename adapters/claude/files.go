package claude

import (
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/event"
)

// Diffs of Write, Edit and MultiEdit come only from exact data, so that
// every diff applies to the file as it was and gives the file as it became:
// the file before the call is tool_use_result.originalFile (Claude reports
// it for Edit and for a Write over an existing file; a Write with type
// "create" made a new file), or a content the stream showed in full
// earlier (the file as a Write or an exact diff left it). The file after is
// the Write's content, or the Edit applied to the file before: Claude's
// structuredPatch, checked line by line against it, and the edit strings
// where they apply (both must agree). Without such data there is no diff.

// Bounds of the contents kept for later diffs, and of the files diffed.
const (
	maxKnownBytes = 16 << 20
	maxDiffInput  = 4 << 20 // before and after together
)

// fileChange fills Paths and, where the data is exact, Diff of a
// successful Write, Edit or MultiEdit, and remembers the file's content.
func (p *parser) fileChange(te *event.ToolEnd, c *call, tur gjson.Result) {
	in := gjson.Parse(c.input)
	path := filePath(in)
	if path == "" {
		return
	}
	te.Paths = []string{path}
	before, ok := p.before(path, c.name, tur)
	var after adapters.File
	if ok {
		after, ok = changed(c.name, in, before, tur)
	}
	if !ok {
		p.files.Forget(path)
		te.DiffSkipped = event.DiffSkippedUnknown
		return
	}
	p.files.Set(path, after)
	if len(before.Text)+len(after.Text) > maxDiffInput {
		te.DiffSkipped = event.DiffSkippedTooLarge
		return
	}
	te.Diff, te.DiffSkipped = adapters.DiffOrSkip(adapters.DisplayPath(p.cwd, path), before, after)
}

// before is the file at path before the call, where the stream knows it.
func (p *parser) before(path, name string, tur gjson.Result) (adapters.File, bool) {
	if f, ok := reportedBefore(name, tur); ok {
		return f, true
	}
	return p.files.Get(path)
}

// reportedBefore is the file before the call as Claude's tool result says
// it: originalFile, or nothing for a Write that created the file.
func reportedBefore(name string, tur gjson.Result) (adapters.File, bool) {
	if o := tur.Get("originalFile"); o.Type == gjson.String {
		return adapters.Present(o.Str), true
	}
	if name == "Write" && tur.Get("type").Str == "create" {
		return adapters.File{}, true
	}
	return adapters.File{}, false
}

// FileChange is the change of a successful Write, Edit or MultiEdit from
// Claude's own exact data alone, as the CLI's stream gives it: input is the
// tool's input object, toolResponse its tool_use_result
// (claude-agent-acp passes the same object as
// _meta.claudeCode.toolResponse). path is the file ("" when the call
// names none, or is not a file tool); diff its exact diff, else skipped
// says why there is none (event.DiffSkipped*). Paths stay as Claude gives
// them (absolute): the caller makes them relative.
func FileChange(name, input, toolResponse string) (path, diff, skipped string) {
	if k := toolKind(name); k != event.KindWrite && k != event.KindEdit {
		return "", "", ""
	}
	in, tur := gjson.Parse(input), gjson.Parse(toolResponse)
	if path = filePath(in); path == "" {
		path = tur.Get("filePath").String()
	}
	if path == "" {
		return "", "", ""
	}
	before, ok := reportedBefore(name, tur)
	var after adapters.File
	if ok {
		after, ok = changed(name, in, before, tur)
	}
	switch {
	case !ok:
		return path, "", event.DiffSkippedUnknown
	case len(before.Text)+len(after.Text) > maxDiffInput:
		return path, "", event.DiffSkippedTooLarge
	}
	diff, skipped = adapters.DiffOrSkip(path, before, after)
	return path, diff, skipped
}

// ToolKind is the normalized kind of a Claude Code tool, by its name (the
// CLI and claude-agent-acp name the tools alike).
func ToolKind(name string) event.Kind { return toolKind(name) }

// changed is the file after the call, from the file before.
func changed(name string, in gjson.Result, before adapters.File, tur gjson.Result) (adapters.File, bool) {
	switch name {
	case "Write":
		if c := in.Get("content"); c.Type == gjson.String {
			return adapters.Present(c.Str), true
		}
	case "Edit", "MultiEdit":
		if !before.Exists {
			return adapters.File{}, false
		}
		edits := []gjson.Result{in}
		if name == "MultiEdit" {
			edits = in.Get("edits").Array()
		}
		replaced, byStrings := before.Text, len(edits) > 0
		for _, e := range edits {
			if replaced, byStrings = replace(replaced, e.Get("old_string").String(), e.Get("new_string").String(), e.Get("replace_all").Bool()); !byStrings {
				break
			}
		}
		patched, byPatch := "", false
		if sp := tur.Get("structuredPatch"); sp.IsArray() && len(sp.Array()) > 0 {
			patched, byPatch = applyHunks(before.Text, sp)
		}
		switch {
		case byPatch && byStrings && patched != replaced:
			return adapters.File{}, false // the two disagree: trust neither
		case byPatch:
			return adapters.Present(patched), true
		case byStrings:
			return adapters.Present(replaced), true
		}
	}
	return adapters.File{}, false
}

// replace applies one Edit to text as Claude does: old must occur exactly
// once, or at least once with all.
func replace(text, old, new string, all bool) (string, bool) {
	if old == "" {
		return "", false
	}
	n := strings.Count(text, old)
	if n == 0 || (!all && n != 1) {
		return "", false
	}
	if all {
		return strings.ReplaceAll(text, old, new), true
	}
	return strings.Replace(text, old, new, 1), true
}

// applyHunks applies Claude's structuredPatch (jsdiff hunks: oldStart,
// oldLines, lines prefixed ' ', '-', '+', and "\ No newline at end of
// file" after a line that lacks one) to orig, checking every context and
// removed line against it.
func applyHunks(orig string, hunks gjson.Result) (string, bool) {
	lines := strings.SplitAfter(orig, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var b strings.Builder
	b.Grow(len(orig))
	pos, ok := 0, true
	hunks.ForEach(func(_, h gjson.Result) bool {
		start := int(h.Get("oldStart").Int()) - 1
		if h.Get("oldLines").Int() == 0 && orig != "" {
			ok = false // a bare insertion: where jsdiff puts it is not worth guessing
			return false
		}
		if start < pos || start > len(lines) {
			ok = false
			return false
		}
		for _, l := range lines[pos:start] {
			b.WriteString(l)
		}
		pos = start
		hl := h.Get("lines").Array()
		for i, r := range hl {
			l := r.String()
			if l == "" {
				ok = false
				return false
			}
			body := l[1:]
			if i+1 >= len(hl) || !strings.HasPrefix(hl[i+1].String(), `\`) {
				body += "\n"
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(lines) || lines[pos] != body {
					ok = false
					return false
				}
				pos++
				if l[0] == ' ' {
					b.WriteString(body)
				}
			case '+':
				b.WriteString(body)
			case '\\':
			default:
				ok = false
				return false
			}
		}
		return true
	})
	if !ok {
		return "", false
	}
	for _, l := range lines[pos:] {
		b.WriteString(l)
	}
	return b.String(), true
}

// parseTime reads a line's timestamp (raw JSON, RFC 3339), or the zero
// time.
func parseTime(raw string) time.Time {
	ts, err := time.Parse(time.RFC3339Nano, jsonscan.StrOnly(raw))
	if err != nil {
		return time.Time{}
	}
	return ts
}
