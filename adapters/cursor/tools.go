package cursor

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/event"
)

// toolKind is the kind of a Cursor tool_call key. readLints reads the
// editor's diagnostics and changes nothing, so it is a read. A key missing
// here is kind other, named after the key. (A switch: a map's lookup,
// hashing the key, was 1 % of harness parse's CPU on Cursor's stream.)
func toolKind(key string) event.Kind {
	switch key {
	case "readToolCall", "readLintsToolCall":
		return event.KindRead
	case "writeToolCall":
		return event.KindWrite
	case "editToolCall":
		return event.KindEdit
	case "deleteToolCall":
		return event.KindDelete
	case "shellToolCall":
		return event.KindShell
	case "lsToolCall", "globToolCall", "grepToolCall", "semSearchToolCall":
		return event.KindSearch
	case "updateTodosToolCall", "todoToolCall":
		return event.KindTodo
	case "mcpToolCall":
		return event.KindMCP
	case "webSearchToolCall", "webFetchToolCall":
		return event.KindWeb
	case "taskToolCall":
		return event.KindTask
	}
	return ""
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
	args   string   // raw JSON
	result string   // raw JSON
	a      args     // the members of args the parser reads
	env    envelope // result, read with the line
	// walked is set when a was read with args, in the pass over the
	// line; else named reads it.
	walked bool
	// startedAt and completedAt are Cursor's own stamps of the call, in
	// Unix ms, where the tool_call object carries them next to the tool.
	startedAt, completedAt int64
}

// args holds the raw members of a call's args that the parser reads, read
// in one walk; the first of duplicate keys wins, as with Get.
type args struct {
	path, targetFile, filePath, command, fileText string
}

// read reads the args object at the start of rest and returns its length
// (0 when rest does not start with an object).
func (a *args) read(rest string) int {
	return jsonscan.EachEnd(rest, func(k, v string) bool {
		a.member(k, v)
		return true
	})
}

// member reads the member k of args, of raw value v.
func (a *args) member(k, v string) {
	switch k {
	case "path":
		jsonscan.SetFirst(&a.path, v)
	case "target_file":
		jsonscan.SetFirst(&a.targetFile, v)
	case "file_path":
		jsonscan.SetFirst(&a.filePath, v)
	case "command":
		jsonscan.SetFirst(&a.command, v)
	case "fileText":
		jsonscan.SetFirst(&a.fileText, v)
	}
}

// readArgs reads the members of args from a raw args object.
func readArgs(raw string) args {
	var a args
	jsonscan.Each(raw, func(k, v string) bool {
		a.member(k, v)
		return true
	})
	return a
}

// envelope is a call's result: its variant (success, failure, rejected,
// error: the first of these members), the variant's raw body, and where in
// the body the members the parser reads are, found in the walk over the
// line. The members are kept as places in body, not as strings: as
// seventeen strings they cost harness parse 11 M instructions more on the
// 20 MB Cursor corpus (callgrind, medians of five runs), when each line
// read ahead had an envelope of its own (every pointer in one costs: the
// collector scans it; clearing it takes a write barrier while the
// collector marks).
type envelope struct {
	variant, body                                string
	content, path, stdout, stderr, exitCode      span
	executionTime, isError, message, reason, cmd span
	files, workspaceResults, directoryTreeRoot   span
	diffString, beforeFull, afterFull            span
	prevContent                                  span
}

// span is where a raw value is in a string: [at, end), or nowhere when end
// is 0.
type span struct{ at, end int }

// raw returns the raw member of the body at s, or "".
func (e *envelope) raw(s span) string { return e.body[s.at:s.end] }

// read reads the result object at the start of rest and returns its
// length (0 when rest does not start with an object).
func (e *envelope) read(rest string) int {
	return jsonscan.Fields(rest, func(k, vrest string) (int, bool) {
		switch k {
		case "success", "failure", "rejected", "error":
			if e.variant != "" {
				break
			}
			e.variant = k
			n := e.readBody(vrest)
			if n == 0 {
				n = len(jsonscan.Value(vrest))
			}
			e.body = vrest[:n]
			return n, true
		}
		return 0, true
	})
}

// readBody finds the members of the variant's body at the start of rest
// and returns its length (0 when it is no object). The first of duplicate
// keys wins, as with Get.
func (e *envelope) readBody(rest string) int {
	return jsonscan.Fields(rest, func(k, vrest string) (int, bool) {
		var m *span
		switch k {
		case "content":
			m = &e.content
		case "path":
			m = &e.path
		case "stdout":
			m = &e.stdout
		case "stderr":
			m = &e.stderr
		case "exitCode":
			m = &e.exitCode
		case "executionTime":
			m = &e.executionTime
		case "isError":
			m = &e.isError
		case "message":
			m = &e.message
		case "reason":
			m = &e.reason
		case "command":
			m = &e.cmd
		case "files":
			m = &e.files
		case "workspaceResults":
			m = &e.workspaceResults
		case "directoryTreeRoot":
			m = &e.directoryTreeRoot
		case "diffString":
			m = &e.diffString
		case "beforeFullFileContent":
			m = &e.beforeFull
		case "afterFullFileContent":
			m = &e.afterFull
		case "prevContent":
			m = &e.prevContent
		default:
			return 0, true
		}
		n := len(jsonscan.Value(vrest))
		if m.end == 0 {
			at := len(rest) - len(vrest)
			*m = span{at, at + n}
		}
		return n, true
	})
}

// parseCall reads a raw tool_call object.
func parseCall(raw string) call {
	if !jsonscan.IsObject(raw) {
		return parseCallJSON(gjson.Parse(raw))
	}
	var c call
	c.read(raw)
	c.named()
	return c
}

// read reads the tool_call object at the start of rest, without naming it
// (named does), and returns its length (0 when rest does not start with
// an object). The tool is the member named …ToolCall or function; other
// members are bookkeeping (toolCallId, startedAtMs, …), and only when no
// member has such a name is the first object-valued one taken. The tool's
// args and result are read in the same pass.
func (c *call) read(rest string) int {
	found := false // c.key is a …ToolCall or function member
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
		case found: // the tool was found: the rest is bookkeeping
		case named:
			take = true
		case c.key == "": // a stand-in until a named member comes
			take = jsonscan.IsObject(jsonscan.Value(vrest))
		}
		if !take {
			return 0, true
		}
		found = named
		if c.key != "" { // a stand-in, replaced
			*c = call{startedAt: c.startedAt, completedAt: c.completedAt}
		}
		c.key, c.walked = k, true
		var name, arguments string
		n := jsonscan.Fields(vrest, func(k, rest string) (int, bool) {
			switch k {
			case "args":
				c.a = args{}
				n := 0
				if readsArgs(toolKind(c.key)) {
					n = c.a.read(rest)
				}
				if n == 0 {
					n = len(jsonscan.Value(rest))
				}
				c.args = rest[:n]
				return n, true
			case "result":
				if c.result != "" {
					c.env = envelope{} // the last result wins
				}
				n := c.env.read(rest)
				if n == 0 {
					n = len(jsonscan.Value(rest))
				}
				c.result = rest[:n]
				return n, true
			}
			v := jsonscan.Value(rest)
			switch k {
			case "name":
				jsonscan.SetFirst(&name, v)
			case "arguments":
				jsonscan.SetFirst(&arguments, v)
			}
			return len(v), true
		})
		if c.key == "function" {
			c.name = jsonscan.Str(name)
			c.kind = functionKinds[c.name]
			c.args = arguments
			if jsonscan.IsString(arguments) { // OpenAI style: a JSON string
				c.args = parse(jsonscan.Str(arguments))
			}
			// Its args are read from the arguments, by named.
			c.walked, c.a = false, args{}
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
	c.env.read(c.result)
	c.named()
	return c
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

// named fills in the call's name and kind from its key, and reads its
// args if the pass over the line did not.
func (c *call) named() {
	if c.key != "function" {
		// The spec names tools as the agent does: "shellToolCall".
		c.name = c.key
		c.kind = toolKind(c.key)
	}
	if c.name == "" {
		c.name = "unknown"
	}
	if c.kind == "" {
		c.kind = event.KindOther
	}
	if c.walked {
		return
	}
	if readsArgs(c.kind) {
		c.a = readArgs(c.args)
	}
}

// readsArgs reports whether the parser reads members of the args of a
// call of kind k (its path, command or file text). Other kinds' args are
// only passed on whole, as the start's input, and are not walked.
func readsArgs(k event.Kind) bool {
	switch k {
	case event.KindRead, event.KindWrite, event.KindEdit, event.KindDelete, event.KindShell:
		return true
	}
	return false
}

func (c *call) path() string {
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

func (c *call) command() string {
	if c.kind != event.KindShell {
		return ""
	}
	if cmd := jsonscan.Str(c.a.command); cmd != "" {
		return cmd
	}
	// A rejected call's completion has no args, only the envelope.
	return jsonscan.Str(c.env.raw(c.env.cmd))
}

// start is the call's start; lines made its pieces.
func (c *call) start(id string, lines *jsonscan.Lines) *event.ToolStart {
	st := &event.ToolStart{CallID: id, Name: c.name, Kind: c.kind, Path: c.path(), Command: c.command()}
	if jsonscan.IsObject(c.args) {
		st.Input = lines.Bytes(c.args)
	}
	return st
}

func (c *call) end(id string) *event.ToolEnd {
	end := &event.ToolEnd{CallID: id, Name: c.name, Kind: c.kind}
	e := &c.env
	switch e.variant {
	case "success":
		end.Status = event.StatusOK
		end.Output = c.successOutput()
		if c.kind == event.KindMCP && jsonscan.Bool(e.raw(e.isError)) {
			end.Status = event.StatusError
		}
		c.fileChange(end)
	case "failure":
		end.Status = event.StatusError
		end.Output = c.failureOutput()
	case "rejected":
		end.Status = event.StatusDenied
		end.Output = jsonscan.Str(e.raw(e.reason))
		if end.Output == "" {
			end.Output = "rejected"
		}
	case "error":
		end.Status = event.StatusError
		end.Output = jsonscan.Str(e.raw(e.message))
		if end.Output == "" {
			end.Output = e.body
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
		if code := e.raw(e.exitCode); jsonscan.IsNumber(code) {
			n := jsonscan.Int(code)
			end.ExitCode = event.Int(int(n))
			if n != 0 && end.Status == event.StatusOK {
				end.Status = event.StatusError
			}
		}
	}
	return end
}

func (c *call) failureOutput() string {
	if c.kind == event.KindShell {
		return c.env.shellOutput()
	}
	if m := jsonscan.Str(c.env.raw(c.env.message)); m != "" {
		return m
	}
	return c.env.body
}

// shellOutput is a shell call's stdout and stderr, joined by a newline.
func (e *envelope) shellOutput() string {
	out, errOut := jsonscan.Str(e.raw(e.stdout)), jsonscan.Str(e.raw(e.stderr))
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
func (c *call) successOutput() string {
	e := &c.env
	if c.kind == event.KindShell {
		return e.shellOutput()
	}
	switch c.key {
	case "readToolCall":
		return jsonscan.Str(e.raw(e.content))
	case "writeToolCall", "editToolCall", "deleteToolCall":
		return ""
	case "globToolCall":
		return joinStrings(e.raw(e.files))
	case "grepToolCall":
		if out := grepOutput(e.raw(e.workspaceResults)); out != "" {
			return out
		}
	case "lsToolCall":
		var b strings.Builder
		listTree(&b, e.raw(e.directoryTreeRoot), "", 0)
		return b.String()
	case "mcpToolCall":
		var parts []string
		jsonscan.Values(e.raw(e.content), func(v string) bool {
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
	env := e.body
	if jsonscan.IsString(env) {
		return jsonscan.Str(env)
	}
	if jsonscan.IsObject(env) && len(env) <= 2 {
		return ""
	}
	return env
}

// grepOutput renders grep matches (a result's workspaceResults) as
// file:line:text, one a line.
func grepOutput(workspaceResults string) string {
	var b strings.Builder
	jsonscan.Values(workspaceResults, func(ws string) bool {
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
func (c *call) fileChange(end *event.ToolEnd) {
	switch c.kind {
	case event.KindWrite, event.KindEdit, event.KindDelete:
	default:
		return
	}
	if path := c.changedPath(); path != "" {
		end.Paths = []string{path}
	}
}

// changedPath is the file a write, edit or delete changed: the result's
// path, else the one in the arguments.
func (c *call) changedPath() string {
	if path := jsonscan.Str(c.env.raw(c.env.path)); path != "" {
		return path
	}
	return c.path()
}
