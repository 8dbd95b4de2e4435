package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/process"
)

// sessionStream checks r's stdout as an event stream and returns its
// events.
func sessionStream(t *testing.T, r result) []event.Event {
	t.Helper()
	adaptertest.CheckStream(t, []byte(r.stdout))
	evs, err := event.ReadAll(strings.NewReader(r.stdout))
	require.NoError(t, err)
	pid := evs[0].Body.(*event.SessionStart).PID
	require.False(t, process.Alive(pid), "the agent is still alive")
	return evs
}

// TestSessionCommandSignalAfterEndOfInput: after the end of input (EOF,
// or an end command) the session waits for the turn sent to be answered;
// a SIGINT meanwhile still ends the whole session as it ends a run
// (cancelled, 130), not the budgets long after.
func TestSessionCommandSignalAfterEndOfInput(t *testing.T) {
	for name, stdin := range map[string]string{
		"eof": `{"type":"prompt","text":"one"}` + "\n",
		"end": `{"type":"prompt","text":"one"}` + "\n" + `{"type":"end"}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			isolate(t)
			argv, _ := fakeagent.Command(fakeagent.ClaudeStream)
			var out, errb bytes.Buffer
			// The fake's first turn never ends: the signal comes once it has
			// answered something, long after stdin's end was read.
			stdout := &interruptOnLine{w: &out, marker: "answer 1", fire: func() { syscall.Kill(os.Getpid(), syscall.SIGINT) }}
			start := time.Now()
			code := run([]string{"session", "--agent", "claude", "--binary", argv[0], "--cwd", t.TempDir(), "--no-log",
				"--env", fakeagent.EnvVar + "=" + fakeagent.ClaudeStream, "--env", fakeagent.ClaudeStreamMode + "=hang",
				"--idle-timeout", "0", "--timeout", "10s", "--kill-grace", "1s"}, strings.NewReader(stdin), stdout, &errb)
			require.True(t, stdout.fired, "the turn never answered: %s", errb.String())
			require.Equal(t, exitInterrupted, code, errb.String())
			require.Less(t, time.Since(start), 8*time.Second, "ended by the signal, not a budget")
			evs := sessionStream(t, result{code, out.String(), errb.String()})
			require.Equal(t, event.ResultCancelled, evs[len(evs)-1].Body.(*event.Result).Status)
		})
	}
}

// TestSessionCommandOverlongLine: a line of stdin over 16 MiB is no
// command: it is reported and skipped, and the commands after it are
// carried out.
func TestSessionCommandOverlongLine(t *testing.T) {
	isolate(t)
	argv, _ := fakeagent.Command("acp-agent")
	stdin := `{"type":"prompt","text":"` + strings.Repeat("x", maxPrompt) + `"}` + "\n" +
		`{"type":"prompt","text":"after"}` + "\n"
	r := invoke(t, stdin, "session", "--agent", "claude", "--protocol", "acp", "--binary", argv[0], "--cwd", t.TempDir(),
		"--env", fakeagent.EnvVar+"=acp-agent", "--linger", "200ms", "--idle-timeout", "5s", "--no-log")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "harness: session: line 1: over 16 MiB, skipped\n", r.stderr)
	evs := sessionStream(t, r)
	starts := harnesstest.Bodies(evs, event.TypeTurnStart)
	require.Len(t, starts, 1)
	require.Equal(t, "after", starts[0].(*event.TurnStart).Prompt)
}

// TestSessionCommandTurnTimeout: an agent that ignores the request to end
// a turn over --turn-timeout is stopped as a watchdog stops it: the
// session ends timeout (hard_timeout, 124), not as interrupted.
func TestSessionCommandTurnTimeout(t *testing.T) {
	isolate(t)
	argv, _ := fakeagent.Command(fakeagent.ClaudeStream)
	r := invoke(t, `{"type":"prompt","text":"one"}`+"\n", "session", "--agent", "claude", "--binary", argv[0], "--cwd", t.TempDir(),
		"--env", fakeagent.EnvVar+"="+fakeagent.ClaudeStream, "--env", fakeagent.ClaudeStreamMode+"=deaf",
		"--turn-timeout", "200ms", "--kill-grace", "1s", "--no-log")
	require.Equal(t, exitTimeout, r.code, r.stderr)
	evs := sessionStream(t, r)
	require.Equal(t, event.ResultTimeout, evs[len(evs)-1].Body.(*event.Result).Status)
	require.Equal(t, event.ResultTimeout, harnesstest.Bodies(evs, event.TypeTurnEnd)[0].(*event.TurnEnd).Status)
	fatal := harnesstest.Bodies(evs, event.TypeError)[0].(*event.Error)
	require.Equal(t, event.ErrHardTimeout, fatal.Code)
	require.Contains(t, fatal.Message, "turn")
}

// TestSessionCommandManyPrompts: more prompts at once than a session
// holds waiting (adapters.MaxQueued) are all answered, in order: stdin is
// read again only once a turn has ended. Each prompt past the 65th was
// dropped with "the session is over", and the session still ended 0.
func TestSessionCommandManyPrompts(t *testing.T) {
	isolate(t)
	argv, _ := fakeagent.Command(fakeagent.ClaudeStream)
	var stdin strings.Builder
	const prompts = 150
	for i := range prompts {
		stdin.WriteString(`{"type":"prompt","text":"p` + strconv.Itoa(i) + `"}` + "\n")
	}
	r := invoke(t, stdin.String(), "session", "--agent", "claude", "--binary", argv[0], "--cwd", t.TempDir(),
		"--env", fakeagent.EnvVar+"="+fakeagent.ClaudeStream, "--linger", "5s", "--idle-timeout", "5s", "--no-log")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stderr)
	evs := sessionStream(t, r)
	starts := harnesstest.Bodies(evs, event.TypeTurnStart)
	require.Len(t, starts, prompts)
	for i, b := range starts {
		require.Equal(t, "p"+strconv.Itoa(i), b.(*event.TurnStart).Prompt)
	}
	require.Len(t, harnesstest.Bodies(evs, event.TypeTurnEnd), prompts)
}

// goneAfterFirst keeps the first write and fails every later one, as a
// pipe whose reader has gone (| head -c 100).
type goneAfterFirst struct {
	first []byte
	n     int
}

func (w *goneAfterFirst) Write(p []byte) (int, error) {
	if w.n++; w.n > 1 {
		return 0, syscall.EPIPE
	}
	w.first = append(w.first, p...)
	return len(p), nil
}

// TestSessionCommandStopsWhenStdoutGoes: a reader of the session's output
// that went away ends the session as an interrupt does, quietly (130),
// the agent and its tools cleaned up, as for a run. It ran on; and with
// a real pipe SIGPIPE killed harness and left the agent's tools alive.
func TestSessionCommandStopsWhenStdoutGoes(t *testing.T) {
	isolate(t)
	argv, _ := fakeagent.Command(fakeagent.ClaudeStream)
	var errb bytes.Buffer
	stdout := &goneAfterFirst{}
	stdin, prompts := io.Pipe() // open: only the reader's leaving can end the session
	t.Cleanup(func() { prompts.Close() })
	go func() {
		for i := range 50 {
			if _, err := fmt.Fprintf(prompts, `{"type":"prompt","text":"p%d"}`+"\n", i); err != nil {
				return
			}
		}
	}()
	code := run([]string{"session", "--agent", "claude", "--binary", argv[0], "--cwd", t.TempDir(), "--no-log",
		"--env", fakeagent.EnvVar + "=" + fakeagent.ClaudeStream, "--idle-timeout", "0", "--timeout", "20s", "--kill-grace", "1s"},
		stdin, stdout, &errb)
	require.Equal(t, exitInterrupted, code, errb.String())
	require.Empty(t, errb.String())
	evs, err := event.ReadAll(bytes.NewReader(stdout.first))
	require.NoError(t, err)
	pid := evs[0].Body.(*event.SessionStart).PID
	require.False(t, process.Alive(pid), "the agent is still alive")
}
