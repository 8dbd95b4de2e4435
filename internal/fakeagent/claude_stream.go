package fakeagent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// ClaudeStream is a fake Claude Code over its two-way protocol (`-p
// --input-format stream-json`; its flags are ignored): each user message
// read on stdin is a turn — system/init, an assistant text, a result with
// 10 input and 5 output tokens — and an interrupt control_request is
// acknowledged and ends the turn in flight as the CLI does
// (error_during_execution). A user message with a uuid is reported
// queued and started (command_lifecycle) before its turn's init, as
// Claude Code 2.1.329 reports it. It exits 0 at EOF. $ClaudeStreamMode
// picks a fault:
//
//   - die-mid-turn: the second turn prints its init and text, then the
//     agent exits 3.
//   - garbage: a line that is not JSON in each turn, before its result.
//   - hang: the first turn never ends (until an interrupt).
//   - deaf: turns never end, and interrupts are ignored.
//   - mute: it reads its stdin and never says anything.
//   - slow-stop: the first turn never ends until an interrupt, which it
//     acknowledges at once but takes 3 s to act on (as the real CLI was
//     seen to under load).
//   - ask: each turn asks can_use_tool for a Bash call (tool_use_id
//     call-N) and, allowed, writes ask-N.txt in its cwd; the tool_result
//     says what came of it.
//   - ask-withdraw: as ask, but the CLI withdraws its can_use_tool
//     (control_cancel_request) at once, and the turn never ends.
//   - stamp: each turn's answer is "recv NS", NS the MonotonicNS at which
//     the fake read the user message (make bench: prompt latency).
const ClaudeStream = "claude-stream"

// ClaudeStreamMode is the environment variable of ClaudeStream's fault.
const ClaudeStreamMode = "FAKE_CLAUDE_STREAM_MODE"

func init() { Register(ClaudeStream, claudeStream) }

func claudeStream([]string) int {
	mode := os.Getenv(ClaudeStreamMode)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := json.NewEncoder(os.Stdout)
	turns, inTurn := 0, false
	end := func(result map[string]any) {
		out.Encode(result)
		inTurn = false
	}
	for in.Scan() {
		read := MonotonicNS()
		var m struct {
			Type      string `json:"type"`
			UUID      string `json:"uuid"`
			RequestID string `json:"request_id"`
			Request   struct {
				Subtype string `json:"subtype"`
			} `json:"request"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil {
			return 4
		}
		switch {
		case m.Type == "control_request" && m.Request.Subtype == "interrupt" && mode != "deaf":
			out.Encode(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": m.RequestID, "response": map[string]any{}}})
			if mode == "slow-stop" {
				time.Sleep(3 * time.Second) // the agent's slowness, not a test's wait
			}
			if inTurn {
				end(map[string]any{"type": "result", "subtype": "error_during_execution", "is_error": true, "session_id": "fake-1",
					"usage": map[string]int{"input_tokens": 0, "output_tokens": 0}, "errors": []string{"aborted"}})
			}
		case m.Type == "control_response" && mode == "ask" && inTurn:
			var r struct {
				Response struct {
					Response struct {
						Behavior string `json:"behavior"`
					} `json:"response"`
				} `json:"response"`
			}
			json.Unmarshal(in.Bytes(), &r)
			// As Claude Code 2.1.329 reports a call it was refused.
			id := fmt.Sprintf("call-%d", turns)
			result, isErr, decision := "The user denied this tool call.", true, "reject"
			if r.Response.Response.Behavior == "allow" {
				os.WriteFile(fmt.Sprintf("ask-%d.txt", turns), []byte("ok\n"), 0o644)
				result, isErr, decision = "written", false, "accept"
			}
			out.Encode(map[string]any{"type": "user", "parent_tool_use_id": nil, "message": map[string]any{"role": "user",
				"content": []map[string]any{{"type": "tool_result", "tool_use_id": id, "content": result, "is_error": isErr}}},
				"tool_result_meta": []map[string]any{{"id": id, "permission_decision": map[string]string{"decision": decision}}}})
			end(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": result, "session_id": "fake-1",
				"usage": map[string]int{"input_tokens": 10, "output_tokens": 5}})
		case mode == "mute":
		case m.Type == "user":
			turns++
			inTurn = true
			if m.UUID != "" {
				for _, state := range []string{"queued", "started"} {
					out.Encode(map[string]any{"type": "command_lifecycle", "command_uuid": m.UUID, "state": state, "session_id": "fake-1"})
				}
			}
			out.Encode(map[string]any{"type": "system", "subtype": "init", "session_id": "fake-1", "model": "fake-model", "cwd": "."})
			text := fmt.Sprintf("answer %d", turns)
			if mode == "stamp" {
				text = fmt.Sprintf("recv %d", read)
			}
			out.Encode(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"id": fmt.Sprintf("msg_%d", turns),
				"content": []map[string]string{{"type": "text", "text": text}}, "usage": map[string]int{"input_tokens": 10, "output_tokens": 1}}})
			switch {
			case mode == "die-mid-turn" && turns == 2:
				return 3
			case mode == "deaf" || (mode == "hang" || mode == "slow-stop") && turns == 1:
				continue
			case mode == "ask" || mode == "ask-withdraw":
				id := fmt.Sprintf("call-%d", turns)
				input := map[string]string{"command": "echo ok > " + fmt.Sprintf("ask-%d.txt", turns)}
				out.Encode(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"id": fmt.Sprintf("msg_%d", turns),
					"content": []map[string]any{{"type": "tool_use", "id": id, "name": "Bash", "input": input}}, "usage": map[string]int{"input_tokens": 10, "output_tokens": 1}}})
				out.Encode(map[string]any{"type": "control_request", "request_id": fmt.Sprintf("req-%d", turns),
					"request": map[string]any{"subtype": "can_use_tool", "tool_name": "Bash", "input": input, "tool_use_id": id}})
				if mode == "ask-withdraw" {
					out.Encode(map[string]any{"type": "control_cancel_request", "request_id": fmt.Sprintf("req-%d", turns)})
				}
				continue
			case mode == "garbage":
				Line("garbage \x01 not json {")
			}
			end(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": text, "session_id": "fake-1",
				"usage": map[string]int{"input_tokens": 10, "output_tokens": 5}})
		}
	}
	return 0
}
