package fakeagent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Hostile ACP agents: they set up a session as acp-agent does (no modes),
// then misbehave at the prompt.
func init() {
	Register("acp-hostile", acpHostile)
}

// ACPGoFifo is the named pipe, in the session's cwd, that acp-hostile
// wait-go reads a line from before it answers its prompt: the test
// writes one to let the turn end.
const ACPGoFifo = "go.fifo"

// acp-hostile MODE [ARGS]: an ACP agent that, at the prompt,
//
//	flood-permission N  sends N session/request_permission requests
//	                    (0: without end) and never reads stdin again
//	flood-chunks BYTES  streams BYTES of message chunks and BYTES of
//	                    thought chunks (64 KiB each), then ends end_turn
//	open-tools N SIZE   opens N tool calls, each with a rawInput, a text
//	                    content and a diff of SIZE bytes, then closes
//	                    them all and ends end_turn
//	fatal-then-more     says a chunk, prints a line that is not JSON,
//	                    then goes on: a chunk, a tool call, the answer
//	wait-go             starts a read call, waits for a line on ACPGoFifo
//	                    in its cwd, then ends end_turn
//
// It exits 0 at EOF on stdin.
func acpHostile(args []string) int {
	mode := ""
	if len(args) > 0 {
		mode = args[0]
	}
	num := func(i int) int {
		if i < len(args) {
			n, _ := strconv.Atoi(args[i])
			return n
		}
		return 0
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	w := bufio.NewWriterSize(os.Stdout, 256<<10)
	out := json.NewEncoder(w)
	send := func(v map[string]any) {
		v["jsonrpc"] = "2.0"
		_ = out.Encode(v)
	}
	const sid = "h-1"
	update := func(u map[string]any) {
		send(map[string]any{"method": "session/update", "params": map[string]any{"sessionId": sid, "update": u}})
	}
	chunk := func(kind, s string) {
		update(map[string]any{"sessionUpdate": kind, "content": map[string]string{"type": "text", "text": s}})
	}
	end := func(id json.RawMessage) {
		send(map[string]any{"id": id, "result": map[string]any{"stopReason": "end_turn"}})
		_ = w.Flush()
	}
	cwd := ""
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cwd string `json:"cwd"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		switch m.Method {
		case "initialize":
			send(map[string]any{"id": m.ID, "result": map[string]any{"protocolVersion": 1, "authMethods": []any{}}})
		case "session/new":
			cwd = m.Params.Cwd
			send(map[string]any{"id": m.ID, "result": map[string]any{"sessionId": sid}})
		case "session/prompt":
			switch mode {
			case "flood-permission":
				for i := 1; num(1) == 0 || i <= num(1); i++ {
					send(map[string]any{"id": 1000 + i, "method": "session/request_permission", "params": map[string]any{"sessionId": sid,
						"toolCall": map[string]any{"toolCallId": "p" + strconv.Itoa(i), "kind": "execute"},
						"options":  []any{map[string]string{"optionId": "yes", "name": "Allow", "kind": "allow_once"}}}})
				}
				_ = w.Flush()
				select {} // never reads again
			case "flood-chunks":
				piece := strings.Repeat("x", 64<<10)
				for n := 0; n < num(1); n += len(piece) {
					chunk("agent_thought_chunk", piece)
				}
				for n := 0; n < num(1); n += len(piece) {
					chunk("agent_message_chunk", piece)
				}
			case "open-tools":
				big := strings.Repeat("y", num(2))
				for i := range num(1) {
					id := "t" + strconv.Itoa(i)
					path := filepath.Join(cwd, id+".txt")
					update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": id, "title": "Write " + id, "kind": "edit",
						"status": "in_progress", "rawInput": map[string]string{"path": path, "content": big}})
					update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": id, "rawInput": map[string]string{"path": path, "content": big},
						"content": []any{map[string]any{"type": "content", "content": map[string]string{"type": "text", "text": big}},
							map[string]any{"type": "diff", "path": path, "oldText": nil, "newText": big}}})
				}
				for i := range num(1) {
					update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "t" + strconv.Itoa(i), "status": "completed"})
				}
			case "fatal-then-more":
				chunk("agent_message_chunk", "before")
				_ = w.Flush()
				fmt.Println("this is not JSON")
				chunk("agent_message_chunk", "after")
				update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": "late", "title": "late", "kind": "read", "status": "in_progress"})
			case "wait-go":
				update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": "r1", "title": "Read", "kind": "read", "status": "in_progress"})
				_ = w.Flush()
				f, err := os.Open(filepath.Join(cwd, ACPGoFifo))
				if err != nil {
					return 3
				}
				_, err = bufio.NewReader(f).ReadString('\n') // until the test says go
				f.Close()
				if err != nil {
					return 3
				}
				update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "r1", "status": "completed"})
				chunk("agent_message_chunk", "went")
			}
			end(m.ID)
		}
		_ = w.Flush()
	}
	_ = w.Flush()
	return 0
}
