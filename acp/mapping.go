package acp

import (
	"cmp"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/claude"
	"github.com/agentharness/harness/adapters/codex"
	"github.com/agentharness/harness/adapters/gemini"
	"github.com/agentharness/harness/adapters/opencode"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/idset"
)

// mapper turns session/update notifications and the prompt's answer into
// unified bodies (docs/events.md, "ACP"). It keeps the text and thought
// streamed so far, to close them as a message and a reasoning block, and
// the open tool calls: of each only what is emitted, within the caps
// (caps.go), whatever the agent streams.
type mapper struct {
	text, thought capped
	lastMessage   string           // the last complete message no tool call followed
	open          map[string]*tool // by ACP toolCallId, announced or started
	ended         idset.Set        // calls that ended, or that a turn's end closed: a later update of one is late news
	held          int              // bytes the open calls keep (input, output, diffs), at most maxHeld
	live          bool             // a live session: diffs are checked against the disk
	cwd           string           // a replayed session's directory: its diffs name files from there, as a live run's do
	denied        map[string]bool  // calls whose permission harness refused
	refused       idset.Set        // calls ended denied before the agent reported their end: its report is no news
	cost          *float64         // the session's cost from usage_update, in USD
	setup         bool             // the prompt is not sent yet: text is not the answer
	noUsage       bool             // the agent's usage is known to be wrong: none is reported
	modes         []string         // the session's modes (session/new), for a captured set_mode's echo
	agent         string           // initialize's agentInfo.name
	heard         bool             // the turn has said something (text, thought, tool)
	systemError   bool             // codex-acp: the turn failed; its text is the error's message
	errText       capped           // that message, within keepText
	diffs         event.DiffReplay // what a replayed session's diffs showed of each file
}

type tool struct {
	name, acpKind, path string
	input               json.RawMessage
	kind                event.Kind
	outCut              bool          // out was cut at event.MaxOutputBytes (or dropped, past maxHeld)
	diffSkip            string        // why the diff content last shown was not kept
	heldInput, heldOut  int           // the bytes of input, and of out and diffs, counted in held
	out                 string        // the text content last shown
	diffs               []diffContent // the diff content last shown
	started             bool
	claudeTool          string          // claude-agent-acp: Claude Code's own tool name
	claudeResponse      json.RawMessage // claude-agent-acp: Claude Code's tool result, within maxClaudeResponse and maxHeld
	claudeSkip          string          // why that result was not kept
	heldMeta            int             // the bytes of claudeResponse and terminal, counted in held
	terminal            strings.Builder // codex-acp: the command's output, streamed in _meta
}

// toolUpdate is a tool_call or tool_call_update.
type toolUpdate struct {
	ToolCallID string          `json:"toolCallId"`
	Title      *string         `json:"title"`
	ToolKind   *string         `json:"kind"`
	Status     *string         `json:"status"`
	RawInput   json.RawMessage `json:"rawInput"`
	RawOutput  json.RawMessage `json:"rawOutput"`
	Content    json.RawMessage `json:"content"`
	Locations  []struct {
		Path string `json:"path"`
	} `json:"locations"`
	Meta toolMeta `json:"_meta"`
}

// toolMeta is what harness reads of a call's _meta, leniently (lenient).
type toolMeta struct {
	// claude-agent-acp passes Claude Code's tool name and its tool
	// result (originalFile, structuredPatch): the exact data the
	// Claude CLI adapter makes its diffs from.
	ClaudeCode struct {
		ToolName     string          `json:"toolName"`
		ToolResponse json.RawMessage `json:"toolResponse"`
	} `json:"claudeCode"`
	// codex-acp 2 streams a command's output and exit status here
	// (its content is a terminal harness did not ask for).
	TerminalOutput struct {
		Data string `json:"data"`
	} `json:"terminal_output_delta"`
	TerminalExit struct {
		ExitCode *float64 `json:"exit_code"`
	} `json:"terminal_exit"`
	// codex-acp 2: the thread's status; "systemError" when the turn failed.
	Codex struct {
		ThreadStatus struct {
			Type string `json:"type"`
		} `json:"threadStatus"`
	} `json:"codex"`
}

func (m *toolMeta) UnmarshalJSON(b []byte) error {
	type fields toolMeta // without this method
	return lenient(b, (*fields)(m))
}

// lenient decodes b into v as far as its fields fit: _meta is free-form
// (ACP's extension point), so a field of a shape harness does not read
// is no data, never a message left unread.
func lenient(b []byte, v any) error {
	json.Unmarshal(b, v) // a field that does not fit is left zero; the others are set
	return nil
}

func (m *mapper) init() {
	m.open = map[string]*tool{}
	m.denied = map[string]bool{}
}

// kinds maps ACP's tool kinds to ours.
var kinds = map[string]event.Kind{
	"read": event.KindRead, "edit": event.KindEdit, "delete": event.KindDelete, "move": event.KindEdit,
	"search": event.KindSearch, "execute": event.KindShell, "think": event.KindOther,
	"fetch": event.KindWeb, "switch_mode": event.KindOther, "other": event.KindOther,
}

// update maps one session/update's params.
func (m *mapper) update(dst []event.Body, params json.RawMessage) ([]event.Body, bool) {
	var p struct {
		Update struct {
			Kind string `json:"sessionUpdate"`
			toolUpdate
			// plan
			Entries json.RawMessage `json:"entries"`
			// usage_update
			Cost *struct {
				Amount   usd    `json:"amount"`
				Currency string `json:"currency"`
			} `json:"cost"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &p) != nil {
		return dst, false
	}
	u := &p.Update
	switch u.Kind {
	case "agent_message_chunk", "agent_thought_chunk", "plan", "tool_call", "tool_call_update":
		// The agent has gone on past a refused call (Gemini reports no
		// end of it): it ends denied here, before what came after it.
		if len(m.denied) > 0 {
			dst = m.endDenied(dst, callID(u.ToolCallID))
		}
	}
	switch u.Kind {
	case "agent_message_chunk":
		t := blockText(u.Content)
		switch {
		case t == "" || m.setup || m.modeEcho(t):
		case m.systemError:
			// The failed turn's text is the error's message, not an answer.
			m.errText.WriteString(t)
		default:
			m.heard = true
			m.text.WriteString(t)
			dst = append(dst, &event.TextDelta{Text: t})
		}
	case "agent_thought_chunk":
		if t := blockText(u.Content); t != "" {
			m.heard = true
			m.thought.WriteString(t)
			dst = append(dst, &event.ReasoningDelta{Text: t})
		}
	case "tool_call", "tool_call_update":
		u.ToolCallID = callID(u.ToolCallID)
		dst = m.toolCall(dst, &u.toolUpdate, u.Kind == "tool_call")
	case "plan":
		// A plan is the agent's todo list: one todo call, complete.
		id := "plan"
		input := json.RawMessage(`{}`)
		if json.Valid(u.Entries) {
			input, _ = json.Marshal(map[string]json.RawMessage{"entries": u.Entries})
		}
		dst = m.flushText(dst)
		dst = append(dst, &event.ToolStart{CallID: id, Name: "plan", Kind: event.KindTodo, Input: input},
			&event.ToolEnd{CallID: id, Name: "plan", Kind: event.KindTodo, Status: event.StatusOK})
	case "usage_update":
		if u.Cost != nil && strings.EqualFold(u.Cost.Currency, "USD") {
			v := float64(u.Cost.Amount)
			switch {
			case v == 0:
				v = 0 // -0 too, which the result would print as "-0"
			case !(v >= 0) || math.IsInf(v, 1):
				// Counts as 0, with the warning a garbage cost gets over
				// the CLI (docs/events.md, usage): it was dropped unsaid.
				v = 0
				dst = append(dst, &event.Warning{Code: event.WarnUsageMismatch,
					Message: "the agent reported a cost that is negative or not a finite number; it counts as 0"})
			}
			m.cost = &v
		}
	case "session_info_update":
		if u.Meta.Codex.ThreadStatus.Type == "systemError" {
			m.systemError = true
			dst = m.flushText(dst)
		}
	case "user_message_chunk", "available_commands_update", "current_mode_update", "config_option_update":
	default:
		return dst, false
	}
	return dst, true
}

func firstPath(locs []struct {
	Path string `json:"path"`
}) string {
	if len(locs) > 0 {
		return locs[0].Path
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// toolCall maps tool_call and tool_call_update. The call starts
// (tool_start) at its first sight and ends at its first completed or
// failed status. Agents announce a call before they know its input
// (Claude and OpenCode: "pending", rawInput {}) and fill it in with
// updates, possibly once the call has run: what is learned after the
// start (a path) goes on the tool_end only, never into a tool_start
// whose file the harness would then read after the change. An update
// of a call that already ended is dropped (announce: a tool_call, which
// starts a new call under the id again).
func (m *mapper) toolCall(dst []event.Body, u *toolUpdate, announce bool) []event.Body {
	if u.ToolCallID == "" {
		return dst
	}
	id := u.ToolCallID
	tc, known := m.open[id]
	if !known && !announce && m.ended.Has(id) {
		return m.late(dst, id, deref(u.Status))
	}
	m.heard = true
	if !known {
		tc = &tool{}
		m.open[id] = tc
	}
	if u.Title != nil && *u.Title != "" && !tc.started {
		tc.name = field(*u.Title)
	}
	if u.ToolKind != nil && *u.ToolKind != "" {
		tc.acpKind = field(*u.ToolKind)
	}
	if p := firstPath(u.Locations); p != "" {
		tc.path = field(p)
	}
	if hasInput(u.RawInput) {
		tc.input = u.RawInput // a copy already, the decoder's
	}
	if cc := &u.Meta.ClaudeCode; cc.ToolName != "" || len(cc.ToolResponse) > 0 {
		if cc.ToolName != "" {
			tc.claudeTool = cc.ToolName
		}
		if len(cc.ToolResponse) > 0 && string(cc.ToolResponse) != "null" {
			m.keepClaudeResponse(tc, cc.ToolResponse)
		}
	}
	if out, diffs := toolContent(u.Content); out != "" || len(diffs) > 0 {
		m.keepContent(tc, out, diffs) // content replaces content (ACP)
	}
	if d := u.Meta.TerminalOutput.Data; d != "" && tc.terminal.Len() < maxTerminal && m.held+len(d) <= maxHeld {
		tc.terminal.WriteString(d)
		tc.heldMeta += len(d)
		m.held += len(d)
	}
	status := deref(u.Status)
	if !tc.started {
		dst = m.start(dst, id, tc)
	}
	m.keepInput(tc) // the start had all of it
	if !tc.started || (status != "completed" && status != "failed") {
		return dst
	}
	delete(m.open, id)
	m.release(tc)
	m.ended.Add(id)
	end := &event.ToolEnd{CallID: id, Name: tc.name, Kind: tc.kind, Status: event.StatusOK}
	if status == "failed" {
		end.Status = event.StatusError
		if m.denied[id] {
			end.Status = event.StatusDenied
		}
	}
	end.Output, end.OutputTruncated = tc.out, tc.outCut
	delete(m.denied, id) // read above
	if end.Status == event.StatusOK && len(tc.diffs) == 0 {
		end.DiffSkipped = tc.diffSkip // diff content was shown but not kept
	}
	if end.Output == "" {
		end.Output = rawOutput(u.RawOutput)
	}
	if end.Output == "" {
		end.Output = tc.terminal.String()
	}
	if tc.kind == event.KindShell {
		code, ok := exitCode(u.RawOutput)
		if v := u.Meta.TerminalExit.ExitCode; !ok && v != nil && *v == float64(int32(*v)) {
			code, ok = int(*v), true
		}
		if ok {
			// OpenCode reports a failed command as completed, as over its CLI.
			end.ExitCode = event.Int(code)
			if code != 0 && end.Status == event.StatusOK {
				end.Status = event.StatusError
			}
		}
	}
	end.Paths = tc.paths()
	switch {
	case end.Status != event.StatusOK:
	case tc.claudeTool != "" && tc.claudeSkip != "" && (tc.kind == event.KindWrite || tc.kind == event.KindEdit):
		// Claude's result was not kept; its ACP diff content is not exact.
		end.DiffSkipped = tc.claudeSkip
	case tc.claudeTool != "" && len(tc.claudeResponse) > 0 && (tc.kind == event.KindWrite || tc.kind == event.KindEdit):
		// Claude's own data, as over its CLI; its ACP diff content is not
		// exact (the trailing newline of the texts is cut).
		if path, diff, skipped := claude.FileChange(tc.claudeTool, string(tc.input), string(tc.claudeResponse)); path != "" {
			end.Paths, end.Diff, end.DiffSkipped = []string{path}, m.display(diff, path), skipped
		}
	case len(tc.diffs) > 0:
		m.diff(end, tc.diffs)
	}
	if !m.live && end.Status == event.StatusOK && isFileKind(end.Kind) && end.Diff == "" && end.DiffSkipped == "" {
		// A capture that shows no change of a file call cannot say it
		// changed nothing (a live run's disk could): unknown, as a live
		// run says of a call it could not read before.
		end.DiffSkipped = event.DiffSkippedUnknown
	}
	// A replayed session's diffs are the agent's: one that contradicts
	// what the earlier ones showed of a file (made again, or changed
	// outside the session) is not passed on as exact. A live session's
	// are checked against the disk instead (AgentPatch).
	if !m.live {
		m.diffs.Limit = maxDiffsHeld // the mapper is a zero value: set where it is used
		if m.diffs.Apply(end) != nil {
			end.Diff, end.DiffSkipped = "", event.DiffSkippedUnknown
		}
	}
	return append(dst, end)
}

// late drops an update of a call that already ended. Its end was
// reported, by the agent or by the turn's end (cancelled, synthetic): a
// new call made of the update (ID#2, no input) would count a call twice.
// An end so reported is said, since the status the stream gave the call
// may have been a guess; other updates are dropped unsaid (codex-acp
// streams a command's output past its turn, claude-agent-acp may send a
// call's hook result after its end).
func (m *mapper) late(dst []event.Body, id, status string) []event.Body {
	if status != "completed" && status != "failed" || m.refused.Has(id) {
		return dst
	}
	return append(dst, &event.Warning{Code: event.WarnAgentWarning,
		Message: "acp: the agent reported tool call " + truncate(id, 200) + " " + status + " after it had ended; the update is dropped"})
}

// endDenied ends the open calls whose permission harness refused, but
// except, as denied: an agent may never report such a call failed
// (codex-acp ends its turn instead, Gemini goes on with its turn), and
// the turn's end would close it cancelled. The agent's own report of
// the call's end, if it comes later, is dropped unsaid (late).
func (m *mapper) endDenied(dst []event.Body, except string) []event.Body {
	for _, id := range slices.Sorted(maps.Keys(m.denied)) {
		tc := m.open[id]
		if tc == nil || !tc.started || id == except {
			continue
		}
		m.refused.Add(id)
		delete(m.open, id)
		delete(m.denied, id)
		m.release(tc)
		m.ended.Add(id)
		dst = append(dst, &event.ToolEnd{CallID: id, Name: tc.name, Kind: tc.kind, Status: event.StatusDenied,
			Output: "denied: its permission was refused", Paths: tc.paths()})
	}
	return dst
}

// requested sees the tool call of a session/request_permission (its
// toolCall is a tool_call_update by the spec): a call not announced yet
// (Gemini asks before it reports the call, and reports nothing more of a
// call refused) starts here, as an announcement would start it, so the
// text before it ends as a message (interim commentary, not the answer),
// and the call and its refusal leave a trace. A call already announced
// is left as it is, and one that already ended is late news (late): it
// opens no second call. It returns the call's id.
func (m *mapper) requested(dst []event.Body, params json.RawMessage) ([]event.Body, string) {
	var p struct {
		ToolCall toolUpdate `json:"toolCall"`
	}
	json.Unmarshal(params, &p)
	u := &p.ToolCall
	u.ToolCallID = callID(u.ToolCallID)
	if u.ToolCallID == "" || m.open[u.ToolCallID] != nil || m.ended.Has(u.ToolCallID) {
		return dst, u.ToolCallID
	}
	if len(m.denied) > 0 {
		dst = m.endDenied(dst, u.ToolCallID)
	}
	u.Status = nil // "pending": the call has not run
	return m.toolCall(dst, u, true), u.ToolCallID
}

// deny marks the call of id refused (within maxDenied): it ends denied.
// A call that already ended is not marked: the refusal came too late for
// it, and a call announced again under its id is not the one refused.
func (m *mapper) deny(id string) {
	if len(m.denied) < maxDenied && (m.open[id] != nil || !m.ended.Has(id)) {
		m.denied[id] = true
	}
}

// turnOver forgets the calls still open at a turn's end: the stream closes
// them with the turn (cancelled, synthetic), and an update of one that
// comes later is late news (late). A refusal is its turn's.
func (m *mapper) turnOver() {
	for id, tc := range m.open {
		m.release(tc)
		m.ended.Add(id)
	}
	clear(m.open)
	clear(m.denied)
}

// maxTerminal bounds the command output kept of a call (the stream caps
// an output further).
const maxTerminal = 1 << 20

// modeEcho reports whether t is Gemini's answer to session/set_mode
// ("[MODE_UPDATE] yolo", sent as message text before the prompt is
// answered) seen in a captured session, where the mode change is not
// known to be in flight: the first thing said, naming a mode the session
// offered. A live session drops it as setup chatter already.
func (m *mapper) modeEcho(t string) bool {
	id, ok := strings.CutPrefix(t, "[MODE_UPDATE] ")
	return ok && !m.heard && slices.Contains(m.modes, id)
}

// createsAll reports whether diffs create every file they touch.
func createsAll(diffs []diffContent) bool {
	for _, d := range diffs {
		if d.OldText != nil && !(d.Meta.Kind == "add" && *d.OldText == "") {
			return false
		}
	}
	return len(diffs) > 0
}

// paths are the files a file call names: its path, else the files of
// its diff content (codex-acp 2 names them only there).
func (tc *tool) paths() []string {
	if !isFileKind(tc.kind) {
		return nil
	}
	if tc.path != "" {
		return []string{tc.path}
	}
	var paths []string
	for _, d := range tc.diffs {
		if d.Path != "" && !slices.Contains(paths, d.Path) {
			paths = append(paths, d.Path)
		}
	}
	return paths
}

func isFileKind(k event.Kind) bool {
	return k == event.KindWrite || k == event.KindEdit || k == event.KindDelete
}

// exitCode is a shell call's exit status in its rawOutput: OpenCode's
// metadata.exit, Codex's exit_code.
func exitCode(raw json.RawMessage) (int, bool) {
	var o struct {
		Metadata struct {
			Exit *float64 `json:"exit"`
		} `json:"metadata"`
		ExitCode *float64 `json:"exit_code"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return 0, false
	}
	for _, v := range []*float64{o.Metadata.Exit, o.ExitCode} {
		if v != nil && *v == float64(int(*v)) && *v >= -1<<31 && *v < 1<<31 {
			return int(*v), true
		}
	}
	return 0, false
}

// start emits a call's tool_start.
func (m *mapper) start(dst []event.Body, id string, tc *tool) []event.Body {
	dst = m.flushText(dst)
	m.lastMessage = "" // commentary before a call is not the answer
	tc.started = true
	tc.kind = kinds[tc.acpKind]
	// A kind does not depend on the transport: a call takes the kind its
	// agent's CLI adapter gives it where the agent says which tool it is.
	switch {
	case tc.claudeTool != "":
		// Claude's Write is a write, which ACP calls an edit.
		if k := claude.ToolKind(tc.claudeTool); k != event.KindOther || tc.kind == "" {
			tc.kind = k
		}
	case m.agent == "gemini-cli":
		// gemini --acp names a call after its tool: write_file__….
		name, _, _ := strings.Cut(id, "__")
		if k, ok := gemini.BuiltinKind(name); ok {
			tc.kind = k
		}
	case m.agent == "OpenCode":
		// opencode acp titles a call with its tool's name until it runs
		// (then with the file's path): its write is a write, as over its
		// CLI, which ACP calls an edit.
		if k, ok := opencode.BuiltinKind(tc.name); ok {
			tc.kind = k
		}
	case tc.kind == event.KindEdit && createsAll(tc.diffs):
		// Files created whole (codex-acp shows the diff as the call
		// starts): a write, as Codex's CLI adapter says of an add.
		tc.kind = event.KindWrite
	}
	if tc.kind == "" {
		tc.kind = event.KindOther
	}
	if tc.name == "" {
		tc.name = tc.acpKind
	}
	if tc.path == "" {
		tc.path = field(inputPath(tc.input))
	}
	st := &event.ToolStart{CallID: id, Name: tc.name, Kind: tc.kind, Input: object(tc.input), Path: tc.path}
	if tc.kind == event.KindShell {
		st.Command = inputCommand(tc.input)
	}
	if tc.path != "" && isFileKind(tc.kind) {
		st.Paths = []string{tc.path}
	}
	return append(dst, st)
}

// diff sets a finished call's diff from ACP's diff contents. ACP's
// oldText/newText are meant as whole files, but some agents send the
// replaced fragment only. A live run hands the patch to the harness as the
// agent's (AgentPatch), which checks it against the disk and keeps it only
// when it undoes exactly; a capture gets a diff only for creations (no
// oldText), whose newText is the whole file.
func (m *mapper) diff(end *event.ToolEnd, diffs []diffContent) {
	// A capture's call whose change cannot be shown exactly says so: no
	// diff alone would say it changed nothing.
	unknown := func() {
		if !m.live {
			end.DiffSkipped = event.DiffSkippedUnknown
		}
	}
	var patch, created []string
	for _, d := range diffs {
		if d.Path == "" {
			unknown()
			return
		}
		if d.Meta.Kind == "add" && d.OldText != nil && *d.OldText == "" {
			d.OldText = nil
		}
		before := adapters.File{}
		if d.OldText != nil {
			before = adapters.Present(*d.OldText)
		}
		name := adapters.DisplayPath(m.cwd, d.Path)
		if _, ok := adapters.HeaderName(name); !ok {
			unknown() // its diff would be left out: not half the change
			return
		}
		p := adapters.Diff(name, before, adapters.Present(d.NewText))
		patch = append(patch, p)
		if d.OldText == nil {
			created = append(created, p)
		}
	}
	if m.live {
		end.AgentPatch = adapters.JoinDiffs(patch...)
		return
	}
	if len(created) < len(diffs) {
		unknown() // an edit's texts may be fragments
		return
	}
	end.Diff = adapters.JoinDiffs(created...)
}

// display names the file of diff, the diff of the one file at path (its
// headers name path whole), as the stream names it: from the replayed
// session's directory (DisplayPath), as a live run's diffs do.
func (m *mapper) display(diff, path string) string {
	from, ok := adapters.HeaderName(path)
	to, ok2 := adapters.HeaderName(adapters.DisplayPath(m.cwd, path))
	if diff == "" || m.cwd == "" || !ok || !ok2 || from == to {
		return diff
	}
	lines := strings.SplitAfterN(diff, "\n", 3)
	if len(lines) < 3 {
		return diff
	}
	for i, prefix := range []string{"--- a/", "+++ b/"} {
		if lines[i] == prefix+from+"\n" {
			lines[i] = prefix + to + "\n"
		}
	}
	return strings.Join(lines, "")
}

// rawOutput is the text of a call's rawOutput: a string, or the output
// field of an object (Codex: stdout, formatted_output; OpenCode: output).
func rawOutput(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o map[string]any
	if json.Unmarshal(raw, &o) != nil {
		return ""
	}
	for _, k := range []string{"formatted_output", "aggregated_output", "output", "stdout"} {
		if v, ok := o[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

type diffContent struct {
	Path    string   `json:"path"`
	OldText *string  `json:"oldText"`
	NewText string   `json:"newText"`
	Meta    diffMeta `json:"_meta"`
}

// diffMeta is what harness reads of a diff content's _meta, leniently.
type diffMeta struct {
	Kind string `json:"kind"` // Gemini: "add" for a file created (with oldText "")
}

func (m *diffMeta) UnmarshalJSON(b []byte) error {
	type fields diffMeta // without this method
	return lenient(b, (*fields)(m))
}

// toolContent reads a call's content: the text shown, and its diffs.
func toolContent(raw json.RawMessage) (string, []diffContent) {
	var items []struct {
		Type    string  `json:"type"`
		Content inPlace `json:"content"` // read below, while raw is
		diffContent
	}
	if json.Unmarshal(raw, &items) != nil {
		return "", nil
	}
	var text []string
	var diffs []diffContent
	for _, it := range items {
		switch it.Type {
		case "content":
			if t := blockText(json.RawMessage(it.Content)); t != "" {
				text = append(text, t)
			}
		case "diff":
			diffs = append(diffs, it.diffContent)
		}
	}
	return strings.Join(text, "\n"), diffs
}

// blockText is the text of a content block ({"type":"text","text":…}).
func blockText(raw json.RawMessage) string {
	var b struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &b) != nil || b.Type != "text" {
		return ""
	}
	return b.Text
}

// flushText closes the text and thought streamed so far as a complete
// message and reasoning block.
func (m *mapper) flushText(dst []event.Body) []event.Body {
	if m.thought.Len() > 0 {
		dst = append(dst, &event.Reasoning{Text: m.thought.String()})
		m.thought.Reset()
	}
	if m.text.Len() > 0 {
		dst = append(dst, &event.Message{Role: event.RoleAssistant, Text: m.text.String()})
		m.lastMessage = m.text.String()
		m.text.Reset()
	}
	return dst
}

// end maps the prompt's answer: the text so far becomes a message, the
// stop reason the result's status, and the usage the agent reports in
// the answer's usage its totals.
func (m *mapper) end(dst []event.Body, result json.RawMessage, sessionID string) []event.Body {
	var r struct {
		StopReason string    `json:"stopReason"`
		Usage      *acpUsage `json:"usage"`
	}
	json.Unmarshal(result, &r)
	dst = m.endDenied(dst, "")
	switch r.StopReason {
	case "end_turn", "max_tokens", "max_turn_requests":
	default:
		// A turn cancelled (claude-agent-acp answers so when the idle
		// budget's SIGTERM reaches it) or refused: its text may be a
		// sentence cut off, not a message; the deltas stay.
		m.text.Reset()
	}
	dst = m.flushText(dst)
	res := &event.Result{SessionID: sessionID, Text: m.lastMessage}
	if m.systemError {
		// codex-acp 2 ends a failed turn end_turn, its error as text: the
		// error Codex's CLI reports, read by the same rule.
		e := codex.AgentError(cmp.Or(strings.TrimSpace(m.errText.String()), "codex-acp reported the turn failed"))
		e.Fatal, e.Partial = true, &event.Partial{}
		res.Status, res.Text = event.ResultError, ""
		return append(dst, e, res)
	}
	switch r.StopReason {
	case "end_turn", "max_tokens", "max_turn_requests":
		res.Status = event.ResultSuccess
	case "cancelled":
		res.Status = event.ResultCancelled
		res.Text = ""
	default: // "refusal", or a reason this version does not know
		res.Status = event.ResultError
		res.Text = ""
		dst = append(dst, &event.Error{Code: event.ErrAgentError, Fatal: true, Partial: &event.Partial{},
			Message: "acp: the agent stopped the turn: " + truncate(r.StopReason, 80)})
	}
	// Gemini's _meta.quota.token_count is not taken: its input includes
	// the cached tokens and its output leaves out the thoughts, and it
	// does not say how many of either there were (6000/600 for a turn of
	// 5850 input, 150 cached, 600+10 output): no usage rather than a wrong one.
	if !m.noUsage && r.Usage != nil {
		res.Usage = r.Usage.unified()
		if r.Usage.negative() {
			// Counted as 0 in unified, where the Stream cannot see it: its
			// warning, as for a negative count over the CLI.
			dst = append(dst, &event.Warning{Code: event.WarnUsageMismatch,
				Message: "the agent reported a negative token count; it counts as 0"})
		}
	}
	if m.cost != nil {
		res.CostUSD = event.Float(*m.cost)
	}
	return append(dst, res)
}

// acpUsage is the (unstable) usage of a prompt's answer.
type acpUsage struct {
	Input      count `json:"inputTokens"`
	Output     count `json:"outputTokens"`
	Total      count `json:"totalTokens"`
	Thought    count `json:"thoughtTokens"`
	CacheRead  count `json:"cachedReadTokens"`
	CacheWrite count `json:"cachedWriteTokens"`
}

// count is a token count read as the Claude adapter reads one (gjson's
// Int): any JSON number, 240.0 and 1e3 too (a fraction is cut); anything
// else is no count (0). Into an int64, encoding/json would drop a count
// written as a float.
type count int64

func (c *count) UnmarshalJSON(b []byte) error {
	if v := gjson.ParseBytes(b); v.Type == gjson.Number {
		*c = count(v.Int())
	}
	return nil
}

// usd is a cost's amount: any JSON number, one past float64's range
// read as infinite (garbage, which counts as 0 with a warning), where
// encoding/json fails the whole notification for it; anything else as
// encoding/json reads it into a float64 (null: no effect; a string: an
// error).
type usd float64

func (c *usd) UnmarshalJSON(b []byte) error {
	if v := gjson.ParseBytes(b); v.Type == gjson.Number {
		*c = usd(v.Float())
		return nil
	}
	return json.Unmarshal(b, (*float64)(c))
}

// negative reports whether a count is below 0, which counts as 0.
func (u *acpUsage) negative() bool {
	return min(u.Input, u.Output, u.Total, u.Thought, u.CacheRead, u.CacheWrite) < 0
}

// unified converts to the meaning of docs/events.md. ACP does not say
// whether inputTokens includes the cached part, nor whether outputTokens
// includes the thoughts; agents differ (claude-agent-acp passes
// Anthropic's counts, cache apart; codex-acp OpenAI's, cache included). The
// agent's own totalTokens tells which sum it made, and so which it is.
// A negative count counts as 0; sums stop at the largest int64 rather
// than wrap round.
func (u *acpUsage) unified() event.Usage {
	pos := func(v count) int64 { return max(int64(v), 0) }
	in, out, cr, cw, th := pos(u.Input), pos(u.Output), pos(u.CacheRead), pos(u.CacheWrite), pos(u.Thought)
	add := func(vs ...int64) int64 {
		var s int64
		for _, v := range vs {
			if s > math.MaxInt64-v {
				return math.MaxInt64
			}
			s += v
		}
		return s
	}
	// minus is a - b - c, at least 0.
	minus := func(a, b, c int64) int64 { return max(max(a-b, 0)-c, 0) }
	// inputOf is an OpenAI-style input without the cache read it holds,
	// and without the cache write unless the total adds the write apart
	// (sum is the total without it): the input then never held it.
	inputOf := func(sum int64) int64 {
		if int64(u.Total) == sum {
			return minus(in, cr, cw)
		}
		return minus(in, cr, 0)
	}
	switch int64(u.Total) {
	case add(in, out, cr, cw, th):
		// First: with no cache read, the sum with a cache write is also
		// one of the OpenAI-style sums below, which would take the write
		// out of an input that never held it. OpenAI reports no cache
		// writes; Anthropic does (claude-agent-acp: cache apart).
		return event.Usage{InputTokens: in, OutputTokens: add(out, th), CacheReadTokens: cr, CacheWriteTokens: cw, ReasoningTokens: th}
	case add(in, out, th), add(in, out, th, cw):
		// input includes the cache read (OpenAI-style); output is net of thoughts
		return event.Usage{InputTokens: inputOf(add(in, out, th)), OutputTokens: add(out, th), CacheReadTokens: cr, CacheWriteTokens: cw, ReasoningTokens: th}
	case add(in, out), add(in, out, cw):
		if th > 0 {
			// output includes the thoughts, input the cache
			return event.Usage{InputTokens: inputOf(add(in, out)), OutputTokens: out, CacheReadTokens: cr, CacheWriteTokens: cw, ReasoningTokens: min(th, out)}
		}
		return event.Usage{InputTokens: inputOf(add(in, out)), OutputTokens: out, CacheReadTokens: cr, CacheWriteTokens: cw}
	}
	// Cache apart and output with its thoughts, as Anthropic counts.
	return event.Usage{InputTokens: in, OutputTokens: out, CacheReadTokens: cr, CacheWriteTokens: cw, ReasoningTokens: min(th, out)}
}

// promptFailed is the fatal error of an error answer to a request: its
// class, and the HTTP status where the agent passes it on (Gemini: as the
// JSON-RPC error code, which JSON-RPC's own codes, all negative, cannot be
// mistaken for; Claude: "API Error: 500 …" in the message). Text the turn
// streamed that the error repeats (claude-agent-acp sends its API error as
// a message first) is the error's, not an answer: it is dropped.
func (m *mapper) promptFailed(dst []event.Body, code int, text string) ([]event.Body, *event.Error) {
	if pending := strings.TrimSpace(m.text.String()); pending != "" && strings.Contains(text, pending) {
		m.text.Reset()
	}
	dst = m.endDenied(dst, "")
	dst = m.flushText(dst)
	e := &event.Error{Code: event.ErrAgentError, Fatal: true, Partial: &event.Partial{}}
	switch {
	case code >= 400 && code < 600:
		e.Status = code
	default:
		e.Status = adapters.HTTPStatus(text)
	}
	e.Class = adapters.ClassifyStatus(e.Status)
	if e.Class == "" {
		e.Class = adapters.ClassifyError(text)
	}
	return dst, e
}
