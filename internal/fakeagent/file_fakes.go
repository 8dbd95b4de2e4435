package fakeagent

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Fakes whose tools name files the harness reads for its live diffs.
func init() {
	Register("write-to-fifo", writeToFIFO)
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
