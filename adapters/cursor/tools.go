package cursor

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/event"
)

// toolKinds maps Cursor's tool_call keys to kinds. readLints reads the
// editor's diagnostics and changes nothing, so it is a read. A key missing
// here is kind other, named after the key.
var toolKinds = map[string]event.Kind{
	"readToolCall":        event.KindRead,
	"readLintsToolCall":   event.KindRead,
	"writeToolCall":       event.KindWrite,
	"editToolCall":        event.KindEdit,
	"deleteToolCall":      event.KindDelete,
	"shellToolCall":       event.KindShell,
	"lsToolCall":          event.KindSearch,
	"globToolCall":        event.KindSearch,
	"grepToolCall":        event.KindSearch,
	"semSearchToolCall":   event.KindSearch,
	"updateTodosToolCall": event.KindTodo,
	"todoToolCall":        event.KindTodo,
	"mcpToolCall":         event.KindMCP,
	"webSearchToolCall":   event.KindWeb,
	"webFetchToolCall":    event.KindWeb,
	"taskToolCall":        event.KindTask,
}

// functionKinds maps the names of the generic "function" form (Cursor's
// editor tool names) to kinds.
var functionKinds = map[string]event.Kind{
	"read_file": event.KindRead, "write": event.KindWrite, "edit_file": event.KindEdit,
	"search_replace": event.KindEdit, "delete_file": event.KindDelete,
	"run_terminal_cmd": event.KindShell, "list_dir": event.KindSearch, "grep": event.KindSearch,
	"grep_search": event.KindSearch, "file_search": event.KindSearch, "glob_file_search": event.KindSearch,
	"codebase_search": event.KindSearch, "web_search": event.KindWeb, "fetch": event.KindWeb,
	"todo_write": event.KindTodo,
}

// call is one tool_call object: {"<name>ToolCall": {args, result}} or the
// fallback {"function": {name, arguments}}.
type call struct {
	key    string // the tool_call key, e.g. shellToolCall
	name   string
	kind   event.Kind
	args   string // raw JSON
	result string // raw JSON
	a      args   // the members of args the parser reads
	// startedAt and completedAt are Cursor's own stamps of the call, in
	// Unix ms, where the tool_call object carries them next to the tool.
	startedAt, completedAt int64
}

// args holds the raw members of a call's args that the parser reads, read
// in one walk; the first of duplicate keys wins, as with Get.
type args struct {
	path, targetFile, filePath, command, fileText, strReplace, multiStrReplace string
}

func readArgs(raw string) args {
	var a args
	set := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	jsonscan.Each(raw, func(k, v string) bool {
		switch k {
		case "path":
			set(&a.path, v)
		case "target_file":
			set(&a.targetFile, v)
		case "file_path":
			set(&a.filePath, v)
		case "command":
			set(&a.command, v)
		case "fileText":
			set(&a.fileText, v)
		case "strReplace":
			set(&a.strReplace, v)
		case "multiStrReplace":
			set(&a.multiStrReplace, v)
		}
		return true
	})
	return a
}

// parseCall reads a raw tool_call object.
func parseCall(raw string) call {
	if !jsonscan.IsObject(raw) {
		return parseCallJSON(gjson.Parse(raw))
	}
	var c call
	c.read(raw)
	return c.named()
}

// read reads the tool_call object at the start of rest, without naming it
// (named does), and returns its length (0 when rest does not start with
// an object). The tool is the member named …ToolCall or function; other
// members are bookkeeping (toolCallId, startedAtMs, …), and only when no
// member has such a name is the first object-valued one taken.
func (c *call) read(rest string) int {
	tool := false // c.key is a …ToolCall or function member
	return jsonscan.Fields(rest, func(k, vrest string) (int, bool) {
		switch k {
		case "startedAtMs":
			c.startedAt = stamp(jsonscan.Value(vrest))
			return 0, true
		case "completedAtMs":
			c.completedAt = stamp(jsonscan.Value(vrest))
			return 0, true
		}
		named := strings.HasSuffix(k, "ToolCall") || k == "function"
		take := false
		switch {
		case tool: // the tool was found: the rest is bookkeeping
		case named:
			take = true
		case c.key == "": // a stand-in until a named member comes
			take = jsonscan.IsObject(jsonscan.Value(vrest))
		}
		if !take {
			return 0, true
		}
		tool = named
		c.key, c.name, c.kind, c.args, c.result = k, "", "", "", ""
		var name, args string
		n := jsonscan.EachEnd(vrest, func(k, v string) bool {
			switch k {
			case "args":
				c.args = v
			case "result":
				c.result = v
			case "name":
				if name == "" {
					name = v
				}
			case "arguments":
				if args == "" {
					args = v
				}
			}
			return true
		})
		if c.key == "function" {
			c.name = jsonscan.Str(name)
			c.kind = functionKinds[c.name]
			c.args = args
			if jsonscan.IsString(args) { // OpenAI style: a JSON string
				c.args = parse(jsonscan.Str(args))
			}
		}
		return n, true
	})
}

// stamp reads a Unix-ms stamp given as a number or a numeric string.
func stamp(raw string) int64 {
	if jsonscan.IsString(raw) {
		raw = jsonscan.Str(raw)
	}
	if raw == "" || !jsonscan.IsNumber(raw) {
		return 0
	}
	return max(jsonscan.Int(raw), 0)
}

// parseCallJSON reads a tool_call that is not an object, as gjson sees it.
func parseCallJSON(tc gjson.Result) call {
	var c call
	tc.ForEach(func(k, v gjson.Result) bool {
		c.key = k.String()
		v.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "args":
				c.args = v.Raw
			case "result":
				c.result = v.Raw
			}
			return true
		})
		if c.key == "function" {
			c.name = v.Get("name").String()
			c.kind = functionKinds[c.name]
			args := v.Get("arguments")
			c.args = args.Raw
			if args.Type == gjson.String { // OpenAI style: a JSON string
				c.args = parse(args.String())
			}
		}
		return false // one key names the tool
	})
	return c.named()
}

// parse returns the JSON value that s holds, as gjson.Parse(s).Raw does:
// from its first byte above a space, to the end of s for an object or
// array, else just that value.
func parse(s string) string {
	i := 0
	for i < len(s) && s[i] <= ' ' {
		i++
	}
	s = s[i:]
	if s == "" || s[0] == '{' || s[0] == '[' {
		return s
	}
	return gjson.Parse(s).Raw
}

// str decodes the member key of the raw object raw, as gjson's
// Get(key).String() does.
func str(raw, key string) string { return jsonscan.Str(jsonscan.Get(raw, key)) }

// named fills in the call's name and kind from its key.
func (c call) named() call {
	if c.key != "function" {
		// The spec names tools as the agent does: "shellToolCall".
		c.name = c.key
		c.kind = toolKinds[c.key]
	}
	if c.name == "" {
		c.name = "unknown"
	}
	if c.kind == "" {
		c.kind = event.KindOther
	}
	switch c.kind {
	case event.KindRead, event.KindWrite, event.KindEdit, event.KindDelete, event.KindShell:
		c.a = readArgs(c.args)
	}
	return c
}

func (c call) path() string {
	switch c.kind {
	case event.KindRead, event.KindWrite, event.KindEdit, event.KindDelete:
		for _, raw := range [...]string{c.a.path, c.a.targetFile, c.a.filePath} {
			if p := jsonscan.Str(raw); p != "" {
				return p
			}
		}
	}
	return ""
}

func (c call) command() string {
	if c.kind != event.KindShell {
		return ""
	}
	if cmd := jsonscan.Str(c.a.command); cmd != "" {
		return cmd
	}
	// A rejected call's completion has no args, only the envelope.
	_, env := c.envelope()
	return str(env, "command")
}

func (c call) start(id string) *event.ToolStart {
	st := &event.ToolStart{CallID: id, Name: c.name, Kind: c.kind, Path: c.path(), Command: c.command()}
	if jsonscan.IsObject(c.args) {
		st.Input = json.RawMessage(c.args)
	}
	return st
}

// envelope returns the result's variant (success, failure, rejected, error)
// and its body.
func (c call) envelope() (variant string, body string) {
	jsonscan.Each(c.result, func(k, v string) bool {
		switch k {
		case "success", "failure", "rejected", "error":
			variant, body = k, v
			return false
		}
		return true
	})
	return variant, body
}

func (c call) end(id string) *event.ToolEnd {
	end := &event.ToolEnd{CallID: id, Name: c.name, Kind: c.kind}
	variant, env := c.envelope()
	switch variant {
	case "success":
		end.Status = event.StatusOK
		end.Output = c.successOutput(env)
		if c.kind == event.KindMCP && jsonscan.Bool(jsonscan.Get(env, "isError")) {
			end.Status = event.StatusError
		}
		c.fileChange(end, env)
	case "failure":
		end.Status = event.StatusError
		end.Output = failureOutput(c, env)
	case "rejected":
		end.Status = event.StatusDenied
		end.Output = str(env, "reason")
		if end.Output == "" {
			end.Output = "rejected"
		}
	case "error":
		end.Status = event.StatusError
		end.Output = str(env, "message")
		if end.Output == "" {
			end.Output = env
		}
	default:
		end.Status = event.StatusError
		if c.result != "" {
			end.Output = c.result
		} else {
			end.Output = "the tool call completed without a result"
		}
	}
	if c.kind == event.KindShell {
		if code := jsonscan.Get(env, "exitCode"); jsonscan.IsNumber(code) {
			n := jsonscan.Int(code)
			end.ExitCode = event.Int(int(n))
			if n != 0 && end.Status == event.StatusOK {
				end.Status = event.StatusError
			}
		}
	}
	return end
}

func failureOutput(c call, env string) string {
	if c.kind == event.KindShell {
		return shellOutput(env)
	}
	if m := str(env, "message"); m != "" {
		return m
	}
	return env
}

func shellOutput(env string) string {
	var stdout, stderr string
	jsonscan.Each(env, func(k, v string) bool {
		switch k {
		case "stdout":
			if stdout == "" {
				stdout = v // first wins, as with Get
			}
		case "stderr":
			if stderr == "" {
				stderr = v
			}
		}
		return true
	})
	out, errOut := jsonscan.Str(stdout), jsonscan.Str(stderr)
	switch {
	case errOut == "":
		return out
	case out == "":
		return errOut
	case strings.HasSuffix(out, "\n"):
		return out + errOut
	}
	return out + "\n" + errOut
}

// successOutput is the short, useful part of a successful result.
func (c call) successOutput(env string) string {
	if c.kind == event.KindShell {
		return shellOutput(env)
	}
	switch c.key {
	case "readToolCall":
		return str(env, "content")
	case "writeToolCall", "editToolCall", "deleteToolCall":
		return ""
	case "globToolCall":
		return joinStrings(jsonscan.Get(env, "files"))
	case "grepToolCall":
		if out := grepOutput(env); out != "" {
			return out
		}
	case "lsToolCall":
		var b strings.Builder
		listTree(&b, jsonscan.Get(env, "directoryTreeRoot"), "", 0)
		return b.String()
	case "mcpToolCall":
		var parts []string
		jsonscan.Values(jsonscan.Get(env, "content"), func(v string) bool {
			t := jsonscan.Get(v, "text")
			if tt := jsonscan.Get(t, "text"); tt != "" {
				parts = append(parts, jsonscan.Str(tt))
			} else if jsonscan.IsString(t) {
				parts = append(parts, jsonscan.Str(t))
			}
			return true
		})
		if parts != nil {
			return strings.Join(parts, "\n")
		}
	}
	if jsonscan.IsString(env) {
		return jsonscan.Str(env)
	}
	if jsonscan.IsObject(env) && len(env) <= 2 {
		return ""
	}
	return env
}

// grepOutput renders grep matches as file:line:text, one a line.
func grepOutput(env string) string {
	var b strings.Builder
	jsonscan.Values(jsonscan.Get(env, "workspaceResults"), func(ws string) bool {
		jsonscan.Values(jsonscan.Path(ws, "content", "matches"), func(file string) bool {
			name := str(file, "file")
			jsonscan.Values(jsonscan.Get(file, "matches"), func(m string) bool {
				b.WriteString(name + ":" + str(m, "lineNumber") + ":" + str(m, "content") + "\n")
				return b.Len() < event.MaxOutputBytes
			})
			return b.Len() < event.MaxOutputBytes
		})
		return b.Len() < event.MaxOutputBytes
	})
	return b.String()
}

func joinStrings(arr string) string {
	var b strings.Builder
	jsonscan.Values(arr, func(v string) bool {
		b.WriteString(jsonscan.Str(v))
		b.WriteByte('\n')
		return true
	})
	return b.String()
}

// listTree renders an ls result, one entry a line, directories with a
// trailing slash, a few levels deep.
func listTree(b *strings.Builder, dir string, indent string, depth int) {
	if depth > 8 || b.Len() > event.MaxOutputBytes {
		return
	}
	jsonscan.Values(jsonscan.Get(dir, "childrenDirs"), func(d string) bool {
		name := str(d, "name")
		if name == "" {
			name = str(d, "absPath")
		}
		b.WriteString(indent + name + "/\n")
		listTree(b, d, indent+"  ", depth+1)
		return true
	})
	jsonscan.Values(jsonscan.Get(dir, "childrenFiles"), func(f string) bool {
		b.WriteString(indent + str(f, "name") + "\n")
		return true
	})
}

// fileChange sets Paths of a successful write, edit or delete; the diff
// is the parser's (it knows the run's directory and earlier contents).
func (c call) fileChange(end *event.ToolEnd, env string) {
	switch c.kind {
	case event.KindWrite, event.KindEdit, event.KindDelete:
	default:
		return
	}
	if path := c.changedPath(env); path != "" {
		end.Paths = []string{path}
	}
}

// changedPath is the file a write, edit or delete changed: the result's
// path, else the one in the arguments.
func (c call) changedPath(env string) string {
	if path := str(env, "path"); path != "" {
		return path
	}
	return c.path()
}
