package fakeagent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// ToySession is a fake agent of the second transport: a made-up session
// protocol over stdio (not ACP; a test of the seam, adapters.Session).
// Messages are JSON lines {"op": …}. The harness sends "prompt" {text};
// the agent asks {"op":"ask","id":1,"question":…} and waits for
// {"op":"answer","id":1,"allow":bool}, then says {"op":"say","text":…}
// and ends the turn with {"op":"done","text":…}. It exits 0 at EOF on
// stdin after "done", and 3 when stdin ends before.
const ToySession = "toy-session"

func init() { Register(ToySession, toySession) }

func toySession([]string) int {
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	next := func() map[string]any {
		if !in.Scan() {
			return nil
		}
		var m map[string]any
		if json.Unmarshal(in.Bytes(), &m) != nil {
			return map[string]any{}
		}
		return m
	}
	msg := next()
	if msg == nil || msg["op"] != "prompt" {
		return 3
	}
	out.Encode(map[string]any{"op": "ask", "id": 1, "question": "may I write notes.txt?"})
	ans := next()
	if ans == nil || ans["op"] != "answer" {
		return 3
	}
	allowed, _ := ans["allow"].(bool)
	out.Encode(map[string]any{"op": "say", "text": fmt.Sprintf("prompt %q, allowed=%v", msg["text"], allowed)})
	out.Encode(map[string]any{"op": "done", "text": "finished"})
	for next() != nil { // the harness ends the session by closing stdin
	}
	return 0
}
