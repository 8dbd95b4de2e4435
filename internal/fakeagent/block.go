package fakeagent

import (
	"bufio"
	"os"
	"strings"
)

func init() {
	Register("long-block", longBlock)
}

// longBlock [BYTES] streams one Claude text block of BYTES (default 256
// MiB) as partial-message deltas of about 1 KiB, then ends the message and
// the run: the memory benchmark's one endless block.
func longBlock(args []string) int {
	n := intArg(args, 0, 256<<20)
	initLine()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	const sid = `,"session_id":"` + SessionID + `","parent_tool_use_id":null}` + "\n"
	ev := func(e string) { _, _ = w.WriteString(`{"type":"stream_event","event":` + e + sid) }
	ev(`{"type":"message_start","message":{"id":"msg_long","type":"message","role":"assistant","content":[],"model":"fake-model","usage":{"input_tokens":240,"output_tokens":1}}}`)
	ev(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	delta := `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + strings.Repeat("x", 1000) + `"}}`
	for ; n > 0; n -= 1000 {
		ev(delta)
	}
	ev(`{"type":"content_block_stop","index":0}`)
	ev(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":240,"output_tokens":50}}`)
	ev(`{"type":"message_stop"}`)
	_ = w.Flush()
	resultLine(false, "done")
	return 0
}
