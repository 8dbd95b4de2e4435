package fakeagent

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The scenarios of the supervision fault suite. Durations and sizes come
// as positional arguments with defaults, so tests can keep them tiny.
func init() {
	Register("sleeper", sleeper)
	Register("daemonize", daemonize)
	Register("hang-silent", func([]string) int { return hang() })
	Register("hang-after-output", hangAfterOutput)
	Register("ignore-sigterm", ignoreSigterm)
	Register("hang-in-tool", func([]string) int { return hangInTool() })
	Register("hang-in-tool-deaf", func([]string) int {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
		return hangInTool()
	})
	Register("grandchild-holds-stdout", grandchildHoldsStdout)
	Register("setsid-escapee", setsidEscapee)
	Register("double-fork-daemon", doubleForkDaemon)
	Register("env-i-setsid-daemon", envISetsidDaemon)
	Register("flood-stderr", floodStderr)
	Register("huge-line", hugeLine)
	Register("flood-stdout", floodStdout)
	Register("no-trailing-newline", noTrailingNewline)
	Register("invalid-utf8", invalidUTF8)
	Register("non-json-lines", nonJSONLines)
	Register("exit-mid-tool", exitMidTool)
	Register("killed-by-signal", killedBySignal)
	Register("result-then-linger", resultThenLinger)
	Register("error-result-then-linger", func([]string) int {
		initLine()
		resultLine(true, "API Error: 500 boom")
		return hang()
	})
	Register("slow-drip", slowDrip)
	Register("long-silent-tool", longSilentTool)
	Register("tool-past-budget", toolPastBudget)
	Register("stdin-reader", stdinReader)
	Register("exit-nonzero-with-stderr", exitNonzeroWithStderr)
	Register("error-result-stderr-noise", errorResultStderrNoise)
	Register("exit-0-without-terminal-event", exitWithoutTerminal)
	Register("interrupt", interruptible)
	Register("ansi-colors", ansiColors)
	Register("latency-stamp", latencyStamp)
	Register("print-lines", printLines)
	Register("open-tool-calls", openToolCalls)
	Register("ignore-sigterm-tree", ignoreSigtermTree)
}

// SessionID is the session id every fake reports.
const SessionID = "fake-session-0001"

// ToolCallID is the id of the tool call the tool scenarios open.
const ToolCallID = "toolu_fake000001"

var seq = 0

// emit writes one JSON object line with the next "seq" added, in a single
// write so lines from concurrent processes never interleave.
func emit(obj string) {
	seq++
	obj = strings.TrimSuffix(obj, "}") + `,"seq":` + strconv.Itoa(seq) + "}\n"
	_, _ = os.Stdout.WriteString(obj)
}

// emitParts writes one line given in pieces, each with its own write: the
// concatenation of parts is a JSON object, as emit's argument.
func emitParts(parts ...string) {
	for _, p := range parts[:len(parts)-1] {
		_, _ = os.Stdout.WriteString(p)
	}
	emit(parts[len(parts)-1])
}

func initLine() {
	emit(`{"type":"system","subtype":"init","cwd":"/tmp/work","session_id":"` + SessionID + `","tools":["Bash","Read"],"model":"fake-model","permissionMode":"bypassPermissions","pid":` + strconv.Itoa(os.Getpid()) + `}`)
}

func textLine(text string) {
	emit(`{"type":"assistant","message":{"id":"msg_fake` + strconv.Itoa(seq+1) + `","role":"assistant","content":[{"type":"text","text":` + strconv.Quote(text) + `}]},"session_id":"` + SessionID + `"}`)
}

func toolUseLine(command string) {
	emit(`{"type":"assistant","message":{"id":"msg_fake_tool","role":"assistant","content":[{"type":"tool_use","id":"` + ToolCallID + `","name":"Bash","input":{"command":` + strconv.Quote(command) + `}}]},"session_id":"` + SessionID + `"}`)
}

func toolResultLine(out string) {
	emit(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + ToolCallID + `","content":` + strconv.Quote(out) + `,"is_error":false}]},"session_id":"` + SessionID + `"}`)
}

func resultLine(isError bool, text string) {
	sub := "success"
	if isError {
		sub = "error_during_execution"
	}
	emit(fmt.Sprintf(`{"type":"result","subtype":%q,"is_error":%t,"result":%q,"session_id":%q,"num_turns":1,"duration_ms":12,"total_cost_usd":0.00147,"usage":{"input_tokens":240,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":50}}`, sub, isError, text, SessionID))
}

// childLine announces a process this fake started, for leak checks.
func childLine(pid int) {
	emit(`{"type":"system","subtype":"fake_child","pid":` + strconv.Itoa(pid) + `}`)
}

func hang() int {
	for {
		time.Sleep(time.Hour)
	}
}

func durArg(args []string, i int, def time.Duration) time.Duration {
	if i < len(args) {
		if d, err := time.ParseDuration(args[i]); err == nil {
			return d
		}
	}
	return def
}

func intArg(args []string, i int, def int64) int64 {
	if i < len(args) {
		if n, err := strconv.ParseInt(args[i], 10, 64); err == nil {
			return n
		}
	}
	return def
}

// start runs fake name as a child of this fake. stdout nil is /dev/null.
func start(name string, setsid bool, stdout *os.File, args ...string) *exec.Cmd {
	argv, env := Command(name, args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	if stdout != nil {
		cmd.Stdout = stdout
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		os.Exit(3)
	}
	return cmd
}

// sleeper [ignore-term]: sleeps forever, optionally deaf to SIGTERM/SIGINT.
func sleeper(args []string) int {
	if len(args) > 0 && args[0] == "ignore-term" {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
	}
	return hang()
}

// daemonize SEQ: the middle of a double fork: starts a sleeper with no
// stdio, announces it (as line SEQ) and exits, orphaning it.
func daemonize(args []string) int {
	seq = int(intArg(args, 0, 1)) - 1
	c := start("sleeper", false, nil)
	childLine(c.Process.Pid)
	return 0
}

// hang-after-output [pause]: three lines with pauses between, then silence.
func hangAfterOutput(args []string) int {
	pause := durArg(args, 0, 0)
	initLine()
	time.Sleep(pause)
	textLine("thinking")
	time.Sleep(pause)
	textLine("still thinking")
	return hang()
}

// hang-in-tool: opens a shell tool call and never ends it.
// hang-in-tool-deaf: the same, deaf to SIGTERM and SIGINT (only SIGKILL
// ends it).
func hangInTool() int {
	initLine()
	toolUseLine("sleep 1000")
	return hang()
}

func ignoreSigterm([]string) int {
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
	initLine()
	return hang()
}

// grandchild-holds-stdout: a child in the group inherits stdout and
// outlives the agent, which finishes normally.
func grandchildHoldsStdout([]string) int {
	initLine()
	c := start("sleeper", false, os.Stdout)
	childLine(c.Process.Pid)
	resultLine(false, "done")
	return 0
}

// setsid-escapee: a child in a new session (out of reach of a group
// signal) with no stdio; the agent then hangs.
func setsidEscapee([]string) int {
	initLine()
	c := start("sleeper", true, nil, "ignore-term")
	childLine(c.Process.Pid)
	return hang()
}

// double-fork-daemon: setsid + fork + the middle process exits, so the
// daemon is re-parented; the agent then finishes normally.
func doubleForkDaemon([]string) int {
	initLine()
	c := start("daemonize", true, os.Stdout, strconv.Itoa(seq+1))
	_ = c.Wait()
	seq++ // the line daemonize printed
	resultLine(false, "done")
	return 0
}

// env-i-setsid-daemon [hang]: a shell starts a daemon the way
// `( env -i setsid sh -c '…' & )` does: double-forked, in a new session,
// with an emptied environment (no marker of the run), so nothing but its
// ancestry ties it to the run. The daemon (a sleep) is announced, then the
// agent finishes normally, or with "hang" prints its result and stays.
func envISetsidDaemon(args []string) int {
	initLine()
	out, err := exec.Command("sh", "-c",
		`( env -i setsid sh -c 'echo $$; exec sleep 300 </dev/null >/dev/null 2>&1' & )`).Output()
	pid, perr := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || perr != nil {
		fmt.Fprintln(os.Stderr, "fakeagent: daemon:", err, perr)
		return 3
	}
	childLine(pid)
	resultLine(false, "done")
	if len(args) > 0 && args[0] == "hang" {
		return hang()
	}
	return 0
}

// endFlood writes out what a flood buffered, then the result.
func endFlood(w *bufio.Writer) int {
	_ = w.Flush()
	resultLine(false, "done")
	return 0
}

// flood-stderr [bytes]: that much stderr in 1 KiB lines, the last one
// "stderr end", then a result.
func floodStderr(args []string) int {
	n := intArg(args, 0, 100<<20)
	initLine()
	w := bufio.NewWriterSize(os.Stderr, 64<<10)
	line := []byte(strings.Repeat("e", 1023) + "\n")
	for n >= 1024 {
		_, _ = w.Write(line)
		n -= 1024
	}
	_, _ = w.WriteString("stderr end\n")
	return endFlood(w)
}

// huge-line [bytes]: one assistant line with that much text, then a result.
func hugeLine(args []string) int {
	n := intArg(args, 0, 100<<20)
	initLine()
	seq++
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	_, _ = fmt.Fprintf(w, `{"seq":%d,"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"`, seq)
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for n > 0 {
		k := min(n, int64(len(chunk)))
		_, _ = w.Write(chunk[:k])
		n -= k
	}
	_, _ = w.WriteString(`"}]}}` + "\n")
	return endFlood(w)
}

// flood-stdout [bytes]: that much stdout in ~1 KiB assistant lines, then a
// result.
func floodStdout(args []string) int {
	n := intArg(args, 0, 1<<30)
	initLine()
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	pad := strings.Repeat("y", 900)
	for n > 0 {
		seq++
		k, _ := fmt.Fprintf(w, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"%s"}]},"seq":%d}`+"\n", pad, seq)
		n -= int64(k)
	}
	return endFlood(w)
}

func noTrailingNewline([]string) int {
	initLine()
	seq++
	_, _ = fmt.Fprintf(os.Stdout, `{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":%q,"seq":%d}`, SessionID, seq)
	return 0
}

func invalidUTF8([]string) int {
	initLine()
	seq++
	_, _ = fmt.Fprintf(os.Stdout, "{\"type\":\"assistant\",\"text\":\"bad \xff\xfe\xc3\x28 bytes\",\"seq\":%d}\n", seq)
	resultLine(false, "done")
	return 0
}

func nonJSONLines([]string) int {
	initLine()
	seq++
	fmt.Fprintf(os.Stdout, "npm WARN deprecated inflight@1.0.6 seq=%d\n", seq)
	seq++
	fmt.Fprintf(os.Stdout, "\x00binary\x01 seq=%d\n", seq)
	resultLine(false, "done")
	return 0
}

func exitMidTool([]string) int {
	initLine()
	toolUseLine("npm install")
	fmt.Fprintln(os.Stderr, "Error: socket hang up")
	return 1
}

// killed-by-signal [SIGNAL]: dies by a signal (default SIGKILL) mid-tool.
func killedBySignal(args []string) int {
	sig := syscall.SIGKILL
	if len(args) > 0 && args[0] == "SIGSEGV" {
		sig = syscall.SIGSEGV
		signal.Reset(syscall.SIGSEGV)
	}
	initLine()
	toolUseLine("make")
	_ = syscall.Kill(os.Getpid(), sig)
	return hang()
}

// result-then-linger: prints its final result and never exits, kept alive
// by a background child (as Claude Code with a background shell).
func resultThenLinger([]string) int {
	initLine()
	c := start("sleeper", false, nil)
	childLine(c.Process.Pid)
	textLine("all done")
	resultLine(false, "all done")
	return hang()
}

// slow-drip [interval] [total]: a line every interval for total, then a
// result.
func slowDrip(args []string) int {
	every, total := durArg(args, 0, 10*time.Millisecond), durArg(args, 1, 500*time.Millisecond)
	initLine()
	end := time.Now().Add(total)
	for time.Now().Before(end) {
		time.Sleep(every)
		textLine("drip")
	}
	resultLine(false, "done")
	return 0
}

// long-silent-tool [silence]: opens a tool call, is silent, closes it.
func longSilentTool(args []string) int {
	initLine()
	toolUseLine("sleep 1")
	time.Sleep(durArg(args, 0, 500*time.Millisecond))
	toolResultLine("")
	resultLine(false, "done")
	return 0
}

// tool-past-budget [duration] [beat]: a tool call open for duration with a
// stderr heartbeat every beat (so only the tool budget is exceeded).
func toolPastBudget(args []string) int {
	d, beat := durArg(args, 0, 300*time.Millisecond), durArg(args, 1, 10*time.Millisecond)
	initLine()
	toolUseLine("npm test")
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		time.Sleep(beat)
		fmt.Fprintln(os.Stderr, "still running tests…")
	}
	toolResultLine("ok")
	resultLine(false, "done")
	return 0
}

// stdin-reader: reads stdin to EOF, then echoes each line as a text line.
func stdinReader([]string) int {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		return 4
	}
	initLine()
	for l := range strings.Lines(string(in)) {
		textLine(strings.TrimSuffix(l, "\n"))
	}
	resultLine(false, "done")
	return 0
}

// exit-nonzero-with-stderr [code]: an auth failure reported on stderr.
func exitNonzeroWithStderr(args []string) int {
	initLine()
	fmt.Fprintln(os.Stderr, "Error: Invalid API key · Please run /login")
	return int(intArg(args, 0, 1))
}

// errorResultStderrNoise reports an HTTP 500 as its result, prints retry
// noise of other failures on stderr (as Gemini does), and exits 1.
func errorResultStderrNoise([]string) int {
	initLine()
	fmt.Fprintln(os.Stderr, "Attempt 1 failed with status 429: rate limit exceeded. Retrying...")
	resultLine(true, "API Error: 500 mockmodel: scripted internal server error")
	return 1
}

func exitWithoutTerminal([]string) int {
	initLine()
	textLine("partial answer")
	return 0
}

// interrupt: mid-tool with a tool process in the group; on SIGINT it
// prints an error result and exits 130, like an agent handling Ctrl-C.
func interruptible([]string) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT)
	initLine()
	c := start("sleeper", false, nil)
	childLine(c.Process.Pid)
	toolUseLine("npm install --legacy-peer-deps")
	<-sigs
	resultLine(true, "interrupted")
	return 130
}

// ansi-colors: colored output with explicit "\r\n", and whether stdout
// is a terminal.
func ansiColors([]string) int {
	_, err := unixIoctlWinsize(1)
	tty := err == nil
	seq++
	fmt.Fprintf(os.Stdout, "\x1b[1m\x1b[32m{\"type\":\"system\",\"subtype\":\"init\",\"tty\":%t,\"seq\":%d}\x1b[0m\r\n", tty, seq)
	seq++
	fmt.Fprintf(os.Stdout, "\x1b]0;title\x07\x1b[2K\r{\"type\":\"result\",\"subtype\":\"success\",\"seq\":%d}\r\n", seq)
	return 0
}

// MonotonicNS reads CLOCK_MONOTONIC in nanoseconds: the clock every process
// of the machine shares, so a stamp written by one process can be compared
// with the time another process reads it. The kernel is asked once; after
// that the time is read through Go's own monotonic clock, the same clock
// read without a system call: a reader that stamps each of the lines of
// 100 streams would otherwise make as many system calls, on the CPUs of
// what it measures.
func MonotonicNS() int64 {
	b := monoBase()
	if b.ns == 0 {
		return 0
	}
	return b.ns + int64(time.Since(b.at))
}

// monoBase pairs a CLOCK_MONOTONIC reading with Go's clock at that moment
// (the middle of two readings around the system call).
var monoBase = sync.OnceValue(func() (b struct {
	ns int64
	at time.Time
}) {
	var ts unix.Timespec
	before := time.Now()
	err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	after := time.Now()
	if err == nil {
		b.ns, b.at = ts.Nano(), before.Add(after.Sub(before)/2)
	}
	return b
})

// StampPrefix starts the text of each latency-stamp line: the text is
// "lat:SEQ:NS", NS the CLOCK_MONOTONIC time just before the line's write.
const StampPrefix = "lat:"

// latency-stamp [lines] [interval]: that many text lines, each carrying
// the monotonic time of its write, with interval between them; then a
// result.
func latencyStamp(args []string) int {
	n, every := intArg(args, 0, 10000), durArg(args, 1, 100*time.Microsecond)
	initLine()
	for i := int64(1); i <= n; i++ {
		if every > 0 {
			time.Sleep(every)
		}
		seq++
		line := `{"type":"assistant","message":{"id":"msg_lat` + strconv.FormatInt(i, 10) + `","role":"assistant","content":[{"type":"text","text":"` +
			StampPrefix + strconv.FormatInt(i, 10) + ":" + strconv.FormatInt(MonotonicNS(), 10) + `"}]},"session_id":"` + SessionID + `","seq":` + strconv.Itoa(seq) + "}\n"
		_, _ = os.Stdout.WriteString(line)
	}
	resultLine(false, "done")
	return 0
}

// print-lines [lines]: that many text lines as fast as it can, then a
// result.
func printLines(args []string) int {
	return burst(intArg(args, 0, 10000), `{"type":"assistant","message":{"id":"msg_line%d","role":"assistant","content":[{"type":"text","text":"line %d of the flood"}]},"session_id":%q,"seq":%d}`)
}

// burst writes n assistant lines as fast as it can, then a result: line i
// (from 1) is format with i, i, the session id and its seq.
func burst(n int64, format string) int {
	initLine()
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	for i := int64(1); i <= n; i++ {
		seq++
		_, _ = fmt.Fprintf(w, format+"\n", i, i, SessionID, seq)
	}
	return endFlood(w)
}

// ignore-sigterm-tree [children]: deaf to SIGTERM, with that many children
// in its process group, equally deaf; it announces them, then hangs.
func ignoreSigtermTree(args []string) int {
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
	initLine()
	for range intArg(args, 0, 2) {
		c := start("sleeper", false, nil, "ignore-term")
		childLine(c.Process.Pid)
	}
	return hang()
}

// open-tool-calls [calls]: that many tool calls, each with its own id,
// none ever closed, as fast as it can; then a result.
func openToolCalls(args []string) int {
	return burst(intArg(args, 0, 10000), `{"type":"assistant","message":{"id":"msg_call%d","role":"assistant","content":[{"type":"tool_use","id":"toolu_open%d","name":"Bash","input":{"command":"true"}}]},"session_id":%q,"seq":%d}`)
}
