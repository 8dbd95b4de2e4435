package codex

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/internal/jsonscan"
	"github.com/agentharness/harness/event"
)

// What the app-server says, in unified events (docs/supervision.md, "Live
// sessions"). Its items are exec's items in camelCase, so exec's item
// mapping (parser.item) makes the tool calls, messages and diffs of both.

// execItemTypes maps the app-server's item types to exec's.
var execItemTypes = map[string]string{
	"agentMessage": "agent_message", "plan": "plan", "commandExecution": "command_execution",
	"fileChange": "file_change", "mcpToolCall": "mcp_tool_call", "webSearch": "web_search",
	"collabAgentToolCall": "collab_tool_call",
}

// silent are the notifications that say nothing of the run's: thread
// and account state, the turn's aggregated diff (the file changes carry
// theirs), approvals resolved. (mcpServer/startupStatus/updated is
// mcpStartup's.)
var silent = map[string]bool{
	"thread/started": true, "thread/status/changed": true, "thread/settings/updated": true,
	"thread/name/updated": true, "thread/compacted": true, "turn/diff/updated": true, "turn/plan/updated": true,
	"account/rateLimits/updated": true, "account/updated": true,
	"remoteControl/status/changed": true, "skills/changed": true,
	"item/fileChange/outputDelta": true, "item/fileChange/patchUpdated": true, "item/reasoning/summaryPartAdded": true,
	"item/commandExecution/terminalInteraction": true, "item/mcpToolCall/progress": true, "hook/started": true,
	"hook/completed": true, "item/autoApprovalReview/started": true,
	"item/autoApprovalReview/completed": true, "thread/tokenUsage/updated": true,
	"thread/goal/cleared": true, // {threadId}, on thread/resume
}

// turnParams are the fields of a notification that say which turn and
// item it belongs to.
type turnParams struct {
	ThreadID string          `json:"threadId"`
	TurnID   string          `json:"turnId"`
	ItemID   string          `json:"itemId"`
	Item     json.RawMessage `json:"item"`
	Delta    string          `json:"delta"`
	Turn     struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	} `json:"turn"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	WillRetry  bool `json:"willRetry"`
	TokenUsage struct {
		Total struct {
			Input     int64 `json:"inputTokens"`
			Cached    int64 `json:"cachedInputTokens"`
			Written   int64 `json:"cacheWriteInputTokens"`
			Output    int64 `json:"outputTokens"`
			Reasoning int64 `json:"reasoningOutputTokens"`
		} `json:"total"`
	} `json:"tokenUsage"`
	Message string `json:"message"`
	// configWarning's and deprecationNotice's; model/rerouted's.
	Summary   string `json:"summary"`
	Details   string `json:"details"`
	FromModel string `json:"fromModel"`
	ToModel   string `json:"toModel"`
	Reason    string `json:"reason"`
}

// notification maps one notification. In a live session, what belongs
// to no turn harness sent (a turn it never asked for, or one that has
// ended) is dropped. mu is held.
func (c *Client) notification(dst []event.Body, msg *rpc) ([]event.Body, bool) {
	switch msg.Method {
	case "mcpServer/startupStatus/updated":
		return c.mcpStartup(dst, msg.Params)
	case "serverRequest/resolved":
		return dst, c.resolved(msg.Params)
	}
	var p turnParams
	if json.Unmarshal(msg.Params, &p) != nil {
		return dst, false
	}
	switch msg.Method {
	case "turn/started":
		return c.turnBegun(dst, p.Turn.ID), true
	case "thread/tokenUsage/updated":
		return c.usage(dst, &p), true
	case "warning", "guardianWarning":
		return c.warn(dst, p.Message, true), true
	case "configWarning", "deprecationNotice":
		return c.warn(dst, notice(p.Summary, p.Details), true), true
	}
	if c.w != nil && !c.inTurn(p.TurnID, p.Turn.ID) {
		return dst, true
	}
	switch msg.Method {
	case "turn/completed":
		return c.turnCompleted(dst, &p), true
	case "item/started", "item/completed":
		return c.item(dst, msg.Method[len("item/"):], p.Item), true
	case "item/agentMessage/delta":
		if p.Delta != "" {
			dst = append(dst, &event.TextDelta{Text: p.Delta, MessageID: p.ItemID})
		}
		return dst, true
	case "item/reasoning/summaryTextDelta", "item/reasoning/textDelta":
		if p.Delta != "" {
			dst = append(dst, &event.ReasoningDelta{Text: p.Delta})
		}
		return dst, true
	case "item/commandExecution/outputDelta":
		c.streamed(p.ItemID, p.Delta)
		return dst, true
	case "model/rerouted":
		// Said of each turn rerouted, as `codex exec` says it.
		return c.warn(dst, "model rerouted: "+p.FromModel+" -> "+p.ToModel+" ("+p.Reason+")", false), true
	case "error":
		if p.Error == nil {
			return dst, true
		}
		if p.WillRetry {
			return append(dst, &event.Warning{Code: event.WarnAgentRetry, Message: truncate(p.Error.Message, 2000)}), true
		}
		c.retryErr = agentError(truncate(p.Error.Message, 2000)) // its turn's end tells whether it ended the turn
		return dst, true
	}
	return dst, silent[msg.Method]
}

// resolved handles serverRequest/resolved: Codex no longer waits for the
// answer to its request requestId (answered, or cleared unanswered), so
// an approval of it waits for no Answer. mu is held.
func (c *Client) resolved(params json.RawMessage) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	for item, a := range c.asks {
		if bytes.Equal(a.id, p.RequestID) {
			delete(c.asks, item)
		}
	}
	return true
}

// warn reports a warning of Codex's as a warning{agent_warning}; once
// only when once is set (Codex repeats a configWarning as a warning when
// the thread starts). Before the session_start it is held (announced).
// mu is held.
func (c *Client) warn(dst []event.Body, msg string, once bool) []event.Body {
	msg = truncate(msg, 2000)
	if msg == "" || once && c.warned[msg] {
		return dst
	}
	if once && len(c.warned) < maxQueued {
		c.warned[msg] = true
	}
	w := &event.Warning{Code: event.WarnAgentWarning, Message: msg}
	if !c.announced {
		if len(c.held) < maxQueued {
			c.held = append(c.held, w)
		}
		return dst
	}
	return append(dst, w)
}

// notice joins a configWarning's or deprecationNotice's text on one line,
// as `codex exec` words it: "summary (details)".
func notice(summary, details string) string {
	summary, details = strings.TrimSpace(summary), strings.TrimSpace(details)
	switch {
	case details == "":
		return summary
	case summary == "":
		return details
	}
	return summary + " (" + details + ")"
}

// mcpStartup maps mcpServer/startupStatus/updated: an MCP server that
// failed to start is a warning (Codex goes on without its tools); its
// other states say nothing of the run's. Its error is a string, not the
// error notification's object: it has a shape of its own. mu is held.
func (c *Client) mcpStartup(dst []event.Body, params json.RawMessage) ([]event.Body, bool) {
	var p struct {
		Name          string `json:"name"`
		Status        string `json:"status"`
		Error         string `json:"error"`
		FailureReason string `json:"failureReason"`
	}
	if json.Unmarshal(params, &p) != nil {
		return dst, false
	}
	if p.Status != "failed" {
		return dst, true
	}
	msg := p.Error // "MCP client for `NAME` failed to start: …"
	if msg == "" {
		msg = notice("MCP server "+truncate(p.Name, 200)+" failed to start", p.FailureReason)
	}
	return c.warn(dst, msg, true), true
}

// inTurn reports whether a notification of turn id (either field) belongs
// to the turn in flight. Until the turn's id is known (turnBegun) one
// that names a turn is of an earlier one: Codex answers turn/start before
// it says anything of the new turn. mu is held.
func (c *Client) inTurn(id, turn string) bool {
	id = either(id, turn)
	return c.phase == asTurn && (id == "" || id == c.turnID)
}

// usage maps thread/tokenUsage/updated, a thread's running total: its
// growth is a usage event of the turn in flight. Each thread counts from
// its own total: the session's, and any other Codex reports on this
// connection (a sub-agent it spawned, whose model calls are the turn's
// too). A total reported outside the turn (the thread's earlier turns,
// which Codex reports right after thread/resume; a late report of a turn
// that has ended) is no turn's of this session: the next growth counts
// from it. A total below one already counted (a late, stale report) has
// no growth. mu is held.
func (c *Client) usage(dst []event.Body, p *turnParams) []event.Body {
	t := p.TokenUsage.Total
	total := openAIUsage(t.Input, t.Cached, t.Written, t.Output, t.Reasoning)
	thread := p.ThreadID
	if thread == c.thread {
		thread = ""
	}
	prev := c.seen[thread].total
	c.keepTotal(thread, highest(prev, total))
	// Another thread's turn has ids of its own: only the session's
	// notifications are held to the turn in flight.
	if c.phase != asTurn || thread == "" && c.w != nil && !c.inTurn(p.TurnID, p.Turn.ID) {
		return dst
	}
	inc := beyond(total, prev)
	c.p.total.Add(inc)
	c.turnUsage.Add(inc)
	if !inc.IsZero() {
		dst = append(dst, &inc)
	}
	return dst
}

// threadTotal is a thread's running total as far as it is counted, and
// when it was last heard from (Client.heard).
type threadTotal struct {
	total event.Usage
	heard int
}

// keepTotal keeps total as thread's running total. A new thread past
// maxQueued others takes the place of the one heard from least recently
// (a sub-agent long done): Codex spawns sub-agents without end in a long
// session, and a hostile one names a new thread in each line. mu is held.
func (c *Client) keepTotal(thread string, total event.Usage) {
	if c.seen == nil {
		c.seen = map[string]threadTotal{}
	}
	others := len(c.seen)
	if _, ok := c.seen[""]; ok {
		others--
	}
	if _, ok := c.seen[thread]; !ok && thread != "" && others >= maxQueued {
		oldest := ""
		for id, t := range c.seen {
			if id != "" && (oldest == "" || t.heard < c.seen[oldest].heard) {
				oldest = id
			}
		}
		delete(c.seen, oldest)
	}
	c.heard++
	c.seen[thread] = threadTotal{total: total, heard: c.heard}
}

// highest is a and b's larger count in each field.
func highest(a, b event.Usage) event.Usage {
	return event.Usage{
		InputTokens:      max(a.InputTokens, b.InputTokens),
		OutputTokens:     max(a.OutputTokens, b.OutputTokens),
		CacheReadTokens:  max(a.CacheReadTokens, b.CacheReadTokens),
		CacheWriteTokens: max(a.CacheWriteTokens, b.CacheWriteTokens),
		ReasoningTokens:  max(a.ReasoningTokens, b.ReasoningTokens),
	}
}

// beyond is what total has over base, field by field, none below zero.
func beyond(total, base event.Usage) event.Usage {
	return event.Usage{
		InputTokens:      max(total.InputTokens-base.InputTokens, 0),
		OutputTokens:     max(total.OutputTokens-base.OutputTokens, 0),
		CacheReadTokens:  max(total.CacheReadTokens-base.CacheReadTokens, 0),
		CacheWriteTokens: max(total.CacheWriteTokens-base.CacheWriteTokens, 0),
		ReasoningTokens:  max(total.ReasoningTokens-base.ReasoningTokens, 0),
	}
}

func either(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// turnCompleted ends the turn: completed is success, interrupted
// cancelled, failed an error with the turn's message. mu is held.
func (c *Client) turnCompleted(dst []event.Body, p *turnParams) []event.Body {
	switch p.Turn.Status {
	case "completed":
		return c.turnEnded(dst, event.ResultSuccess, nil)
	case "interrupted":
		return c.turnEnded(dst, event.ResultCancelled, nil)
	}
	msg := "turn failed"
	switch {
	case p.Turn.Error != nil && p.Turn.Error.Message != "":
		msg = truncate(p.Turn.Error.Message, 2000)
	case c.retryErr != nil:
		msg = c.retryErr.Message
	}
	return c.turnEnded(dst, event.ResultError, agentError(msg))
}

// item maps item/started and item/completed (phase "started",
// "completed") with exec's mapping, and keeps the tool calls in flight
// for their approvals. mu is held.
func (c *Client) item(dst []event.Body, phase string, raw json.RawMessage) []event.Body {
	var it item
	s := string(raw)
	if it.read(s) == 0 {
		return dst
	}
	typ := it.typ.text
	done := phase == "completed"
	switch typ {
	case "reasoning":
		if done {
			if text := reasoningText(s); text != "" {
				dst = append(dst, &event.Reasoning{Text: text})
			}
		}
		return dst
	case "commandExecution":
		// An item that ends without its output (aggregatedOutput null)
		// gets what was streamed of it.
		if out := c.output[it.id.text]; done && out != nil && jsonscan.Str(it.aggregatedOutput) == "" {
			it.aggregatedOutput = string(event.AppendString(nil, out.String()))
		}
	}
	exec := execItemTypes[typ]
	if exec == "" {
		return dst // the user's own message, compaction, review marks: nothing of the run's
	}
	n := len(dst)
	dst, _ = c.p.item(dst, phase, exec, &it)
	for _, b := range dst[n:] {
		switch v := b.(type) {
		case *event.ToolStart:
			if len(c.started) < maxQueued {
				cp := *v
				c.started[v.CallID] = &cp
			}
		case *event.ToolEnd:
			delete(c.started, v.CallID)
			delete(c.output, v.CallID)
		}
	}
	return dst
}

// streamed keeps a running command's streamed output, within the
// event's cap (at most maxQueued commands are kept). mu is held.
func (c *Client) streamed(id, delta string) {
	b := c.output[id]
	if b == nil {
		if c.started[id] == nil {
			return // no command of this id is running
		}
		b = &strings.Builder{}
		c.output[id] = b
	}
	if room := event.MaxOutputBytes - b.Len(); room > 0 {
		b.WriteString(delta[:min(len(delta), room)])
	}
}

// reasoningText joins a reasoning item's summary and content.
func reasoningText(raw string) string {
	var parts []string
	for _, k := range []string{"summary", "content"} {
		jsonscan.Values(jsonscan.Get(raw, k), func(v string) bool {
			if t := jsonscan.StrOnly(v); t != "" {
				parts = append(parts, t)
			}
			return true
		})
	}
	return strings.Join(parts, "\n")
}

// request answers a request of Codex's. An approval, in a session that
// asks its caller, is a permission_request answered by Answer; otherwise
// the permissions answer it (read-only refuses). What harness cannot
// answer (user input, MCP elicitations, a method it does not know) is
// refused, and said. mu is held.
func (c *Client) request(dst []event.Body, msg *rpc) []event.Body {
	if c.w == nil {
		return dst // a capture: the answer is not on this side
	}
	var p struct {
		ItemID      string          `json:"itemId"`
		Command     string          `json:"command"`
		Permissions json.RawMessage `json:"permissions"`
		Questions   json.RawMessage `json:"questions"`
	}
	json.Unmarshal(msg.Params, &p)
	id := json.RawMessage(strings.Clone(string(msg.ID)))
	var err error
	var said event.Body
	switch msg.Method {
	case approveCommand, approveFileChange, approvePermissions:
		perms := json.RawMessage(strings.Clone(string(p.Permissions)))
		// One of no turn in flight would wait for no turn of the
		// caller's, and hold the idle watchdog off in the next.
		if _, dup := c.asks[p.ItemID]; c.ask && c.phase == asTurn && p.ItemID != "" && !dup && len(c.asks) < maxQueued {
			c.asks[p.ItemID] = approval{id: id, method: msg.Method, permissions: perms}
			return append(dst, c.permissionRequest(msg.Method, p.ItemID, p.Command, perms))
		}
		// Not asked (or a flood, or no turn's): full-access grants,
		// read-only and ask refuse.
		err = c.conn.Reply(id, approvalAnswer(msg.Method, perms, !c.ask && c.task.Permissions != adapters.ReadOnly))
	case "item/tool/requestUserInput":
		err = c.conn.Reply(id, map[string]any{"answers": map[string]any{}})
		said = &event.Warning{Code: event.WarnAgentWarning,
			Message: "the agent asked for user input, which harness cannot give: " + questions(string(p.Questions))}
	case "mcpServer/elicitation/request":
		err = c.conn.Reply(id, map[string]any{"action": "decline", "content": nil})
	default:
		err = c.conn.Write(map[string]any{"id": id, "error": map[string]any{"code": -32601, "message": "harness does not answer " + msg.Method}})
		said = &event.Warning{Code: event.WarnAgentWarning,
			Message: "codex app-server asked " + truncate(msg.Method, 80) + ", which harness does not answer; refused"}
	}
	if adapters.Unread(err) {
		// Its requests would go on unanswered, each answer lost.
		return c.fail(dst, "the agent does not read harness's answers: "+err.Error())
	}
	if said != nil {
		dst = append(dst, said)
	}
	return dst
}

// permissionRequest reports an approval Codex asks of the caller, with
// what its item said of the call. mu is held.
func (c *Client) permissionRequest(method, itemID, command string, perms json.RawMessage) *event.PermissionRequest {
	r := &event.PermissionRequest{CallID: itemID, Tool: "command_execution", Kind: event.KindShell, Command: command}
	switch method {
	case approveFileChange:
		r.Tool, r.Kind, r.Command = "file_change", event.KindEdit, ""
	case approvePermissions:
		r.Tool, r.Kind, r.Command, r.Input = "request_permissions", event.KindOther, "", perms
	}
	if ts := c.started[itemID]; ts != nil {
		r.Tool, r.Kind, r.Input, r.Path = ts.Name, ts.Kind, ts.Input, ts.Path
		if ts.Command != "" {
			r.Command = ts.Command
		}
	}
	return r
}
