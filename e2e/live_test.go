package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/internal/syncio"
)

// liveSession is a 'harness session' driven as a chat UI drives it:
// commands written as the events they answer come in.
type liveSession struct {
	t       *testing.T
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *lockedBuffer // the whole stream, for the checks at the end
	events  chan event.Event
	stderr  *lockedBuffer
	workdir string
}

// lockedBuffer is a buffer written by one goroutine (the stream's reader,
// exec's stderr copier) while a test reads it for its messages: a
// syncio.Writer into b (newLockedBuffer), read under its lock.
type lockedBuffer struct {
	syncio.Writer
	b bytes.Buffer
}

func newLockedBuffer() *lockedBuffer {
	l := &lockedBuffer{}
	l.W = &l.b
	return l
}

func (l *lockedBuffer) String() string {
	l.Lock()
	defer l.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) Bytes() []byte { return []byte(l.String()) }

// startSession starts 'harness session --agent AGENT' (over the agent's
// default protocol unless flags say otherwise) on the scripted model's
// scenario, in a fresh directory, for at most 3 minutes.
func startSession(t *testing.T, agent, scenario string, flags ...string) *liveSession {
	t.Helper()
	return startSessionIn(t, t.TempDir(), agent, scenario, flags...)
}

// startSessionIn is startSession in the directory workdir.
func startSessionIn(t *testing.T, workdir, agent, scenario string, flags ...string) *liveSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	s := &liveSession{t: t, workdir: workdir, events: make(chan event.Event, 1024), out: newLockedBuffer(), stderr: newLockedBuffer()}
	args := append([]string{"session", "--agent", agent, "--mock", scenario, "--cwd", s.workdir,
		"--idle-timeout", "60s", "--timeout", "3m", "--linger", "2s", "--kill-grace", "2s"}, flags...)
	s.cmd = exec.CommandContext(ctx, harnessBin, args...)
	s.cmd.Dir, s.cmd.Env, s.cmd.Stderr = s.workdir, harnessEnv(t, "NO_COLOR=1"), s.stderr
	var err error
	s.in, err = s.cmd.StdinPipe()
	require.NoError(t, err)
	out, err := s.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, s.cmd.Start())
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			s.out.Write(append(sc.Bytes(), '\n'))
			var ev event.Event
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				s.events <- ev
			}
		}
	}()
	return s
}

// send writes one command.
func (s *liveSession) send(cmd map[string]any) {
	b, err := json.Marshal(cmd)
	require.NoError(s.t, err)
	_, err = s.in.Write(append(b, '\n'))
	require.NoError(s.t, err)
}

// next is the next event; the test's context bounds the wait.
func (s *liveSession) next() event.Event {
	ev, ok := <-s.events
	if !ok {
		s.t.Fatalf("the stream ended early\nstderr: %s\nstdout:\n%s", s.stderr.String(), s.out.String())
	}
	return ev
}

// until reads the stream up to the first event of type typ.
func (s *liveSession) until(typ event.Type) event.Body {
	s.t.Helper()
	for {
		if ev := s.next(); ev.Type == typ {
			return ev.Body
		}
	}
}

// end closes stdin and checks the session ends well: exit 0, a valid
// stream, no process left. It returns the stream's events.
func (s *liveSession) end() []event.Event { return s.endWith(0) }

// endWith is end for a session that exits with status code.
func (s *liveSession) endWith(code int) []event.Event {
	require.NoError(s.t, s.in.Close())
	for range s.events { // the rest of the stream
	}
	err := s.cmd.Wait()
	if code == 0 {
		require.NoError(s.t, err, "stderr: %s\nstdout:\n%s", s.stderr.String(), s.out.String())
	} else {
		var exit *exec.ExitError
		require.ErrorAs(s.t, err, &exit, "stderr: %s\nstdout:\n%s", s.stderr.String(), s.out.String())
		require.Equal(s.t, code, exit.ExitCode(), "stderr: %s", s.stderr.String())
	}
	adaptertest.CheckStream(s.t, s.out.Bytes())
	evs, err := event.ReadAll(bytes.NewReader(s.out.Bytes()))
	require.NoError(s.t, err)
	requireNoSurvivor(s.t, s.workdir)
	require.Len(s.t, harnesstest.Bodies(evs, event.TypeSessionStart), 1, "one agent process")
	return evs
}
