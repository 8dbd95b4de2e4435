package acp

import (
	"encoding/json"
	"strings"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
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
	held          int              // bytes the open calls keep (input, output, diffs), at most maxHeld
	live          bool             // a live session: diffs are checked against the disk
	denied        map[string]bool  // calls whose permission harness refused
	cost          *float64         // the session's cost from usage_update, in USD
	setup         bool             // the prompt is not sent yet: text is not the answer
	noUsage       bool             // the agent's usage is known to be wrong: none is reported
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
				Amount   float64 `json:"amount"`
				Currency string  `json:"currency"`
			} `json:"cost"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &p) != nil {
		return dst, false
	}
	u := &p.Update
	switch u.Kind {
	case "agent_message_chunk":
		if t := blockText(u.Content); t != "" && !m.setup {
			m.text.WriteString(t)
			dst = append(dst, &event.TextDelta{Text: t})
		}
	case "agent_thought_chunk":
		if t := blockText(u.Content); t != "" {
			m.thought.WriteString(t)
			dst = append(dst, &event.ReasoningDelta{Text: t})
		}
	case "tool_call", "tool_call_update":
		u.ToolCallID = callID(u.ToolCallID)
		dst = m.toolCall(dst, &u.toolUpdate)
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
		if u.Cost != nil && strings.EqualFold(u.Cost.Currency, "USD") && u.Cost.Amount >= 0 {
			v := u.Cost.Amount
			m.cost = &v
		}
	case "user_message_chunk", "available_commands_update", "current_mode_update", "config_option_update", "session_info_update":
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
// whose file the harness would then read after the change.
func (m *mapper) toolCall(dst []event.Body, u *toolUpdate) []event.Body {
	if u.ToolCallID == "" {
		return dst
	}
	id := u.ToolCallID
	tc, known := m.open[id]
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
	if out, diffs := toolContent(u.Content); out != "" || len(diffs) > 0 {
		m.keepContent(tc, out, diffs) // content replaces content (ACP)
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
	if tc.path != "" && (tc.kind == event.KindEdit || tc.kind == event.KindDelete) {
		end.Paths = []string{tc.path}
	}
	if end.Status == event.StatusOK && len(tc.diffs) > 0 {
		m.diff(end, tc.diffs)
	}
	return append(dst, end)
}

// start emits a call's tool_start.
func (m *mapper) start(dst []event.Body, id string, tc *tool) []event.Body {
	dst = m.flushText(dst)
	m.lastMessage = "" // commentary before a call is not the answer
	tc.started = true
	tc.kind = kinds[tc.acpKind]
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
	if tc.path != "" && (tc.kind == event.KindEdit || tc.kind == event.KindDelete) {
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
	var patch, created []string
	for _, d := range diffs {
		if d.Path == "" {
			return
		}
		if d.Meta.Kind == "add" && d.OldText != nil && *d.OldText == "" {
			d.OldText = nil
		}
		before := adapters.File{}
		if d.OldText != nil {
			before = adapters.Present(*d.OldText)
		}
		p := adapters.Diff(d.Path, before, adapters.Present(d.NewText))
		patch = append(patch, p)
		if d.OldText == nil {
			created = append(created, p)
		}
	}
	if m.live {
		end.AgentPatch = adapters.JoinDiffs(patch...)
		return
	}
	if len(created) == len(diffs) {
		end.Diff = adapters.JoinDiffs(created...)
	}
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
	Path    string  `json:"path"`
	OldText *string `json:"oldText"`
	NewText string  `json:"newText"`
	Meta    struct {
		Kind string `json:"kind"` // Gemini: "add" for a file created (with oldText "")
	} `json:"_meta"`
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
// stop reason the result's status, and the usage the agent reports (in
// the answer's usage, or Gemini's _meta.quota.token_count) its totals.
func (m *mapper) end(dst []event.Body, result json.RawMessage, sessionID string) []event.Body {
	var r struct {
		StopReason string     `json:"stopReason"`
		Usage      *acpUsage  `json:"usage"`
		Meta       *metaUsage `json:"_meta"`
	}
	json.Unmarshal(result, &r)
	dst = m.flushText(dst)
	res := &event.Result{SessionID: sessionID, Text: m.lastMessage}
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
	switch {
	case m.noUsage:
	case r.Usage != nil:
		res.Usage = r.Usage.unified()
	case r.Meta != nil && r.Meta.Quota != nil && r.Meta.Quota.TokenCount != nil:
		tc := r.Meta.Quota.TokenCount
		res.Usage = event.Usage{InputTokens: max(tc.Input, 0), OutputTokens: max(tc.Output, 0)}
	}
	if m.cost != nil {
		res.CostUSD = event.Float(*m.cost)
	}
	return append(dst, res)
}

// acpUsage is the (unstable) usage of a prompt's answer.
type acpUsage struct {
	Input      int64 `json:"inputTokens"`
	Output     int64 `json:"outputTokens"`
	Total      int64 `json:"totalTokens"`
	Thought    int64 `json:"thoughtTokens"`
	CacheRead  int64 `json:"cachedReadTokens"`
	CacheWrite int64 `json:"cachedWriteTokens"`
}

// unified converts to the meaning of docs/events.md. ACP does not say
// whether inputTokens includes the cached part, nor whether outputTokens
// includes the thoughts; agents differ (claude-agent-acp passes
// Anthropic's counts, cache apart; codex-acp OpenAI's, cache included). The
// agent's own totalTokens tells which sum it made, and so which it is.
func (u *acpUsage) unified() event.Usage {
	pos := func(v int64) int64 { return max(v, 0) }
	in, out, cr, cw, th := pos(u.Input), pos(u.Output), pos(u.CacheRead), pos(u.CacheWrite), pos(u.Thought)
	switch u.Total {
	case in + out + th, in + out + th + cw:
		// input includes the cache read (OpenAI-style); output is net of thoughts
		return event.Usage{InputTokens: max(in-cr-cw, 0), OutputTokens: out + th, CacheReadTokens: cr, CacheWriteTokens: cw, ReasoningTokens: th}
	case in + out, in + out + cw:
		if th > 0 {
			// output includes the thoughts, input the cache
			return event.Usage{InputTokens: max(in-cr-cw, 0), OutputTokens: out, CacheReadTokens: cr, CacheWriteTokens: cw, ReasoningTokens: min(th, out)}
		}
		return event.Usage{InputTokens: max(in-cr-cw, 0), OutputTokens: out, CacheReadTokens: cr, CacheWriteTokens: cw}
	case in + out + cr + cw + th:
		return event.Usage{InputTokens: in, OutputTokens: out + th, CacheReadTokens: cr, CacheWriteTokens: cw, ReasoningTokens: th}
	}
	// Cache apart and output with its thoughts, as Anthropic counts.
	return event.Usage{InputTokens: in, OutputTokens: out, CacheReadTokens: cr, CacheWriteTokens: cw, ReasoningTokens: min(th, out)}
}

type metaUsage struct {
	Quota *struct {
		TokenCount *struct {
			Input  int64 `json:"input_tokens"`
			Output int64 `json:"output_tokens"`
		} `json:"token_count"`
	} `json:"quota"`
}
