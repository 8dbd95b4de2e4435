package acp

import (
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkHugeToolLine is the cost of one 12 MB line (a tool call whose
// input, text content and diff are 4 MB each): what the parse allocates
// for it bounds the peak memory of a run of such lines.
func BenchmarkHugeToolLine(b *testing.B) {
	big := strings.Repeat("y", 4000000)
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": "s1",
		"update": map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "t1", "kind": "edit", "status": "in_progress",
			"rawInput": map[string]string{"path": "/x", "content": big},
			"content": []any{map[string]any{"type": "content", "content": map[string]string{"type": "text", "text": big}},
				map[string]any{"type": "diff", "path": "/x", "oldText": nil, "newText": big}}}}})
	b.ReportAllocs()
	for range b.N {
		c := NewParser()
		c.Parse(nil, line)
	}
}
