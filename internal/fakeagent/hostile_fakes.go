package fakeagent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Fakes of hostile agents: tools that name what the harness must not
// open, inputs that a recursive walk cannot survive.
func init() {
	Register("write-to-fifo", writeToFIFO)
	Register("deep-tool-input", deepToolInput)
	Register("big-open-calls", bigOpenCalls)
}

// FIFOName is the named pipe write-to-fifo makes in its working directory.
const FIFOName = "pipe"

// write-to-fifo: makes a named pipe in its working directory, reports a
// Write tool call to it (which it never opens: nobody writes the pipe),
// the call's result, and a result.
func writeToFIFO([]string) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		return 3
	}
	path := filepath.Join(wd, FIFOName)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		return 3
	}
	initLine()
	emit(`{"type":"assistant","message":{"id":"msg_fifo","role":"assistant","content":[{"type":"tool_use","id":"` + ToolCallID + `","name":"Write","input":{"file_path":` + jsonString(path) + `,"content":"hello\n"}}]},"session_id":"` + SessionID + `"}`)
	emit(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + ToolCallID + `","content":"File created successfully","is_error":false}]},"session_id":"` + SessionID + `","tool_use_result":{"type":"create"}}`)
	resultLine(false, "wrote the pipe")
	return 0
}

const (
	deepHead = `{"type":"assistant","message":{"id":"msg_deep","role":"assistant","content":[{"type":"tool_use","id":"` + ToolCallID + `","name":"Bash","input":{"command":"true","x":`
	deepTail = `}}]},"session_id":"` + SessionID + `"}`
)

// DeepToolUse is a Claude assistant line whose tool_use input holds an
// array nested levels deep: one line of about 2*levels bytes.
func DeepToolUse(levels int) string {
	return deepHead + strings.Repeat("[", levels) + strings.Repeat("]", levels) + deepTail
}

// deep-tool-input [levels]: a Bash call whose input nests levels deep
// (default 8M: one line under 16 MiB), its result, and a result. The line
// is written in pieces, so that the fake's own memory stays small and
// make bench's peak RSS, which also counts the fake, measures harness.
func deepToolInput(args []string) int {
	levels := int(intArg(args, 0, 8_000_000))
	initLine()
	opens, closes := strings.Repeat("[", 64<<10), strings.Repeat("]", 64<<10)
	parts := []string{deepHead}
	for _, bracket := range []string{opens, closes} {
		for n := levels; n > 0; n -= len(bracket) {
			parts = append(parts, bracket[:min(n, len(bracket))])
		}
	}
	emitParts(append(parts, deepTail)...)
	toolResultLine("ok")
	resultLine(false, "done")
	return 0
}

// big-open-calls [calls] [bytes]: that many Write calls (default 60),
// each writing bytes (default 4 MB) of text to its own file, all open at
// once; then each call's result, and a result. The files are not written.
func bigOpenCalls(args []string) int {
	n, size := intArg(args, 0, 60), intArg(args, 1, 4_000_000)
	text := strings.Repeat(strings.Repeat("x", 79)+`\n`, int(size/80))
	initLine()
	for i := range n { // in pieces: the fake holds the text once (see deepToolInput)
		emitParts(fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_big%d","role":"assistant","content":[{"type":"tool_use","id":"toolu_big%d","name":"Write","input":{"file_path":"/nonexistent/f%d.txt","content":"`, i, i, i),
			text, fmt.Sprintf(`"}}]},"session_id":%q}`, SessionID))
	}
	for i := range n {
		emit(fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_big%d","content":"ok","is_error":false}]},"session_id":%q}`, i, SessionID))
	}
	resultLine(false, "done")
	return 0
}
