package gemini

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// Warning codes this adapter emits for what Gemini itself reports.
const (
	// WarnAgentWarning is an error event of severity warning.
	WarnAgentWarning = "agent_warning"
	// WarnAgentRetry marks assistant text streamed again by a retried model
	// request: Gemini replays the same deltas with no retry marker.
	WarnAgentRetry = "agent_retry"
)

type call struct {
	name  string
	kind  event.Kind
	paths []string
	diff  string
}

type parser struct {
	session  string
	open     map[string]call // by tool_id
	lastText string          // the last complete assistant message

	// The current run of assistant deltas, as one attempt of the model:
	// deltas holds its chunks, replay the position reached by a stream
	// that restarted from the first chunk (-1: none), warned whether the
	// replay was reported.
	deltas []string
	replay int
	warned bool
}

func newParser() *parser { return &parser{open: map[string]call{}, replay: -1} }

// Parse implements adapters.Parser.
func (p *parser) Parse(dst []event.Body, line []byte) ([]event.Body, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' || !gjson.ValidBytes(line) {
		return dst, false
	}
	root := gjson.ParseBytes(line)
	typ := root.Get("type")
	if typ.Type != gjson.String {
		return dst, false
	}
	switch typ.Str {
	case "message":
		return p.message(dst, root)
	case "init":
		dst = p.endRun(dst)
		p.session = root.Get("session_id").String()
		return append(dst, &event.SessionStart{SessionID: p.session, Model: root.Get("model").String()}), true
	case "tool_use":
		dst = p.endRun(dst)
		return append(dst, p.toolUse(root)), true
	case "tool_result":
		dst = p.endRun(dst)
		return append(dst, p.toolResult(root)), true
	case "error":
		dst = p.endRun(dst)
		msg := root.Get("message").String()
		if root.Get("severity").String() == "warning" {
			return append(dst, &event.Warning{Code: WarnAgentWarning, Message: msg}), true
		}
		return append(dst, agentError(msg)), true
	case "result":
		dst = p.endRun(dst)
		return p.result(dst, root), true
	}
	return dst, false
}

// Flush implements adapters.Parser: it closes a run of deltas the stream
// ended in.
func (p *parser) Flush(dst []event.Body) []event.Body { return p.endRun(dst) }

func (p *parser) message(dst []event.Body, root gjson.Result) ([]event.Body, bool) {
	role := root.Get("role").String()
	text := root.Get("content").String()
	switch {
	case role == "assistant" && root.Get("delta").Bool():
		return p.delta(dst, text), true
	case role == "assistant":
		dst = p.endRun(dst)
		p.lastText = text
		return append(dst, &event.Message{Role: event.RoleAssistant, Text: text}), true
	case role == "user":
		// The prompt echoed back: the caller knows it already.
		return p.endRun(dst), true
	}
	return dst, false
}

// delta handles one assistant chunk. A retried model request streams the
// same chunks again from the first one, with no marker: chunks that repeat
// the current attempt are held back, and emitted late only if the stream
// turns out to diverge (then they were real text, not a replay).
func (p *parser) delta(dst []event.Body, text string) []event.Body {
	if p.replay >= 0 {
		switch {
		case p.replay < len(p.deltas) && p.deltas[p.replay] == text:
			p.replay++
			return p.replayed(dst)
		case p.replay == len(p.deltas) && text == p.deltas[0]:
			p.replay = 1 // yet another attempt
			return p.replayed(dst)
		case p.replay == len(p.deltas):
			// The retry goes on past where the earlier attempt stopped.
			p.replay = -1
		default:
			// Not a replay after all: the held-back chunks were text.
			held := strings.Join(p.deltas[:p.replay], "")
			p.deltas = append(p.deltas, p.deltas[:p.replay]...)
			p.replay = -1
			dst = append(dst, &event.TextDelta{Text: held})
		}
	} else if len(p.deltas) > 0 && text == p.deltas[0] {
		p.replay = 1
		return p.replayed(dst)
	}
	p.deltas = append(p.deltas, text)
	return append(dst, &event.TextDelta{Text: text})
}

// replayed reports, once per run, a replay that repeated the whole
// attempt so far.
func (p *parser) replayed(dst []event.Body) []event.Body {
	if p.replay == len(p.deltas) && !p.warned {
		p.warned = true
		dst = append(dst, &event.Warning{Code: WarnAgentRetry,
			Message: "the agent streamed the same text again (a retried model request); the repeat is not emitted"})
	}
	return dst
}

// endRun emits the message a run of deltas made, if one is open.
func (p *parser) endRun(dst []event.Body) []event.Body {
	if len(p.deltas) == 0 {
		return dst
	}
	if p.replay > 0 && !p.warned {
		dst = append(dst, &event.Warning{Code: WarnAgentRetry,
			Message: "the agent streamed part of its text again (a retried model request); the repeat is not emitted"})
	}
	text := strings.Join(p.deltas, "")
	p.deltas, p.replay, p.warned = p.deltas[:0], -1, false
	p.lastText = text
	return append(dst, &event.Message{Role: event.RoleAssistant, Text: text})
}

// kinds maps Gemini's built-in tool names to kinds.
var kinds = map[string]event.Kind{
	"run_shell_command":   event.KindShell,
	"read_file":           event.KindRead,
	"read_many_files":     event.KindRead,
	"write_file":          event.KindWrite,
	"replace":             event.KindEdit,
	"edit":                event.KindEdit,
	"glob":                event.KindSearch,
	"grep_search":         event.KindSearch,
	"search_file_content": event.KindSearch,
	"list_directory":      event.KindSearch,
	"web_fetch":           event.KindWeb,
	"google_web_search":   event.KindWeb,
	"write_todos":         event.KindTodo,
	"invoke_agent":        event.KindTask,
}

// toolKind returns the kind of a tool name. MCP tools are registered under
// their own name, as `server__tool` when names clash, or `mcp_server_tool`
// in builds that qualify them all; none of the built-in names look so.
func toolKind(name string) event.Kind {
	if k, ok := kinds[name]; ok {
		return k
	}
	if strings.Contains(name, "__") || strings.HasPrefix(name, "mcp_") {
		return event.KindMCP
	}
	return event.KindOther
}

// toolID returns a call's tool_id; event.Stream pairs an empty call id
// badly, so a missing one gets a name.
func toolID(root gjson.Result) string {
	if id := root.Get("tool_id").String(); id != "" {
		return id
	}
	return "tool"
}

func (p *parser) toolUse(root gjson.Result) *event.ToolStart {
	id := toolID(root)
	name := root.Get("tool_name").String()
	if name == "" {
		name = nameFromID(id)
	}
	params := root.Get("parameters")
	ts := &event.ToolStart{CallID: id, Name: name, Kind: toolKind(name)}
	if params.IsObject() {
		ts.Input = json.RawMessage(params.Raw)
	}
	c := call{name: name, kind: ts.Kind}
	switch ts.Kind {
	case event.KindShell:
		ts.Command = params.Get("command").String()
	case event.KindRead, event.KindWrite, event.KindEdit:
		ts.Path = firstString(params, "file_path", "absolute_path", "path")
	}
	switch name {
	case "write_file":
		c.paths = nonEmpty(ts.Path)
		c.diff = adapters.UnifiedDiff(ts.Path, "", params.Get("content").String())
	case "replace", "edit":
		c.paths = nonEmpty(ts.Path)
		c.diff = adapters.UnifiedDiff(ts.Path, params.Get("old_string").String(), params.Get("new_string").String())
	}
	p.open[id] = c
	return ts
}

func (p *parser) toolResult(root gjson.Result) *event.ToolEnd {
	id := toolID(root)
	c, ok := p.open[id]
	delete(p.open, id)
	te := &event.ToolEnd{CallID: id, Status: event.StatusOK, Output: root.Get("output").String()}
	if ok {
		te.Name, te.Kind, te.Paths = c.name, c.kind, c.paths
	} else {
		te.Name = nameFromID(id)
		te.Kind = toolKind(te.Name)
	}
	if root.Get("status").String() == "error" {
		te.Status = event.StatusError
		if msg := root.Get("error.message").String(); msg != "" {
			te.Output = msg
		}
		if isDenial(root.Get("error.type").String(), te.Output) {
			te.Status = event.StatusDenied
		}
	} else if ok {
		te.Diff = c.diff
	}
	if te.Kind == event.KindShell {
		if code, found := exitCode(te.Output); found {
			te.ExitCode = event.Int(code)
			if code != 0 && te.Status == event.StatusOK {
				te.Status = event.StatusError
			}
		}
	}
	return te
}

// isDenial reports whether a tool error is the policy refusing the call
// (headless runs deny what would need a confirmation).
func isDenial(typ, msg string) bool {
	return strings.Contains(typ, "denied") || typ == "policy_violation" ||
		strings.Contains(msg, "denied by policy") || strings.Contains(msg, "requires user confirmation")
}

var exitRE = regexp.MustCompile(`(?m)(?:^Exit Code|exited with code):? (-?\d+)`)

// exitCode finds the exit status the shell tool printed: "Exit Code: N" in
// what it tells the model, "Command exited with code: N" in its display.
func exitCode(out string) (int, bool) {
	if !strings.Contains(out, "xit") {
		return 0, false
	}
	m := exitRE.FindStringSubmatch(out)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

var statusRE = regexp.MustCompile(`"code":\s*(\d{3})\b|\bstatus (\d{3})\b`)

func agentError(msg string) *event.Error {
	if msg == "" {
		msg = "gemini reported an error"
	}
	e := &event.Error{Code: event.ErrAgentError, Message: msg}
	if m := statusRE.FindStringSubmatch(msg); m != nil {
		code, _ := strconv.Atoi(m[1] + m[2])
		e.Status = code
		e.Class = adapters.ClassifyStatus(code)
	}
	if e.Class == "" {
		e.Class = adapters.ClassifyError(msg)
	}
	return e
}

func (p *parser) result(dst []event.Body, root gjson.Result) []event.Body {
	status := event.ResultSuccess
	if root.Get("status").String() != "success" {
		status = event.ResultError
		dst = append(dst, agentError(root.Get("error.message").String()))
	}
	if st := root.Get("stats"); st.IsObject() {
		// input_tokens is the whole prompt; cached and input are its
		// breakdown (types.ts), so input is what was not read from cache.
		cached := st.Get("cached").Int()
		in := st.Get("input").Int()
		if total := st.Get("input_tokens"); total.Exists() {
			in = max(total.Int()-cached, 0)
		}
		u := &event.Usage{InputTokens: in, CacheReadTokens: cached, OutputTokens: st.Get("output_tokens").Int()}
		if !u.IsZero() {
			dst = append(dst, u)
		}
	}
	return append(dst, &event.Result{Status: status, Text: p.lastText, SessionID: p.session,
		DurationMS: root.Get("stats.duration_ms").Int()})
}

// nameFromID recovers the tool name from a tool id of the shape Gemini
// 0.61 gives, `<name>__<name>_<ms>_<n>`, for a result whose tool_use was
// never seen. It returns "unknown" for any other shape.
func nameFromID(id string) string {
	for i := strings.Index(id, "__"); i > 0; {
		if name := id[:i]; strings.HasPrefix(id[i+2:], name+"_") {
			return name
		}
		j := strings.Index(id[i+2:], "__")
		if j < 0 {
			break
		}
		i += 2 + j
	}
	return "unknown"
}

func firstString(obj gjson.Result, keys ...string) string {
	for _, k := range keys {
		if v := obj.Get(k); v.Type == gjson.String && v.Str != "" {
			return v.Str
		}
	}
	return ""
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
