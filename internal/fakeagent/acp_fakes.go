package fakeagent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// ACP fakes: agents that speak the Agent Client Protocol on stdio
// (JSON-RPC 2.0, one message a line), well or badly.
func init() {
	Register("acp-agent", acpAgent)
}

// ACPFile is the file the acp-agent's normal session writes in its cwd,
// and ACPFileText its content.
const (
	ACPFile     = "hello.txt"
	ACPFileText = "hello from acp\n"
)

// ACPResumable is the session the acp-agent resumes and loads, and
// ACPHistory the answer its load replays.
const (
	ACPResumable = "sess-1"
	ACPHistory   = "an answer of the earlier conversation"
)

// acp-agent MODE: an ACP agent. MODE is
//
//	normal       initialize, session/new (modes default and full-access),
//	             set_mode, and a prompt that thinks, speaks, asks permission
//	             for an edit, writes ACPFile (when allowed), reports the
//	             diff, a plan, the cost, and ends end_turn with usage
//	slow-tool    a prompt that starts a shell call and waits for
//	             session/cancel, then answers cancelled
//	hang-prompt  a prompt never answered, and nothing printed
//	no-init      reads everything, answers nothing
//	bad-version  answers initialize with protocolVersion 99
//	bad-json     answers initialize with a line that is not JSON
//	undeclared   at the prompt, calls fs/read_text_file (not advertised)
//	resumable    normal, and offers session/resume (sessionCapabilities)
//	loadable     normal, and offers session/load, which replays the
//	             conversation so far (ACPHistory) before its answer
//
// session/resume and session/load know the session ACPResumable only;
// for another id they answer an error, as the real agents do.
//
// and, for live sessions (several prompts), the normal turn with a fault:
//
//	exit-after-turn   exits 0 right after answering its first prompt
//	die-mid-turn      at its second prompt, speaks, then exits 3
//	flood-between     after each answer, 2000 message chunks and a tool
//	                  call before the next prompt
//	answer-unsent     after each answer, answers a prompt never sent and
//	                  the one it just answered again
//	slow-then-normal  the first prompt as slow-tool, the others normal
//	ignore-cancel     a prompt that starts a shell call and never ends,
//	                  whatever session/cancel says
//	ignore-all        ignore-cancel, and SIGINT and SIGTERM ignored too
//	no-cost           the normal turn, its usage_update without a cost
//
// It exits 0 at EOF on stdin.
func acpAgent(args []string) int {
	mode := "normal"
	if len(args) > 0 {
		mode = args[0]
	}
	if mode == "ignore-all" {
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
		mode = "ignore-cancel"
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	send := func(v map[string]any) { v["jsonrpc"] = "2.0"; _ = out.Encode(v) }
	update := func(sid string, u map[string]any) {
		if mode == "no-cost" {
			delete(u, "cost")
		}
		send(map[string]any{"method": "session/update", "params": map[string]any{"sessionId": sid, "update": u}})
	}
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
	}
	read := func() (msg, bool) {
		var m msg
		for in.Scan() {
			if json.Unmarshal(in.Bytes(), &m) == nil {
				return m, true
			}
		}
		return m, false
	}
	cwd := ""
	turns := 0
	for {
		m, ok := read()
		if !ok {
			return 0
		}
		if mode == "no-init" {
			continue
		}
		switch m.Method {
		case "initialize":
			switch mode {
			case "bad-version":
				send(map[string]any{"id": m.ID, "result": map[string]any{"protocolVersion": 99}})
			case "bad-json":
				fmt.Println(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1` + "\x00garbage")
			default:
				caps := map[string]any{"loadSession": mode == "loadable"}
				if mode == "resumable" {
					caps["sessionCapabilities"] = map[string]any{"resume": map[string]any{}}
				}
				send(map[string]any{"id": m.ID, "result": map[string]any{"protocolVersion": 1,
					"agentCapabilities": caps, "authMethods": []any{}}})
			}
		case "session/new", "session/resume", "session/load":
			var p struct {
				Cwd       string `json:"cwd"`
				SessionID string `json:"sessionId"`
			}
			_ = json.Unmarshal(m.Params, &p)
			cwd = p.Cwd
			modes := map[string]any{"currentModeId": "default", "availableModes": []any{
				map[string]string{"id": "default", "name": "Default"}, map[string]string{"id": "full-access", "name": "Full access"}}}
			if m.Method == "session/new" {
				send(map[string]any{"id": m.ID, "result": map[string]any{"sessionId": "sess-1", "modes": modes}})
				break
			}
			if p.SessionID != ACPResumable {
				send(map[string]any{"id": m.ID, "error": map[string]any{"code": -32002, "message": "Resource not found: session " + p.SessionID}})
				break
			}
			if m.Method == "session/load" {
				// The conversation so far, replayed before the answer.
				update(ACPResumable, map[string]any{"sessionUpdate": "user_message_chunk", "content": map[string]string{"type": "text", "text": "the earlier prompt"}})
				update(ACPResumable, map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]string{"type": "text", "text": ACPHistory}})
				update(ACPResumable, map[string]any{"sessionUpdate": "tool_call", "toolCallId": "earlier-1", "title": "ls",
					"kind": "execute", "status": "completed", "rawInput": map[string]any{"command": "ls"}})
			}
			send(map[string]any{"id": m.ID, "result": map[string]any{"modes": modes}})
		case "session/set_mode":
			send(map[string]any{"id": m.ID, "result": map[string]any{}})
		case "session/prompt":
			turns++
			if mode == "die-mid-turn" && turns == 2 {
				update("sess-1", map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]string{"type": "text", "text": "Half an ans"}})
				os.Exit(3)
			}
			if mode == "slow-then-normal" && turns == 1 {
				mode = "slow-tool" // back to normal once cancelled, below
			}
			switch mode {
			case "ignore-cancel":
				update("sess-1", map[string]any{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "sleep 60",
					"kind": "execute", "status": "in_progress", "rawInput": map[string]any{"command": "sleep 60"}})
				continue
			case "hang-prompt":
				continue
			case "give-up":
				// Ends the turn cancelled unasked, as codex-acp does after
				// a permission it was refused.
				send(map[string]any{"id": m.ID, "result": map[string]any{"stopReason": "cancelled"}})
				continue
			case "undeclared":
				send(map[string]any{"id": 77, "method": "fs/read_text_file", "params": map[string]any{"sessionId": "sess-1", "path": "/etc/hostname"}})
				continue
			case "slow-tool":
				update("sess-1", map[string]any{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "sleep 60",
					"kind": "execute", "status": "in_progress", "rawInput": map[string]any{"command": "sleep 60"}})
				for {
					c, ok := read()
					if !ok {
						return 0
					}
					if c.Method == "session/cancel" {
						break
					}
				}
				update("sess-1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "failed"})
				send(map[string]any{"id": m.ID, "result": map[string]any{"stopReason": "cancelled"}})
				if turns == 1 && len(args) > 0 && args[0] == "slow-then-normal" {
					mode = "normal"
				}
				continue
			}
			acpNormalTurn(cwd, TurnFile(turns), m.ID, send, update, func() json.RawMessage {
				for {
					r, ok := read()
					if !ok {
						return nil
					}
					if string(r.ID) == "900" && r.Method == "" {
						return r.Result
					}
				}
			})
			acpAfterTurn(mode, m.ID, send, update)
			if mode == "exit-after-turn" {
				return 0
			}
		}
	}
}

// acpAfterTurn is what a live-session fault mode does once it answered a
// prompt whose request id was id.
func acpAfterTurn(mode string, id json.RawMessage, send func(map[string]any), update func(string, map[string]any)) {
	switch mode {
	case "flood-between":
		for i := range 2000 {
			update("sess-1", map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]string{"type": "text", "text": fmt.Sprintf("chatter %d ", i)}})
		}
		update("sess-1", map[string]any{"sessionUpdate": "tool_call", "toolCallId": "between", "title": "ls", "kind": "execute", "status": "completed"})
	case "answer-unsent":
		send(map[string]any{"id": 4242, "result": map[string]any{"stopReason": "end_turn", "usage": map[string]int{"inputTokens": 999, "outputTokens": 999, "totalTokens": 1998}}})
		send(map[string]any{"id": id, "result": map[string]any{"stopReason": "end_turn", "usage": map[string]int{"inputTokens": 999, "outputTokens": 999, "totalTokens": 1998}}})
	}
}

// TurnFile is the file the normal mode's nth prompt writes: ACPFile, then
// turn-N.txt (a live session's later turns).
func TurnFile(n int) string {
	if n <= 1 {
		return ACPFile
	}
	return fmt.Sprintf("turn-%d.txt", n)
}

// acpNormalTurn is the normal mode's answer to a prompt, writing file.
func acpNormalTurn(cwd, file string, id json.RawMessage, send func(map[string]any), update func(string, map[string]any), answer func() json.RawMessage) {
	const sid = "sess-1"
	text := func(kind, s string) {
		update(sid, map[string]any{"sessionUpdate": kind, "content": map[string]string{"type": "text", "text": s}})
	}
	text("agent_thought_chunk", "I should write ")
	text("agent_thought_chunk", "the file.")
	text("agent_message_chunk", "Writing ")
	text("agent_message_chunk", "the file.")
	path := filepath.Join(cwd, file)
	update(sid, map[string]any{"sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "Write " + file,
		"kind": "edit", "status": "pending", "locations": []any{map[string]string{"path": path}},
		"rawInput": map[string]string{"path": path, "content": ACPFileText}})
	send(map[string]any{"id": 900, "method": "session/request_permission", "params": map[string]any{"sessionId": sid,
		"toolCall": map[string]any{"toolCallId": "call-1", "kind": "edit", "title": "Write " + file},
		"options": []any{map[string]string{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
			map[string]string{"optionId": "no", "name": "Reject", "kind": "reject_once"}}}})
	var a struct {
		Outcome struct {
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	_ = json.Unmarshal(answer(), &a)
	if a.Outcome.OptionID == "yes" {
		update(sid, map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "in_progress"})
		time.Sleep(20 * time.Millisecond) // the file's mtime after the call's start
		_ = os.WriteFile(path, []byte(ACPFileText), 0o644)
		update(sid, map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "completed",
			"content": []any{map[string]any{"type": "diff", "path": path, "oldText": nil, "newText": ACPFileText}}})
	} else {
		update(sid, map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "failed",
			"content": []any{map[string]any{"type": "content", "content": map[string]string{"type": "text", "text": "rejected"}}}})
	}
	update(sid, map[string]any{"sessionUpdate": "plan", "entries": []any{
		map[string]string{"content": "write the file", "priority": "high", "status": "completed"}}})
	text("agent_message_chunk", "Done.")
	update(sid, map[string]any{"sessionUpdate": "usage_update", "used": 1200, "size": 200000,
		"cost": map[string]any{"amount": 0.0125, "currency": "USD"}})
	send(map[string]any{"id": id, "result": map[string]any{"stopReason": "end_turn",
		"usage": map[string]int{"inputTokens": 10, "outputTokens": 5, "cachedReadTokens": 100, "cachedWriteTokens": 20, "totalTokens": 135}}})
}
