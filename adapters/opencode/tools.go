package opencode

import (
	"strings"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/adapters/internal/known"
	"github.com/agentharness/harness/event"
)

// BuiltinKind is the kind of one of OpenCode's built-in tools by its
// name, and whether name is one (opencode acp titles a call with its
// tool's name until the call runs). A switch, not a map: hashing the name
// was 2.8 M of harness parse's 512 M instructions on a 20 MB OpenCode
// stream (callgrind).
func BuiltinKind(name string) (event.Kind, bool) {
	switch name {
	case "bash":
		return event.KindShell, true
	case "read":
		return event.KindRead, true
	case "write":
		return event.KindWrite, true
	case "edit", "multiedit", "patch", "apply_patch":
		return event.KindEdit, true
	case "glob", "grep", "list", "ls", "codesearch":
		return event.KindSearch, true
	case "webfetch", "websearch":
		return event.KindWeb, true
	case "task":
		return event.KindTask, true
	case "todowrite", "todoread":
		return event.KindTodo, true
	case "skill", "lsp", "batch", "question", "invalid", "plan_enter", "plan_exit":
		return event.KindOther, true
	}
	return "", false
}

// toolKind returns the kind of a tool. OpenCode names MCP tools
// "<server>_<tool>" and never prefixes them otherwise, so a name outside the
// built-in set that has an underscore is taken for an MCP tool; a plugin
// tool named that way would be misread, which only costs its kind.
func toolKind(name string) event.Kind {
	if k, ok := BuiltinKind(name); ok {
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

// input holds the raw members of a tool's input the parser reads, and
// metadata those of its metadata, read with the line (each read with Get
// before: up to six walks of an edit's input, four of its metadata); the
// first of duplicate keys wins, as with Get.
type input struct {
	command, filePath, content, oldString, newString, replaceAll string
}

type metadata struct {
	files, exists, exit, diff string
	filediff                  fileDiff // read in the same walk
}

// fileDiff holds the raw members of an edit's filediff.
type fileDiff struct {
	file, before, after string
}

// read reads the input object at the start of rest and returns its
// length (0 when rest does not start with an object).
func (in *input) read(rest string) int {
	return jsonscan.EachEnd(rest, func(k, v string) bool {
		switch k {
		case "command":
			jsonscan.SetFirst(&in.command, v)
		case "filePath":
			jsonscan.SetFirst(&in.filePath, v)
		case "content":
			jsonscan.SetFirst(&in.content, v)
		case "oldString":
			jsonscan.SetFirst(&in.oldString, v)
		case "newString":
			jsonscan.SetFirst(&in.newString, v)
		case "replaceAll":
			jsonscan.SetFirst(&in.replaceAll, v)
		}
		return true
	})
}

// read reads the metadata object at the start of rest and returns its
// length (0 when rest does not start with an object).
func (m *metadata) read(rest string) int {
	filediff := false
	return jsonscan.Fields(rest, func(k, rest string) (int, bool) {
		var dst *string
		switch k {
		case "files":
			dst = &m.files
		case "exists":
			dst = &m.exists
		case "exit":
			dst = &m.exit
		case "diff":
			dst = &m.diff
		case "filediff":
			if filediff {
				return 0, true
			}
			filediff = true
			fd := &m.filediff
			return jsonscan.EachEnd(rest, func(k, v string) bool {
				switch k {
				case "file":
					jsonscan.SetFirst(&fd.file, v)
				case "before":
					jsonscan.SetFirst(&fd.before, v)
				case "after":
					jsonscan.SetFirst(&fd.after, v)
				}
				return true
			}), true
		default:
			return 0, true
		}
		v := jsonscan.Value(rest)
		jsonscan.SetFirst(dst, v)
		return len(v), true
	})
}

// toolUse turns one tool part, reported once when the call is over, into its
// start and end. A part still pending or running (never printed by current
// builds) only opens the call. lines made the part's pieces.
func toolUse(dst []event.Body, part *part, wall bool, files *known.Files, lines *jsonscan.Lines) []event.Body {
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
	status, output, errText := state.status, state.output, state.err
	raw := state.input // raw JSON
	md := &state.md
	switch {
	case name == "patch" || name == "apply_patch":
		kind = patchKind(md.files)
	case name == "write" && jsonscan.Bool(md.exists):
		kind = event.KindEdit // the spec's rule: changing a file is an edit
	}
	st := &event.ToolStart{CallID: id, Name: name, Kind: kind}
	if jsonscan.IsObject(raw) {
		st.Input = lines.Bytes(raw)
	}
	in := &state.in
	switch kind {
	case event.KindShell:
		st.Command = jsonscan.Str(in.command)
	case event.KindRead, event.KindWrite, event.KindEdit:
		st.Path = jsonscan.Str(in.filePath)
	}
	dst = append(dst, st)
	if status != "completed" && status != "error" {
		return dst
	}
	end := &event.ToolEnd{CallID: id, Name: name, Kind: kind, Status: event.StatusOK}
	if t0, t1 := state.start.N, state.end.N; !wall && t0 > 0 && t1 >= t0 {
		end.DurationMS, end.DurationNative = t1-t0, true
	}
	if status == "error" {
		end.Status = event.StatusError
		end.Output = errText
		if denied(end.Output) {
			end.Status = event.StatusDenied
		} else if kind == event.KindWrite || kind == event.KindEdit || kind == event.KindDelete {
			files.ForgetAll() // a failed change may have changed the file
		}
	} else {
		end.Output = output
		fileChange(end, st, in, md, files)
	}
	files.TouchedBy(kind)
	if kind == event.KindShell {
		if code := md.exit; jsonscan.IsNumber(code) {
			// OpenCode reports a failed command as completed.
			n := jsonscan.Int(code)
			end.ExitCode = event.Int(int(n))
			if n != 0 && end.Status == event.StatusOK {
				end.Status = event.StatusError
			}
		} else if end.Status == event.StatusOK {
			// A command OpenCode killed has no exit code and is completed
			// too: only its output's trailer tells why.
			end.Status = killedStatus(output, end.Status)
		}
	}
	return append(dst, end)
}

// The trailer OpenCode's bash tool (1.18.33, the pinned build) appends to
// the output of a command it killed: "\n\n<shell_metadata>\n" + the reason
// + "\n</shell_metadata>", the reason one of the texts below.
const (
	trailerOpen  = "\n\n<shell_metadata>\n"
	trailerClose = "\n</shell_metadata>"
	timedOutHead = "shell tool terminated command after exceeding timeout "
	timedOutTail = " ms. If this command is expected to take longer and is not waiting for interactive input, " +
		"retry with a larger timeout value in milliseconds."
	aborted = "User aborted the command"
)

// killedStatus is timeout for the output of a command OpenCode killed at
// its timeout, cancelled for one the user aborted, else status. Only the
// exact texts the pinned build prints count: a command's own output that
// merely mentions a timeout does not.
func killedStatus(output, status string) string {
	body, ok := strings.CutSuffix(output, trailerClose)
	if !ok {
		return status
	}
	i := strings.LastIndex(body, trailerOpen)
	if i < 0 {
		return status
	}
	switch reason := body[i+len(trailerOpen):]; {
	case reason == aborted:
		return event.StatusCancelled
	case len(reason) > len(timedOutHead)+len(timedOutTail) &&
		strings.HasPrefix(reason, timedOutHead) && strings.HasSuffix(reason, timedOutTail):
		// The head and tail share a space: the length check keeps them apart.
		if ms := reason[len(timedOutHead) : len(reason)-len(timedOutTail)]; !strings.ContainsAny(ms, "\n ") {
			return event.StatusTimeout
		}
	}
	return status
}

// fileChange sets the Paths and Diff of a completed write, edit or patch.
// A diff is made only from the file's full content before and after, as
// OpenCode reports it (edit's filediff in builds that include before and
// after, apply_patch's files), or for a file written new. OpenCode's own
// patch text is not used: it has the indentation common to its lines
// trimmed and line ends normalized, so it may not apply to the file.
// Anything else gets no diff, and says so.
func fileChange(end *event.ToolEnd, st *event.ToolStart, in *input, md *metadata, files *known.Files) {
	path := st.Path
	switch st.Name {
	case "write":
		if path == "" {
			files.ForgetAll()
			return
		}
		end.Paths = []string{path}
		content := in.content
		if !jsonscan.IsString(content) {
			files.ForgetAll()
			break
		}
		// The metadata says whether the file was there before; its old
		// content is not reported, so a new file, or one whose content
		// the stream showed, gets a diff.
		after := adapters.Present(jsonscan.Str(content))
		before, seen := files.Get(path)
		switch exists := md.exists; {
		case exists == "false":
			end.Diff = adapters.Diff(path, adapters.File{}, after)
		case exists == "true" && seen && before.Exists:
			end.Diff = adapters.Diff(path, before, after)
		}
		files.Set(path, after)
	case "edit", "multiedit":
		fd := &md.filediff
		if path == "" {
			path = jsonscan.Str(fd.file)
		}
		if path != "" {
			end.Paths = []string{path}
		}
		before, after := fd.before, fd.after
		switch {
		case path != "" && jsonscan.IsString(before) && jsonscan.IsString(after):
			after := adapters.Present(jsonscan.Str(after))
			end.Diff = adapters.Diff(path, adapters.Present(jsonscan.Str(before)), after)
			files.Set(path, after)
		case path != "" && st.Name == "edit":
			end.AgentPatch = jsonscan.Str(md.diff) // for a live run to check against the disk
			if b, a, ok := editFromKnown(files, path, in, end.AgentPatch); ok {
				end.Diff = adapters.Diff(path, b, a)
				files.Set(path, a)
			} else {
				files.ForgetAll()
			}
		default:
			files.ForgetAll()
		}
	case "patch", "apply_patch":
		patchChange(end, md.files)
		files.ForgetAll() // contents followed through writes and edits only
	}
	if end.Diff == "" && len(end.Paths) > 0 {
		end.DiffSkipped = event.DiffSkippedUnknown
	}
}

// editFromKnown makes an edit's change from the file's content the stream
// showed whole, as OpenCode's edit does it: an exact oldString found once
// (or everywhere, with replaceAll) is replaced, which its first replacer
// always does. OpenCode's own patch of the edit (its indentation may be
// trimmed) must apply exactly to that content and give the same result:
// a file changed out of the stream's sight (a formatter) gives none.
func editFromKnown(files *known.Files, path string, in *input, patch string) (before, after adapters.File, ok bool) {
	file, seen := files.Get(path)
	oldRaw, newRaw := in.oldString, in.newString
	if !seen || !file.Exists || !jsonscan.IsString(oldRaw) || !jsonscan.IsString(newRaw) {
		return before, after, false
	}
	old, repl := jsonscan.Str(oldRaw), jsonscan.Str(newRaw)
	if old == "" || strings.ContainsAny(file.Text+old+repl, "\r") {
		return before, after, false
	}
	n := strings.Count(file.Text, old)
	var text string
	switch all := jsonscan.Bool(in.replaceAll); {
	case n == 1:
		text = strings.Replace(file.Text, old, repl, 1)
	case n > 1 && all:
		text = strings.ReplaceAll(file.Text, old, repl)
	default:
		return before, after, false
	}
	ps, err := event.ParsePatch(patch)
	if err != nil || len(ps) != 1 {
		return before, after, false
	}
	got, exists, err := event.ApplyPatch(ps[0], file.Text, true)
	if err != nil || !exists || got != text {
		return before, after, false
	}
	return file, adapters.Present(text), true
}

// patchChange diffs each file of a patch (the metadata's files) from its
// before and after content; without them for every file, the patch gets
// no diff.
func patchChange(end *event.ToolEnd, files string) {
	var diffs []string
	exact := true
	jsonscan.Values(files, func(raw string) bool {
		f := readPatchFile(raw)
		p, mp := jsonscan.Str(f.filePath), jsonscan.Str(f.movePath)
		if p != "" {
			end.Paths = append(end.Paths, p)
		}
		if mp != "" {
			end.Paths = append(end.Paths, mp)
		}
		rawBefore, rawAfter := f.before, f.after
		if p == "" || !jsonscan.IsString(rawBefore) || !jsonscan.IsString(rawAfter) {
			exact = false
			return true
		}
		if !nameable(p) || mp != "" && !nameable(mp) {
			exact = false // its diff would be left out: not half the patch
			return true
		}
		before, after := adapters.Present(jsonscan.Str(rawBefore)), adapters.Present(jsonscan.Str(rawAfter))
		switch jsonscan.Str(f.typ) {
		case "add":
			before = adapters.File{}
		case "delete":
			after = adapters.File{}
		}
		if mp != "" && mp != p {
			diffs = append(diffs, adapters.Diff(p, before, adapters.File{}), adapters.Diff(mp, adapters.File{}, after))
		} else {
			diffs = append(diffs, adapters.Diff(p, before, after))
		}
		return true
	})
	if exact {
		end.Diff = adapters.JoinDiffs(diffs...)
	}
}

// patchFile holds the raw members of a file of a patch's metadata, read in
// one walk; the first of duplicate keys wins, as with Get.
type patchFile struct {
	filePath, movePath, before, after, typ string
}

func readPatchFile(raw string) patchFile {
	var f patchFile
	jsonscan.Each(raw, func(k, v string) bool {
		switch k {
		case "filePath":
			jsonscan.SetFirst(&f.filePath, v)
		case "movePath":
			jsonscan.SetFirst(&f.movePath, v)
		case "before":
			jsonscan.SetFirst(&f.before, v)
		case "after":
			jsonscan.SetFirst(&f.after, v)
		case "type":
			jsonscan.SetFirst(&f.typ, v)
		}
		return true
	})
	return f
}

// nameable reports whether a diff's headers can name the file at path
// (adapters.HeaderName).
func nameable(path string) bool {
	_, ok := adapters.HeaderName(path)
	return ok
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
