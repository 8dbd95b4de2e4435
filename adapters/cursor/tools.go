package cursor

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters"
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
	args   gjson.Result
	result gjson.Result
}

// parseCall reads a raw tool_call object.
func parseCall(raw string) call {
	if !jsonscan.IsObject(raw) {
		return parseCallJSON(gjson.Parse(raw))
	}
	var c call
	jsonscan.Each(raw, func(k, v string) bool {
		c.key = k
		var name, args string
		jsonscan.Each(v, func(k, v string) bool {
			switch k {
			case "args":
				c.args = gjson.Parse(v)
			case "result":
				c.result = gjson.Parse(v)
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
			c.args = gjson.Parse(args)
			if c.args.Type == gjson.String { // OpenAI style: a JSON string
				c.args = gjson.Parse(c.args.String())
			}
		}
		return false // one key names the tool
	})
	return c.named()
}

// parseCallJSON reads a tool_call that is not an object, as gjson sees it.
func parseCallJSON(tc gjson.Result) call {
	var c call
	tc.ForEach(func(k, v gjson.Result) bool {
		c.key = k.String()
		v.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "args":
				c.args = v
			case "result":
				c.result = v
			}
			return true
		})
		if c.key == "function" {
			c.name = v.Get("name").String()
			c.kind = functionKinds[c.name]
			c.args = v.Get("arguments")
			if c.args.Type == gjson.String { // OpenAI style: a JSON string
				c.args = gjson.Parse(c.args.String())
			}
		}
		return false // one key names the tool
	})
	return c.named()
}

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
	return c
}

func (c call) path() string {
	switch c.kind {
	case event.KindRead, event.KindWrite, event.KindEdit, event.KindDelete:
		for _, k := range [...]string{"path", "target_file", "file_path"} {
			if p := c.args.Get(k).String(); p != "" {
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
	if cmd := c.args.Get("command").String(); cmd != "" {
		return cmd
	}
	// A rejected call's completion has no args, only the envelope.
	_, env := c.envelope()
	return env.Get("command").String()
}

func (c call) start(id string) *event.ToolStart {
	st := &event.ToolStart{CallID: id, Name: c.name, Kind: c.kind, Path: c.path(), Command: c.command()}
	if c.args.IsObject() {
		st.Input = json.RawMessage(c.args.Raw)
	}
	return st
}

// envelope returns the result's variant (success, failure, rejected, error)
// and its body.
func (c call) envelope() (variant string, body gjson.Result) {
	c.result.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "success", "failure", "rejected", "error":
			variant, body = k.Str, v
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
		if c.kind == event.KindMCP && env.Get("isError").Bool() {
			end.Status = event.StatusError
		}
		c.fileChange(end, env)
	case "failure":
		end.Status = event.StatusError
		end.Output = failureOutput(c, env)
	case "rejected":
		end.Status = event.StatusDenied
		end.Output = env.Get("reason").String()
		if end.Output == "" {
			end.Output = "rejected"
		}
	case "error":
		end.Status = event.StatusError
		end.Output = env.Get("message").String()
		if end.Output == "" {
			end.Output = env.Raw
		}
	default:
		end.Status = event.StatusError
		if c.result.Exists() {
			end.Output = c.result.Raw
		} else {
			end.Output = "the tool call completed without a result"
		}
	}
	if c.kind == event.KindShell {
		if code := env.Get("exitCode"); code.Type == gjson.Number {
			end.ExitCode = event.Int(int(code.Int()))
			if code.Int() != 0 && end.Status == event.StatusOK {
				end.Status = event.StatusError
			}
		}
	}
	return end
}

func failureOutput(c call, env gjson.Result) string {
	if c.kind == event.KindShell {
		return shellOutput(env)
	}
	if m := env.Get("message").String(); m != "" {
		return m
	}
	return env.Raw
}

func shellOutput(env gjson.Result) string {
	out, errOut := env.Get("stdout").String(), env.Get("stderr").String()
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
func (c call) successOutput(env gjson.Result) string {
	if c.kind == event.KindShell {
		return shellOutput(env)
	}
	switch c.key {
	case "readToolCall":
		return env.Get("content").String()
	case "writeToolCall", "editToolCall", "deleteToolCall":
		return ""
	case "globToolCall":
		return joinStrings(env.Get("files"))
	case "grepToolCall":
		if out := grepOutput(env); out != "" {
			return out
		}
	case "lsToolCall":
		var b strings.Builder
		listTree(&b, env.Get("directoryTreeRoot"), "", 0)
		return b.String()
	case "mcpToolCall":
		var parts []string
		env.Get("content").ForEach(func(_, v gjson.Result) bool {
			if t := v.Get("text.text"); t.Exists() {
				parts = append(parts, t.String())
			} else if t := v.Get("text"); t.Type == gjson.String {
				parts = append(parts, t.String())
			}
			return true
		})
		if parts != nil {
			return strings.Join(parts, "\n")
		}
	}
	if env.Type == gjson.String {
		return env.String()
	}
	if env.IsObject() && len(env.Raw) <= 2 {
		return ""
	}
	return env.Raw
}

// grepOutput renders grep matches as file:line:text, one a line.
func grepOutput(env gjson.Result) string {
	var b strings.Builder
	env.Get("workspaceResults").ForEach(func(_, ws gjson.Result) bool {
		ws.Get("content.matches").ForEach(func(_, file gjson.Result) bool {
			name := file.Get("file").String()
			file.Get("matches").ForEach(func(_, m gjson.Result) bool {
				b.WriteString(name + ":" + m.Get("lineNumber").String() + ":" + m.Get("content").String() + "\n")
				return b.Len() < event.MaxOutputBytes
			})
			return b.Len() < event.MaxOutputBytes
		})
		return b.Len() < event.MaxOutputBytes
	})
	return b.String()
}

func joinStrings(arr gjson.Result) string {
	var b strings.Builder
	arr.ForEach(func(_, v gjson.Result) bool {
		b.WriteString(v.String())
		b.WriteByte('\n')
		return true
	})
	return b.String()
}

// listTree renders an ls result, one entry a line, directories with a
// trailing slash, a few levels deep.
func listTree(b *strings.Builder, dir gjson.Result, indent string, depth int) {
	if depth > 8 || b.Len() > event.MaxOutputBytes {
		return
	}
	dir.Get("childrenDirs").ForEach(func(_, d gjson.Result) bool {
		name := d.Get("name").String()
		if name == "" {
			name = d.Get("absPath").String()
		}
		b.WriteString(indent + name + "/\n")
		listTree(b, d, indent+"  ", depth+1)
		return true
	})
	dir.Get("childrenFiles").ForEach(func(_, f gjson.Result) bool {
		b.WriteString(indent + f.Get("name").String() + "\n")
		return true
	})
}

// fileChange sets Paths and Diff of a successful write, edit or delete.
func (c call) fileChange(end *event.ToolEnd, env gjson.Result) {
	switch c.kind {
	case event.KindWrite, event.KindEdit, event.KindDelete:
	default:
		return
	}
	path := env.Get("path").String()
	if path == "" {
		path = c.path()
	}
	if path != "" {
		end.Paths = []string{path}
	}
	switch c.kind {
	case event.KindWrite:
		if text := c.args.Get("fileText"); text.Exists() {
			end.Diff = adapters.UnifiedDiff(path, "", text.String())
		}
	case event.KindEdit:
		end.Diff = c.editDiff(path, env)
	}
}

func (c call) editDiff(path string, env gjson.Result) string {
	if d := env.Get("diffString").String(); d != "" {
		return d
	}
	before, after := env.Get("beforeFullFileContent"), env.Get("afterFullFileContent")
	if before.Exists() && after.Exists() {
		return adapters.UnifiedDiff(path, before.String(), after.String())
	}
	if r := c.args.Get("strReplace"); r.Exists() {
		return adapters.UnifiedDiff(path, r.Get("oldText").String(), r.Get("newText").String())
	}
	var diffs []string
	c.args.Get("multiStrReplace.edits").ForEach(func(_, e gjson.Result) bool {
		diffs = append(diffs, adapters.UnifiedDiff(path, e.Get("oldText").String(), e.Get("newText").String()))
		return true
	})
	return adapters.JoinDiffs(diffs...)
}
