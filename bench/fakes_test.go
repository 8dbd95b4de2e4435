package bench_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentharness/harness/internal/fakeagent"
)

// The bench fakes print Claude-like stream-json, like fakeagent's own.
func init() {
	fakeagent.Register("bench-writer", benchWriter)
	fakeagent.Register("bench-fail", benchFail)
	fakeagent.Register("bench-tmp", benchTmp)
}

const sid = "bench-session"

func initLine() {
	fakeagent.Line(`{"type":"system","subtype":"init","cwd":"/tmp","session_id":"` + sid + `","tools":["Write","Bash"],"model":"fake-model","pid":` + strconv.Itoa(os.Getpid()) + `}`)
}

func toolUse(id, name, input string) {
	fakeagent.Line(`{"type":"assistant","message":{"id":"msg_` + id + `","role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":` + input + `}]},"session_id":"` + sid + `"}`)
}

func toolResult(id, out string) {
	fakeagent.Line(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":` + strconv.Quote(out) + `,"is_error":false}]},"session_id":"` + sid + `"}`)
}

func result(isError bool, turns int) {
	sub := "success"
	if isError {
		sub = "error_during_execution"
	}
	fakeagent.Line(fmt.Sprintf(`{"type":"result","subtype":%q,"is_error":%t,"result":"done","session_id":%q,"num_turns":%d,"duration_ms":12,"total_cost_usd":0.00147,"usage":{"input_tokens":240,"cache_creation_input_tokens":7,"cache_read_input_tokens":30,"output_tokens":50}}`, sub, isError, sid, turns))
}

// bench-writer: writes out.txt in its working directory with the value of
// $BENCH_WHO, or "SAW:<old>" when the file was already there (another
// run's edit leaking in), announced as a Write tool call.
func benchWriter([]string) int {
	initLine()
	who := os.Getenv("BENCH_WHO")
	content := who
	if old, err := os.ReadFile("out.txt"); err == nil {
		content = "SAW:" + string(old)
	}
	toolUse("toolu_w1", "Write", `{"file_path":"out.txt","content":`+strconv.Quote(content)+`}`)
	if err := os.WriteFile("out.txt", []byte(content), 0o644); err != nil {
		return 3
	}
	toolResult("toolu_w1", "written")
	result(false, 2)
	return 0
}

// bench-fail: the agent reports a failed run.
func benchFail([]string) int {
	initLine()
	fakeagent.Line(`{"type":"assistant","message":{"id":"msg_t","role":"assistant","content":[{"type":"text","text":"I give up"}]},"session_id":"` + sid + `"}`)
	result(true, 1)
	return 0
}

// bench-tmp: writes its TMPDIR, TMP and TEMP to tmp.txt in its working
// directory and leaves a file in $TMPDIR, announced as a Write tool call.
func benchTmp([]string) int {
	initLine()
	var b strings.Builder
	for _, k := range []string{"TMPDIR", "TMP", "TEMP"} {
		v, ok := os.LookupEnv(k)
		fmt.Fprintf(&b, "%s=%s (set %t)\n", k, v, ok)
	}
	toolUse("toolu_t1", "Write", `{"file_path":"tmp.txt","content":`+strconv.Quote(b.String())+`}`)
	if err := os.WriteFile("tmp.txt", []byte(b.String()), 0o644); err != nil {
		return 3
	}
	if dir := os.Getenv("TMPDIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "left-by-agent"), nil, 0o644); err != nil {
			return 3
		}
	}
	toolResult("toolu_t1", "written")
	result(false, 1)
	return 0
}
