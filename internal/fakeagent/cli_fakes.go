package fakeagent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

// Fakes of the command-line tests (cmd/harness, mcpserver): what reaches
// the agent (its environment, its prompt) and what it can print at the
// user's terminal.
func init() {
	Register("echo-env", echoEnv)
	Register("litter-tmp", litterTmp)
	Register("terminal-escapes", terminalEscapes)
	Register("terminal-escapes-interrupt", terminalEscapesInterrupt)
	Register("prompt-echo", promptEcho)
	Register("secret-cut", secretCut)
}

// EchoVars names the variable that lists, comma-separated, the variables
// echo-env prints.
const EchoVars = "FAKE_ECHO_VARS"

// SecretShapes is a line of credentials in the shapes a session log must
// redact, which echo-env prints besides the variables.
const SecretShapes = "Authorization: Basic dXNlcjpodW50ZXIyaHVudGVy" +
	" aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" +
	" sk_live_4eC39HqLyjWDarjtT1zdp7dc glpat-xYz0123456789abcdefGH" +
	" https://bob:urlpassw0rd@git.example.com/x.git"

// echo-env: prints "NAME=value" (or "NAME unset") for each variable named
// by $FAKE_ECHO_VARS, and SecretShapes, everywhere an agent's words go:
// assistant text, a tool call's command and output, stderr and the final
// result.
func echoEnv([]string) int {
	var parts []string
	for _, name := range strings.Split(os.Getenv(EchoVars), ",") {
		if name == "" {
			continue
		}
		if v, ok := os.LookupEnv(name); ok {
			parts = append(parts, name+"="+v)
		} else {
			parts = append(parts, name+" unset")
		}
	}
	all := strings.Join(append(parts, SecretShapes), " ")
	initLine()
	jsonText(all)
	jsonToolUse("echo " + all)
	jsonToolResult(all)
	fmt.Fprintln(os.Stderr, "debug: "+all)
	jsonResult(all)
	return 0
}

// LitterName is the file litter-tmp leaves in its temporary directory.
const LitterName = ".litter-00000000.so"

// litter-tmp: leaves a file in $TMPDIR (as OpenCode leaves its native
// library at every start), then prints TMPDIR, TMP and TEMP as echo-env
// does, and TMPDIR_LOCKED=yes when another holds the directory's flock.
func litterTmp(args []string) int {
	dir := os.TempDir()
	if err := os.WriteFile(filepath.Join(dir, LitterName), []byte("lib"), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "litter-tmp:", err)
		return 1
	}
	locked := "no"
	if fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0); err == nil {
		if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			locked = "yes"
		}
		syscall.Close(fd)
	}
	os.Setenv(EchoVars, "TMPDIR,TMP,TEMP,TMPDIR_LOCKED")
	os.Setenv("TMPDIR_LOCKED", locked)
	return echoEnv(args)
}

// TerminalAttack is agent text that would drive a terminal printed raw: an
// OSC 52 clipboard write, a window title, a screen clear and cursor home,
// an 8-bit CSI, a carriage return that overwrites the line.
const TerminalAttack = "\x1b]52;c;cm0gLXJmIH4vKg==\x07\x1b]0;pwned\x07\x1b[2J\x1b[Hhello\u009b2J\rworld"

// terminal-escapes: TerminalAttack in text, a tool call and the result.
func terminalEscapes([]string) int {
	initLine()
	jsonText(TerminalAttack)
	jsonToolUse("printf '" + TerminalAttack + "'")
	jsonToolResult(TerminalAttack)
	jsonResult(TerminalAttack)
	return 0
}

// terminal-escapes-interrupt: opens a tool call whose command carries
// TerminalAttack, then waits for SIGINT (so the harness reports the call
// still running) and ends as interrupted.
func terminalEscapesInterrupt([]string) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT)
	initLine()
	jsonToolUse("printf '" + TerminalAttack + "'")
	<-sigs
	resultLine(true, "interrupted")
	return 130
}

// prompt-echo: reports where its prompt came from. The result's text is
// "stdin=N:SHA argv=M:SHA": the bytes read from stdin and the argument
// after "--" (or the value of a --prompt= argument), with the hex SHA-256
// of each.
func promptEcho(args []string) int {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		return 4
	}
	var arg string
	for i, a := range args {
		if a == "--" && i+1 < len(args) {
			arg = args[i+1]
			break
		}
		if p, ok := strings.CutPrefix(a, "--prompt="); ok {
			arg = p
		}
	}
	initLine()
	jsonResult(fmt.Sprintf("stdin=%d:%s argv=%d:%s", len(in), sum(string(in)), len(arg), sum(arg)))
	return 0
}

// PromptSum is the hex SHA-256 of s, as prompt-echo reports it.
func PromptSum(s string) string { return sum(s) }

// The lines of the fakes above, with their strings encoded as JSON (the
// shared helpers quote them Go's way, which is not JSON for control
// characters).
func jsonText(text string) {
	emit(`{"type":"assistant","message":{"id":"msg_cli` + fmt.Sprint(seq+1) + `","role":"assistant","content":[{"type":"text","text":` + jsonString(text) + `}]},"session_id":"` + SessionID + `"}`)
}

func jsonToolUse(command string) {
	emit(`{"type":"assistant","message":{"id":"msg_cli_tool","role":"assistant","content":[{"type":"tool_use","id":"` + ToolCallID + `","name":"Bash","input":{"command":` + jsonString(command) + `}}]},"session_id":"` + SessionID + `"}`)
}

func jsonToolResult(out string) {
	emit(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + ToolCallID + `","content":` + jsonString(out) + `,"is_error":false}]},"session_id":"` + SessionID + `"}`)
}

func jsonResult(text string) {
	emit(`{"type":"result","subtype":"success","is_error":false,"result":` + jsonString(text) + `,"session_id":"` + SessionID + `","num_turns":1,"duration_ms":12,"total_cost_usd":0.00147,"usage":{"input_tokens":240,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":50}}`)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// secret-cut: the value of $FAKE_SECRET where harness's cuts fall, two
// bytes of it past each: an unparsed line's 200-byte preview and a tool
// output's 64 KiB cap.
func secretCut([]string) int {
	v := os.Getenv("FAKE_SECRET")
	initLine()
	emit("progress: " + strings.Repeat(".", max(200-len("progress: ")-len(v)+2, 0)) + v + " (not json)")
	jsonToolUse("cat log")
	jsonToolResult(strings.Repeat(".", max(64<<10-len(v)+2, 0)) + v)
	jsonResult("done")
	return 0
}
