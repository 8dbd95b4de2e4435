package acpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/filediff"
)

// forwarder turns one run's events into session/updates. Events come
// one at a time (harness.Options), so it needs no lock.
type forwarder struct {
	conn *acpsdk.AgentSideConnection
	sid  acpsdk.SessionId
	cwd  string
	ctx  context.Context
	// note goes to the client before the run's first update, or in the
	// answer's place when there is none (harness's word on the run).
	note      string
	said      bool // an update went out
	textDelta bool // text deltas went out since the last message
	thinkings bool // reasoning deltas went out since the last reasoning
	// msgID and thoughtID are the ACP messageId of the message and of
	// the thought being sent, "" between two: a client groups chunks by
	// it, and told no two messages apart ("I'll run the command." and,
	// after the call, "DONE: file written", one message).
	msgID, thoughtID string
	fatal            *event.Error
}

func (f *forwarder) send(u acpsdk.SessionUpdate) {
	f.sayNote()
	f.said = true
	_ = f.conn.SessionUpdate(f.ctx, acpsdk.SessionNotification{SessionId: f.sid, Update: u})
}

// sayNote sends the note, once.
func (f *forwarder) sayNote() {
	if note := f.note; note != "" {
		f.note = ""
		f.msgID = ""
		f.message(note)
		f.msgID = ""
	}
}

func textBlock(s string) acpsdk.ContentBlock {
	return acpsdk.ContentBlock{Text: &acpsdk.ContentBlockText{Type: "text", Text: s}}
}

func (f *forwarder) message(s string) {
	f.sayNote()
	id := messageID(&f.msgID)
	f.send(acpsdk.SessionUpdate{AgentMessageChunk: &acpsdk.SessionUpdateAgentMessageChunk{SessionUpdate: "agent_message_chunk",
		Content: textBlock(s), MessageId: &id}})
}

func (f *forwarder) thought(s string) {
	id := messageID(&f.thoughtID)
	f.send(acpsdk.SessionUpdate{AgentThoughtChunk: &acpsdk.SessionUpdateAgentThoughtChunk{SessionUpdate: "agent_thought_chunk",
		Content: textBlock(s), MessageId: &id}})
}

// messageID returns *id, a new one (a random UUID, as ACP wants them)
// when *id is "".
func messageID(id *string) string {
	if *id == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		b[6] = b[6]&0x0f | 0x40 // version 4
		b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
		h := hex.EncodeToString(b[:])
		*id = h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
	return *id
}

// toolKinds maps our tool kinds to ACP's.
var toolKinds = map[event.Kind]acpsdk.ToolKind{
	event.KindShell: "execute", event.KindRead: "read", event.KindWrite: "edit", event.KindEdit: "edit",
	event.KindDelete: "delete", event.KindSearch: "search", event.KindWeb: "fetch", event.KindMCP: "other",
	event.KindTodo: "think", event.KindTask: "other", event.KindOther: "other",
}

func (f *forwarder) event(ev event.Event) {
	switch v := ev.Body.(type) {
	case *event.TextDelta:
		if v.ParentCallID == "" {
			f.textDelta = true
			f.message(v.Text)
		}
	case *event.Message:
		if v.Role == event.RoleAssistant && v.ParentCallID == "" && !f.textDelta {
			f.message(v.Text)
		}
		if v.ParentCallID == "" {
			f.msgID = ""
		}
		f.textDelta = false
	case *event.ReasoningDelta:
		f.thinkings = true
		f.thought(v.Text)
	case *event.Reasoning:
		if !f.thinkings {
			f.thought(v.Text)
		}
		f.thinkings, f.thoughtID = false, ""
	case *event.ToolStart:
		title := v.Name
		if v.Command != "" {
			title += ": " + v.Command
		} else if v.Path != "" {
			title += ": " + v.Path
		}
		tc := &acpsdk.SessionUpdateToolCall{SessionUpdate: "tool_call", ToolCallId: acpsdk.ToolCallId(v.CallID), Title: title,
			Kind: toolKinds[v.Kind], Status: "in_progress", RawInput: v.Input}
		for _, p := range append([]string{v.Path}, v.Paths...) {
			if p != "" {
				tc.Locations = append(tc.Locations, acpsdk.ToolCallLocation{Path: f.abs(p)})
			}
		}
		f.send(acpsdk.SessionUpdate{ToolCall: tc})
	case *event.ToolEnd:
		status := acpsdk.ToolCallStatus("completed")
		if v.Status != event.StatusOK {
			status = "failed"
		}
		u := &acpsdk.SessionToolCallUpdate{SessionUpdate: "tool_call_update", ToolCallId: acpsdk.ToolCallId(v.CallID), Status: &status}
		if v.Output != "" {
			u.Content = append(u.Content, acpsdk.ToolCallContent{Content: &acpsdk.ToolCallContentContent{Type: "content", Content: textBlock(v.Output)}})
		}
		u.Content = append(u.Content, f.diffs(v.Diff)...)
		if v.Status != event.StatusOK && v.Status != event.StatusError {
			u.Meta = map[string]any{"harness": map[string]any{"status": v.Status, "synthetic": v.Synthetic}}
		}
		f.send(acpsdk.SessionUpdate{ToolCallUpdate: u})
	case *event.Warning:
		switch v.Code {
		case event.WarnIdle, event.WarnToolStalled, event.WarnAgentRetry:
			f.thoughtID = "" // a thought of harness's own
			f.thought(fmt.Sprintf("[harness %s] %s\n", v.Code, v.Message))
			f.thoughtID = ""
		}
	case *event.Error:
		if v.Fatal {
			f.fatal = v
		}
	}
}

// abs makes a path the agent named absolute, as ACP wants locations.
func (f *forwarder) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(f.cwd, p)
}

// diffs turns a tool's unified diff into ACP diff contents, with the whole
// file before (none for a creation) and after: after is read from the
// disk, before is after with the diff undone. A file that moved on since
// (a later call), or that the diff does not undo exactly, is given as the
// diff's text instead: never a wrong before.
func (f *forwarder) diffs(diff string) []acpsdk.ToolCallContent {
	if diff == "" {
		return nil
	}
	patches, err := event.ParsePatch(diff)
	var out []acpsdk.ToolCallContent
	for _, p := range patches {
		if err != nil {
			break
		}
		name := strings.TrimPrefix(p.To, "b/")
		if p.To == "/dev/null" {
			name = strings.TrimPrefix(p.From, "a/")
		}
		path := f.abs(name)
		// Never a named pipe or a device (a read would block or act on
		// it), nor a file larger than a live diff reads.
		after, readErr := filediff.ReadRegularFile(path, filediff.MaxFileBytes)
		if readErr != nil && !errors.Is(readErr, fs.ErrNotExist) {
			out = nil
			break
		}
		exists := readErr == nil
		before, existed, err := event.ApplyPatch(p.Reverse(), string(after), exists)
		if err != nil || (!exists && p.To != "/dev/null") {
			out = nil
			break
		}
		d := &acpsdk.ToolCallContentDiff{Type: "diff", Path: path, NewText: string(after)}
		if existed {
			d.OldText = &before
		}
		out = append(out, acpsdk.ToolCallContent{Diff: d})
	}
	if out == nil {
		out = []acpsdk.ToolCallContent{{Content: &acpsdk.ToolCallContentContent{Type: "content", Content: textBlock("```diff\n" + diff + "```")}}}
	}
	return out
}

// response is the prompt's answer for the run's result: end_turn on
// success, cancelled when interrupted, and refusal (the turn is over and
// not to be built on) for a run that failed or that the watchdog ended,
// with a message saying why; _meta.harness carries the result's status,
// the error code, the session id of the agent and the cost.
func (f *forwarder) response(res *event.Result) acpsdk.PromptResponse {
	resp := acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}
	f.sayNote() // before the answer, even when the run said nothing
	if res == nil {
		return resp
	}
	meta := map[string]any{"status": res.Status, "agent_session_id": res.SessionID}
	switch res.Status {
	case event.ResultSuccess:
	case event.ResultCancelled:
		resp.StopReason = "cancelled"
	default:
		resp.StopReason = "refusal"
		msg := "the run failed"
		if f.fatal != nil {
			msg = f.fatal.Code + ": " + f.fatal.Message
			meta["error"] = f.fatal.Code
			if f.fatal.Class != "" {
				meta["class"] = f.fatal.Class
			}
		}
		f.msgID = "" // harness's own message
		f.message(fmt.Sprintf("\n[harness] %s (%s)\n", msg, res.Status))
	}
	u := res.Usage
	// ACP's usage counts tokens; a cost alone (an agent that priced the
	// turn and counted nothing) is no usage: the cost is in _meta.
	if u.Tokens() != (event.Tokens{}) {
		cr, cw, th := int(u.CacheReadTokens), int(u.CacheWriteTokens), int(u.ReasoningTokens)
		resp.Usage = &acpsdk.Usage{InputTokens: int(u.InputTokens), OutputTokens: int(u.OutputTokens),
			CachedReadTokens: &cr, CachedWriteTokens: &cw, ThoughtTokens: &th,
			TotalTokens: int(u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens)}
	}
	if res.CostUSD != nil {
		meta["cost_usd"] = *res.CostUSD
		if res.CostEstimated {
			meta["cost_estimated"] = true
		}
	}
	resp.Meta = map[string]any{"harness": meta}
	return resp
}
