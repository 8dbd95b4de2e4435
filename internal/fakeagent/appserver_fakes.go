package fakeagent

import (
	"bufio"
	"encoding/json"
	"os"
	"strconv"
)

// CodexAppServer is a fake `codex app-server` (JSON-RPC without the
// "jsonrpc" member, one message a line, as codex 0.169 writes it), for
// the faults a real one cannot be made to show. Its mode is
// $AppServerMode:
//
//	normal        each turn/start: a message "Done.", usage of 10 input
//	              and 5 output tokens (thread totals, as codex reports),
//	              turn/completed
//	die-mid-turn  the second turn starts, speaks, and the agent exits 3
//	late          as normal, and after the first turn/completed a late
//	              item/completed of that turn (a command that ended
//	              after its turn did)
//
// It exits 0 at EOF on stdin.
const CodexAppServer = "codex-app-server"

// AppServerMode is the variable that sets CodexAppServer's mode.
const AppServerMode = "HARNESS_FAKE_APPSERVER_MODE"

func init() { Register(CodexAppServer, codexAppServer) }

func codexAppServer([]string) int {
	mode := os.Getenv(AppServerMode)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	send := func(v map[string]any) { _ = out.Encode(v) }
	notify := func(method string, params map[string]any) {
		send(map[string]any{"method": method, "params": params})
	}
	turns := 0
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		switch m.Method {
		case "initialize":
			send(map[string]any{"id": m.ID, "result": map[string]any{"userAgent": "harness/0.169.0 (fake)", "codexHome": "/nowhere",
				"platformFamily": "unix", "platformOs": "linux"}})
		case "thread/start":
			send(map[string]any{"id": m.ID, "result": map[string]any{"thread": map[string]any{"id": "thread-1"}, "model": "fake"}})
		case "turn/start":
			turns++
			turn := "turn-" + strconv.Itoa(turns)
			send(map[string]any{"id": m.ID, "result": map[string]any{"turn": map[string]any{"id": turn, "items": []any{}, "status": "inProgress"}}})
			notify("turn/started", map[string]any{"threadId": "thread-1", "turn": map[string]any{"id": turn, "items": []any{}, "status": "inProgress"}})
			if mode == "die-mid-turn" && turns == 2 {
				notify("item/agentMessage/delta", map[string]any{"threadId": "thread-1", "turnId": turn, "itemId": "m2", "delta": "Half an ans"})
				os.Exit(3)
			}
			notify("item/completed", map[string]any{"threadId": "thread-1", "turnId": turn,
				"item": map[string]any{"type": "agentMessage", "id": "m" + strconv.Itoa(turns), "text": "Done."}})
			total := map[string]any{"inputTokens": 10 * turns, "cachedInputTokens": 0, "outputTokens": 5 * turns,
				"reasoningOutputTokens": 0, "totalTokens": 15 * turns}
			notify("thread/tokenUsage/updated", map[string]any{"threadId": "thread-1", "turnId": turn,
				"tokenUsage": map[string]any{"total": total, "last": total}})
			notify("turn/completed", map[string]any{"threadId": "thread-1", "turn": map[string]any{"id": turn, "items": []any{}, "status": "completed"}})
			if mode == "late" && turns == 1 {
				notify("item/completed", map[string]any{"threadId": "thread-1", "turnId": turn, "item": map[string]any{"type": "commandExecution",
					"id": "c1", "command": "sleep 5", "status": "completed", "aggregatedOutput": "", "exitCode": 0}})
			}
		}
	}
	return 0
}
