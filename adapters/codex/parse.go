package codex

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// Warning codes this adapter emits for what Codex itself reports.
const (
	// WarnAgentWarning is a non-fatal problem the agent reported (an item
	// of type error, such as missing model metadata).
	WarnAgentWarning = "agent_warning"
	// WarnAgentRetry is the agent retrying a failed model request
	// ("Reconnecting... n/5").
	WarnAgentRetry = "agent_retry"
)

// LegacyMessage is the parse error reported, once, for a stream in a
// format older than the thread/turn/item schema.
const LegacyMessage = "this is the legacy codex --json format (codex ≤ 0.43, or the transitional 0.42 session.created stream), which harness does not parse; upgrade codex to 0.44 or later"

type parser struct {
	foreign  bool            // a legacy or transitional line was seen: nothing more is parsed
	session  string          // thread id
	lastText string          // last agent_message of the current turn
	lastErr  string          // message of the last top-level error of the turn
	open     map[string]bool // item ids whose tool_start was emitted
	warned   map[string]bool // error item ids already reported
}

func newParser() *parser { return &parser{open: map[string]bool{}, warned: map[string]bool{}} }

// Parse implements adapters.Parser.
func (p *parser) Parse(dst []event.Body, line []byte) ([]event.Body, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' || !gjson.ValidBytes(line) {
		return dst, false
	}
	if p.foreign {
		return dst, false
	}
	root := gjson.ParseBytes(line)
	typ := root.Get("type")
	if typ.Type != gjson.String {
		if root.Get("msg.type").Exists() {
			return p.legacy(dst), false
		}
		return dst, false
	}
	switch typ.Str {
	case "thread.started":
		p.session = root.Get("thread_id").String()
		return append(dst, &event.SessionStart{SessionID: p.session}), true
	case "turn.started":
		p.lastText, p.lastErr = "", ""
		clear(p.warned)
		return dst, true
	case "turn.completed":
		return p.turnCompleted(dst, root), true
	case "turn.failed":
		msg := root.Get("error.message").String()
		if msg == "" {
			msg = "turn failed"
		}
		// Codex usually sends the failure twice: a top-level error, then
		// turn.failed with the same text. Report it once.
		if msg != p.lastErr {
			dst = append(dst, &event.Error{Code: event.ErrAgentError, Message: msg, Class: adapters.ClassifyError(msg)})
		}
		dst = append(dst, &event.Result{Status: event.ResultError, Text: p.lastText, SessionID: p.session})
		p.lastText, p.lastErr = "", ""
		return dst, true
	case "error":
		return p.streamError(dst, root.Get("message").String()), true
	case "item.started", "item.updated", "item.completed":
		item := root.Get("item")
		it := item.Get("type")
		if it.Type != gjson.String {
			if item.Get("item_type").Exists() {
				return p.legacy(dst), false
			}
			return dst, false
		}
		return p.item(dst, typ.Str[len("item."):], it.Str, item)
	case "item.plan.delta":
		if d := root.Get("delta").String(); d != "" {
			dst = append(dst, &event.TextDelta{Text: d, MessageID: root.Get("item_id").String()})
		}
		return dst, true
	case "request_user_input":
		return append(dst, &event.Warning{Code: WarnAgentWarning,
			Message: "the agent asked for user input, which a headless run cannot give: " + questions(root.Get("questions"))}), true
	case "session.created":
		return p.legacy(dst), false
	}
	return dst, false
}

// legacy reports the old format once and switches the parser off.
func (p *parser) legacy(dst []event.Body) []event.Body {
	p.foreign = true
	return append(dst, &event.Error{Code: event.ErrParseError, Message: LegacyMessage,
		Hint: "run `codex --version`; harness reads the thread.*/turn.*/item.* events of codex exec --json"})
}

// Flush implements adapters.Parser: Codex holds nothing back.
func (p *parser) Flush(dst []event.Body) []event.Body { return dst }

func (p *parser) turnCompleted(dst []event.Body, root gjson.Result) []event.Body {
	u := root.Get("usage")
	in := u.Get("input_tokens").Int()
	cached := u.Get("cached_input_tokens").Int()
	written := u.Get("cache_write_input_tokens").Int()
	out := u.Get("output_tokens").Int()
	// OpenAI counts cached reads and cache writes inside input_tokens, and
	// reasoning inside output_tokens.
	usage := &event.Usage{InputTokens: max(in-cached-written, 0), OutputTokens: out,
		CacheReadTokens: cached, CacheWriteTokens: written,
		ReasoningTokens: min(u.Get("reasoning_output_tokens").Int(), out)}
	if !usage.IsZero() {
		dst = append(dst, usage)
	}
	dst = append(dst, &event.Result{Status: event.ResultSuccess, Text: p.lastText, SessionID: p.session})
	p.lastText, p.lastErr = "", ""
	return dst
}

func (p *parser) streamError(dst []event.Body, msg string) []event.Body {
	if strings.HasPrefix(msg, "Reconnecting...") {
		return append(dst, &event.Warning{Code: WarnAgentRetry, Message: msg})
	}
	if msg == "" {
		msg = "codex reported an error"
	}
	p.lastErr = msg
	return append(dst, &event.Error{Code: event.ErrAgentError, Message: msg, Class: adapters.ClassifyError(msg)})
}

// item handles one item.* line; phase is started, updated or completed.
func (p *parser) item(dst []event.Body, phase, typ string, item gjson.Result) ([]event.Body, bool) {
	id := item.Get("id").String()
	if id == "" {
		// event.Stream pairs an empty call id badly; give it one.
		id = "item"
	}
	done := phase == "completed"
	switch typ {
	case "agent_message":
		if done {
			text := item.Get("text").String()
			p.lastText = text
			dst = append(dst, &event.Message{Role: event.RoleAssistant, Text: text, MessageID: id})
		}
		return dst, true
	case "plan":
		if done {
			dst = append(dst, &event.Message{Role: event.RoleAssistant, Text: item.Get("text").String(), MessageID: id})
		}
		return dst, true
	case "reasoning":
		if done {
			dst = append(dst, &event.Reasoning{Text: item.Get("text").String()})
		}
		return dst, true
	case "error":
		// Non-fatal by Codex's own definition (e.g. missing model metadata).
		// Reported once per item, whichever phases it shows up in.
		if !p.warned[id] {
			p.warned[id] = true
			dst = append(dst, &event.Warning{Code: WarnAgentWarning, Message: item.Get("message").String()})
		}
		return dst, true
	case "command_execution", "file_change", "mcp_tool_call", "web_search", "todo_list", "collab_tool_call":
	default:
		return dst, false
	}
	if !p.open[id] {
		dst = append(dst, toolStart(id, typ, item))
		p.open[id] = true
	}
	if done {
		dst = append(dst, toolEnd(id, typ, item))
		delete(p.open, id)
	}
	return dst, true
}

func toolStart(id, typ string, item gjson.Result) *event.ToolStart {
	ts := &event.ToolStart{CallID: id, Name: typ}
	switch typ {
	case "command_execution":
		ts.Kind = event.KindShell
		ts.Command = item.Get("command").String()
		ts.Input = object(item, "command")
	case "file_change":
		ts.Kind = changeKind(item.Get("changes"))
		ts.Path = item.Get("changes.0.path").String()
		ts.Input = object(item, "changes")
	case "mcp_tool_call":
		ts.Kind = event.KindMCP
		ts.Input = object(item, "server", "tool", "arguments")
	case "web_search":
		ts.Kind = event.KindWeb
		ts.Input = object(item, "query", "action")
	case "todo_list":
		ts.Kind = event.KindTodo
		ts.Input = object(item, "items")
	case "collab_tool_call":
		ts.Kind = event.KindTask
		ts.Input = object(item, "tool", "prompt", "receiver_thread_ids")
	}
	return ts
}

func toolEnd(id, typ string, item gjson.Result) *event.ToolEnd {
	te := &event.ToolEnd{CallID: id, Name: typ, Status: event.StatusOK}
	status := item.Get("status").String()
	if status == "failed" {
		te.Status = event.StatusError
	}
	switch typ {
	case "command_execution":
		te.Kind = event.KindShell
		te.Output = item.Get("aggregated_output").String()
		if ec := item.Get("exit_code"); ec.Type == gjson.Number {
			te.ExitCode = event.Int(int(ec.Int()))
			if ec.Int() != 0 {
				te.Status = event.StatusError
			}
		}
		if status == "declined" {
			te.Status = event.StatusDenied
		}
	case "file_change":
		changes := item.Get("changes")
		te.Kind = changeKind(changes)
		var diffs []string
		changes.ForEach(func(_, c gjson.Result) bool {
			if path := c.Get("path").String(); path != "" {
				te.Paths = append(te.Paths, path)
			}
			// exec_events.rs carries no diff today; newer schemas (and the
			// app-server's) put one per change.
			for _, k := range [...]string{"unified_diff", "diff"} {
				if d := c.Get(k); d.Type == gjson.String && d.Str != "" {
					diffs = append(diffs, d.Str)
					break
				}
			}
			return true
		})
		te.Diff = adapters.JoinDiffs(diffs...)
	case "mcp_tool_call":
		te.Kind = event.KindMCP
		if msg := item.Get("error.message"); msg.Exists() {
			te.Output = msg.String()
			te.Status = event.StatusError
		} else {
			te.Output = mcpOutput(item.Get("result"))
		}
	case "web_search":
		te.Kind = event.KindWeb
	case "todo_list":
		te.Kind = event.KindTodo
		te.Output = todoOutput(item.Get("items"))
	case "collab_tool_call":
		te.Kind = event.KindTask
	}
	return te
}

// changeKind maps a file_change's change kinds: all add → write, all
// delete → delete, anything else (update, or a mix) → edit.
func changeKind(changes gjson.Result) event.Kind {
	kind := event.Kind("")
	changes.ForEach(func(_, c gjson.Result) bool {
		k := event.KindEdit
		switch c.Get("kind").String() {
		case "add":
			k = event.KindWrite
		case "delete":
			k = event.KindDelete
		}
		if kind == "" {
			kind = k
		} else if kind != k {
			kind = event.KindEdit
		}
		return true
	})
	if kind == "" {
		return event.KindEdit
	}
	return kind
}

// object builds a JSON object of the given fields of item, as Codex gave
// them.
func object(item gjson.Result, keys ...string) json.RawMessage {
	buf := make([]byte, 0, 64)
	buf = append(buf, '{')
	n := 0
	for _, k := range keys {
		v := item.Get(k)
		if !v.Exists() {
			continue
		}
		if n > 0 {
			buf = append(buf, ',')
		}
		n++
		buf = event.AppendString(buf, k)
		buf = append(buf, ':')
		buf = append(buf, v.Raw...)
	}
	return append(buf, '}')
}

// mcpOutput joins the text blocks of an MCP result, or falls back to its
// structured content as JSON.
func mcpOutput(res gjson.Result) string {
	var b strings.Builder
	res.Get("content").ForEach(func(_, c gjson.Result) bool {
		if t := c.Get("text"); t.Type == gjson.String {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t.Str)
		}
		return true
	})
	if b.Len() == 0 {
		if sc := res.Get("structured_content"); sc.Exists() && sc.Type != gjson.Null {
			return sc.Raw
		}
	}
	return b.String()
}

// todoOutput renders the final to-do list as a checklist.
func todoOutput(items gjson.Result) string {
	var b strings.Builder
	items.ForEach(func(_, it gjson.Result) bool {
		if it.Get("completed").Bool() {
			b.WriteString("[x] ")
		} else {
			b.WriteString("[ ] ")
		}
		b.WriteString(it.Get("text").String())
		b.WriteByte('\n')
		return true
	})
	return b.String()
}

func questions(qs gjson.Result) string {
	var parts []string
	qs.ForEach(func(_, q gjson.Result) bool {
		if t := q.Get("question").String(); t != "" {
			parts = append(parts, t)
		}
		return true
	})
	return strings.Join(parts, " / ")
}
