package claude

import (
	"strings"
	"time"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters/internal/jsonscan"
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
	name      string
	kind      event.Kind
	input     string    // the input object, kept only for write/edit tools (diffs), within event.MaxInputBytes
	path      string    // a write/edit's file, when its input was too large to keep
	startedAt time.Time // its assistant line's timestamp (native durations only)
}

// toolStart builds the tool_start of a tool_use with the given input object
// (raw JSON, a view of the line; anything but an object becomes {} in the
// stream). Only what the stream emits is copied and kept: an input over
// event.MaxInputBytes is neither (the tool_start says input_truncated),
// and its command and path are cut to their caps. Open calls (many, each
// of megabytes) then hold no more than their events do.
func toolStart(id, name, input string) (*event.ToolStart, *call) {
	kind := toolKind(name)
	ts := &event.ToolStart{CallID: id, Name: name, Kind: kind}
	c := &call{name: name, kind: kind}
	raw := unsafe.Slice(unsafe.StringData(input), len(input))
	fits := !event.InputOverCap(raw)
	if fits {
		input = strings.Clone(input)
		ts.Input = []byte(input)
	} else {
		ts.Input, ts.InputTruncated = []byte("{}"), true
	}
	in := gjson.Parse(input)
	switch kind {
	case event.KindShell:
		var cut bool
		ts.Command, cut = capped(in.Get("command").String(), event.MaxOutputBytes, !fits)
		ts.InputTruncated = ts.InputTruncated || cut
	case event.KindRead, event.KindWrite, event.KindEdit:
		ts.Path, _ = capped(filePath(in), event.MaxFieldBytes, !fits)
		switch {
		case kind == event.KindRead:
		case fits:
			c.input = input
		default:
			c.path = ts.Path
		}
	}
	return ts, c
}

// capped is s cut to at most n bytes (on a rune boundary) and, when cut
// or when s is a view of the agent's line (view), copied: what the call
// keeps must not keep all of s, or the line, alive.
func capped(s string, n int, view bool) (string, bool) {
	cut, truncated := event.Cut(s, n)
	if truncated || view {
		cut = strings.Clone(cut)
	}
	return cut, truncated
}

func filePath(in gjson.Result) string {
	if p := in.Get("file_path"); p.Type == gjson.String {
		return p.Str
	}
	return in.Get("notebook_path").String()
}

// resultText returns a tool_result's content: a string, or the text blocks
// of an array joined by newlines (images are left out).
func resultText(raw string) string {
	switch {
	case jsonscan.IsString(raw):
		return ownStr(raw)
	case jsonscan.IsArray(raw):
		var b strings.Builder
		jsonscan.EachElem(raw, func(blk string) bool {
			var typ, text string
			jsonscan.Pick(blk, textKeys, &typ, &text)
			if jsonscan.StrOnly(typ) == "text" {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(jsonscan.StrOnly(text))
			}
			return true
		})
		return b.String()
	}
	return ""
}

var textKeys = []string{"type", "text"}

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
