package claude

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// toolKind maps a Claude Code tool name to its normalized kind.
func toolKind(name string) event.Kind {
	switch name {
	case "Bash":
		return event.KindShell
	case "Read":
		return event.KindRead
	case "Write":
		return event.KindWrite
	case "Edit", "MultiEdit", "NotebookEdit":
		return event.KindEdit
	case "Glob", "Grep", "LS":
		return event.KindSearch
	case "WebFetch", "WebSearch":
		return event.KindWeb
	case "TodoWrite":
		return event.KindTodo
	case "Task", "Agent":
		return event.KindTask
	}
	if strings.HasPrefix(name, "mcp__") {
		return event.KindMCP
	}
	return event.KindOther
}

// call is what the parser remembers of a tool_use until its tool_result.
type call struct {
	name  string
	kind  event.Kind
	input string // the input object, kept only for write/edit tools (diffs)
	ended bool
}

// toolStart builds the tool_start of a tool_use with the given input object
// (raw JSON; anything but an object becomes {} in the stream).
func toolStart(id, name, input string) (*event.ToolStart, *call) {
	kind := toolKind(name)
	ts := &event.ToolStart{CallID: id, Name: name, Kind: kind, Input: []byte(input)}
	c := &call{name: name, kind: kind}
	in := gjson.Parse(input)
	switch kind {
	case event.KindShell:
		ts.Command = in.Get("command").String()
	case event.KindRead, event.KindWrite, event.KindEdit:
		ts.Path = filePath(in)
		if kind != event.KindRead {
			c.input = input
		}
	}
	return ts, c
}

func filePath(in gjson.Result) string {
	if p := in.Get("file_path"); p.Type == gjson.String {
		return p.Str
	}
	return in.Get("notebook_path").String()
}

// fileChange fills Paths and Diff of a successful write/edit call from its
// input: Write diffs from the original file when Claude reports it (an
// overwrite), else from nothing; Edit diffs old_string to new_string;
// MultiEdit joins the diffs of its edits. The hunks of an Edit are those of
// the strings, not of the whole file: Claude does not print the file.
func fileChange(te *event.ToolEnd, c *call, toolUseResult gjson.Result) {
	in := gjson.Parse(c.input)
	path := filePath(in)
	if path == "" {
		return
	}
	te.Paths = []string{path}
	switch c.name {
	case "Write":
		before := ""
		if o := toolUseResult.Get("originalFile"); o.Type == gjson.String {
			before = o.Str
		}
		te.Diff = adapters.UnifiedDiff(path, before, in.Get("content").String())
	case "Edit":
		te.Diff = adapters.UnifiedDiff(path, in.Get("old_string").String(), in.Get("new_string").String())
	case "MultiEdit":
		var diffs []string
		in.Get("edits").ForEach(func(_, e gjson.Result) bool {
			diffs = append(diffs, adapters.UnifiedDiff(path, e.Get("old_string").String(), e.Get("new_string").String()))
			return true
		})
		te.Diff = adapters.JoinDiffs(diffs...)
	}
}

// resultText returns a tool_result's content: a string, or the text blocks
// of an array joined by newlines (images are left out).
func resultText(content gjson.Result) string {
	switch {
	case content.Type == gjson.String:
		return strings.Clone(content.Str)
	case content.IsArray():
		var b strings.Builder
		content.ForEach(func(_, blk gjson.Result) bool {
			if blk.Get("type").Str == "text" {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(blk.Get("text").Str)
			}
			return true
		})
		return b.String()
	}
	return ""
}

// deniedMarkers are what Claude Code writes in a tool_result when a call
// was not allowed: headless prompts it could not ask ("… but you haven't
// granted it yet."), deny rules ("Permission to use Bash … has been
// denied."), and a user's rejection.
var deniedMarkers = []string{
	"haven't granted it yet",
	"has been denied",
	"doesn't want to proceed with this tool use",
	"the user rejected",
}

func looksDenied(text string) bool {
	if len(text) > 2048 {
		text = text[:2048]
	}
	lower := strings.ToLower(text)
	for _, m := range deniedMarkers {
		if strings.Contains(lower, m) {
			return true
		}
	}
	return false
}

// exitCode parses Claude's "Exit code N" that starts the result of a failed
// Bash call.
func exitCode(text string) (int, bool) {
	const prefix = "Exit code "
	if !strings.HasPrefix(text, prefix) {
		return 0, false
	}
	n, i := 0, len(prefix)
	neg := i < len(text) && text[i] == '-'
	if neg {
		i++
	}
	start := i
	for ; i < len(text) && text[i] >= '0' && text[i] <= '9' && i-start < 9; i++ {
		n = n*10 + int(text[i]-'0')
	}
	if i == start {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}
