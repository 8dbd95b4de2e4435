package opencode

import (
	"encoding/json"
	"strings"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/event"
)

// builtinKinds maps OpenCode's built-in tools to kinds.
var builtinKinds = map[string]event.Kind{
	"bash": event.KindShell, "read": event.KindRead, "write": event.KindWrite,
	"edit": event.KindEdit, "multiedit": event.KindEdit, "patch": event.KindEdit, "apply_patch": event.KindEdit,
	"glob": event.KindSearch, "grep": event.KindSearch, "list": event.KindSearch, "ls": event.KindSearch,
	"codesearch": event.KindSearch, "webfetch": event.KindWeb, "websearch": event.KindWeb,
	"task": event.KindTask, "todowrite": event.KindTodo, "todoread": event.KindTodo,
	"skill": event.KindOther, "lsp": event.KindOther, "batch": event.KindOther, "question": event.KindOther,
	"invalid": event.KindOther, "plan_enter": event.KindOther, "plan_exit": event.KindOther,
}

// toolKind returns the kind of a tool. OpenCode names MCP tools
// "<server>_<tool>" and never prefixes them otherwise, so a name outside the
// built-in set that has an underscore is taken for an MCP tool; a plugin
// tool named that way would be misread, which only costs its kind.
func toolKind(name string) event.Kind {
	if k, ok := builtinKinds[name]; ok {
		return k
	}
	if i := strings.IndexByte(name, '_'); i > 0 && i < len(name)-1 {
		return event.KindMCP
	}
	return event.KindOther
}

// denied tells the errors of a permission rule or a rejected request
// (PermissionNext's DeniedError, RejectedError, CorrectedError) from other
// tool failures.
func denied(msg string) bool {
	return strings.Contains(msg, "rejected permission") ||
		strings.Contains(msg, "prevents you from using this specific tool call")
}

// toolUse turns one tool part, reported once when the call is over, into its
// start and end. A part still pending or running (never printed by current
// builds) only opens the call.
func toolUse(dst []event.Body, part *part) []event.Body {
	id := part.callID
	if id == "" {
		id = part.id
	}
	if id == "" {
		id = "call"
	}
	name := part.tool
	if name == "" {
		name = "unknown"
	}
	kind := toolKind(name)
	state := &part.state
	status, output, errText := jsonscan.Str(state.status), jsonscan.Str(state.output), jsonscan.Str(state.err)
	input, meta, times := state.input, state.meta, state.time // raw JSON
	switch {
	case name == "patch" || name == "apply_patch":
		kind = patchKind(jsonscan.Get(meta, "files"))
	case name == "write" && jsonscan.Bool(jsonscan.Get(meta, "exists")):
		kind = event.KindEdit // the spec's rule: changing a file is an edit
	}
	st := &event.ToolStart{CallID: id, Name: name, Kind: kind}
	if jsonscan.IsObject(input) {
		st.Input = json.RawMessage(input)
	}
	switch kind {
	case event.KindShell:
		st.Command = jsonscan.Str(jsonscan.Get(input, "command"))
	case event.KindRead, event.KindWrite, event.KindEdit:
		st.Path = jsonscan.Str(jsonscan.Get(input, "filePath"))
	}
	dst = append(dst, st)
	if status != "completed" && status != "error" {
		return dst
	}
	end := &event.ToolEnd{CallID: id, Name: name, Kind: kind, Status: event.StatusOK}
	if t0, t1 := jsonscan.Int(jsonscan.Get(times, "start")), jsonscan.Int(jsonscan.Get(times, "end")); t0 > 0 && t1 >= t0 {
		end.DurationMS = t1 - t0
	}
	if status == "error" {
		end.Status = event.StatusError
		end.Output = errText
		if denied(end.Output) {
			end.Status = event.StatusDenied
		}
	} else {
		end.Output = output
		fileChange(end, st, input, meta)
	}
	if kind == event.KindShell {
		if code := jsonscan.Get(meta, "exit"); jsonscan.IsNumber(code) {
			// OpenCode reports a failed command as completed.
			n := jsonscan.Int(code)
			end.ExitCode = event.Int(int(n))
			if n != 0 && end.Status == event.StatusOK {
				end.Status = event.StatusError
			}
		}
	}
	return append(dst, end)
}

// fileChange sets the Paths and Diff of a completed write, edit or patch.
func fileChange(end *event.ToolEnd, st *event.ToolStart, input, meta string) {
	get := func(raw, key string) string { return jsonscan.Str(jsonscan.Get(raw, key)) }
	path := st.Path
	switch st.Name {
	case "write":
		if path == "" {
			return
		}
		end.Paths = []string{path}
		// The metadata says whether the file was there before; its old
		// content is not reported, so only a new file gets a diff.
		if !jsonscan.Bool(jsonscan.Get(meta, "exists")) {
			end.Diff = adapters.UnifiedDiff(path, "", get(input, "content"))
		}
	case "edit":
		if path == "" {
			path = jsonscan.Str(jsonscan.Path(meta, "filediff", "file"))
		}
		if path != "" {
			end.Paths = []string{path}
		}
		end.Diff = get(meta, "diff")
		if end.Diff == "" && jsonscan.Get(input, "oldString") != "" {
			end.Diff = adapters.UnifiedDiff(path, get(input, "oldString"), get(input, "newString"))
		}
	case "multiedit":
		if path != "" {
			end.Paths = []string{path}
		}
		end.Diff = get(meta, "diff")
		if end.Diff == "" {
			var diffs []string
			jsonscan.Values(jsonscan.Get(meta, "results"), func(r string) bool {
				diffs = append(diffs, get(r, "diff"))
				return true
			})
			end.Diff = adapters.JoinDiffs(diffs...)
		}
		if end.Diff == "" {
			var diffs []string
			jsonscan.Values(jsonscan.Get(input, "edits"), func(e string) bool {
				diffs = append(diffs, adapters.UnifiedDiff(path, get(e, "oldString"), get(e, "newString")))
				return true
			})
			end.Diff = adapters.JoinDiffs(diffs...)
		}
	case "patch", "apply_patch":
		patchChange(end, meta)
	}
}

func patchChange(end *event.ToolEnd, meta string) {
	get := func(raw, key string) string { return jsonscan.Str(jsonscan.Get(raw, key)) }
	var diffs []string
	jsonscan.Values(jsonscan.Get(meta, "files"), func(f string) bool {
		if p := get(f, "filePath"); p != "" {
			end.Paths = append(end.Paths, p)
		}
		if mp := get(f, "movePath"); mp != "" {
			end.Paths = append(end.Paths, mp)
		}
		diffs = append(diffs, get(f, "diff"))
		return true
	})
	end.Diff = get(meta, "diff")
	if end.Diff == "" {
		end.Diff = adapters.JoinDiffs(diffs...)
	}
}

// patchKind is write for a patch that only adds files, delete for one that
// only removes files, else edit.
func patchKind(files string) event.Kind {
	adds, deletes, n := 0, 0, 0
	jsonscan.Values(files, func(f string) bool {
		switch jsonscan.Str(jsonscan.Get(f, "type")) {
		case "add":
			adds++
		case "delete":
			deletes++
		}
		n++
		return true
	})
	switch {
	case n > 0 && adds == n:
		return event.KindWrite
	case n > 0 && deletes == n:
		return event.KindDelete
	}
	return event.KindEdit
}
