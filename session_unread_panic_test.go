package harness_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

func init() {
	fakeagent.Register("acp-stops-reading", acpStopsReading)
	fakeagent.Register("unread-prompt-panic", unreadPromptPanic)
}

// acp-stops-reading: an ACP agent that reads only the first bytes of its
// first prompt (the line is longer) and ends that turn; it ends the
// second turn, unread, once the file "go" is in its cwd, then reads
// nothing more and sleeps until it is killed.
func acpStopsReading([]string) int {
	in := bufio.NewReader(os.Stdin) // 4 KiB: a prompt's line is not read whole
	out := json.NewEncoder(os.Stdout)
	idOf := regexp.MustCompile(`"id":(\d+)`)
	for {
		line, err := in.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull {
			return 1
		}
		var id int
		if m := idOf.FindSubmatch(line); m != nil {
			fmt.Sscan(string(m[1]), &id)
		}
		switch {
		case strings.Contains(string(line), `"initialize"`):
			out.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"protocolVersion": 1,
				"agentCapabilities": map[string]any{}, "authMethods": []any{}}})
		case strings.Contains(string(line), `"session/new"`):
			out.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"sessionId": "sess-u"}})
		case strings.Contains(string(line), `"session/prompt"`):
			out.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"stopReason": "end_turn"}})
			for {
				if _, err := os.Stat("go"); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			out.Encode(map[string]any{"jsonrpc": "2.0", "id": id + 1, "result": map[string]any{"stopReason": "end_turn"}})
			select {}
		}
	}
}

// unread-prompt-panic: a program using the library whose OnEvent panics
// at the fatal error of a prompt its agent (acp-stops-reading) does not
// read, which it recovers from Send, as a server would. It then prints
// whether its session and a run it starts afterwards end.
func unreadPromptPanic([]string) int {
	dir, err := os.MkdirTemp("", "unread-prompt-panic")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	argv, env := fakeagent.Command("acp-stops-reading")
	b := harness.DefaultBudgets()
	b.Linger, b.KillGrace = 100*time.Millisecond, 100*time.Millisecond
	task := harness.Task{Agent: "fake-acp", Protocol: harness.ProtocolACP, Command: argv, BaseEnv: env, Cwd: dir, Budgets: &b}
	turnEnds := make(chan struct{}, 4)
	var panicked atomic.Bool
	st := harness.Settings{LogDir: filepath.Join(dir, "logs")}
	sess, err := st.StartSession(context.Background(), task, harness.SessionOptions{Options: harness.Options{OnEvent: func(ev event.Event) {
		switch v := ev.Body.(type) {
		case *event.TurnEnd:
			turnEnds <- struct{}{}
		case *event.Error:
			if v.Fatal && panicked.CompareAndSwap(false, true) {
				panic("a bug in OnEvent")
			}
		}
	}}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The bounds only turn a hang into an answer.
	ended := func(c <-chan struct{}) bool {
		select {
		case <-c:
			return true
		case <-time.After(30 * time.Second):
			return false
		}
	}
	// Two prompts longer than the stdin queue: the first holds the pipe,
	// the second the queue, and the third cannot be written.
	long := strings.Repeat("x", 5<<20)
	if sess.Send(long) != nil || !ended(turnEnds) {
		fmt.Println("the first turn did not end")
		return 0
	}
	if sess.Send(long) != nil || os.WriteFile(filepath.Join(dir, "go"), nil, 0o644) != nil || !ended(turnEnds) {
		fmt.Println("the second turn did not end")
		return 0
	}
	recovered := func() (v any) {
		defer func() { v = recover() }()
		_ = sess.Send("not read")
		return nil
	}()
	fmt.Printf("recovered %v\n", recovered)
	sessDone := make(chan struct{})
	go func() { _, _ = sess.Wait(); close(sessDone) }()
	fmt.Println("session ended", ended(sessDone))
	argv, env = fakeagent.Command("prompt-echo")
	run, err := harness.Start(context.Background(), harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env, Prompt: "hi", Cwd: dir}, harness.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	runDone := make(chan struct{})
	go func() { _, _ = run.Wait(); close(runDone) }()
	fmt.Println("run ended", ended(runDone))
	return 0
}

// TestUnreadPromptPanicEndsNothingElse: the fatal error of a prompt the
// agent does not read is emitted on the caller's goroutine (Send), so a
// panic of OnEvent there is the caller's: recovered, it ends only that
// session, which still ends, and the program's other runs go on (it used
// to end every run of the program through process.ContainPanic, whose
// dying flag then hung every run's end).
func TestUnreadPromptPanicEndsNothingElse(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command("unread-prompt-panic")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s\n%s", out, stderr.String())
	require.Equal(t, "recovered a bug in OnEvent\nsession ended true\nrun ended true\n", string(out), stderr.String())
}
