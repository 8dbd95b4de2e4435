package process

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/internal/fakeagent"
)

// TestKeepStdin: with KeepStdin the caller holds the child's stdin: it
// writes a request, answers the child's request from the stdout callback
// (writes never block there), and closing stdin lets the child end.
func TestKeepStdin(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command(fakeagent.ToySession)
	var mu sync.Mutex
	var ops []string
	var p *Proc
	ready := make(chan struct{})
	p, err := Start(t.Context(), Options{Argv: argv, Env: env, KeepStdin: true,
		Idle: 10 * time.Second, Hard: 30 * time.Second, KillGrace: time.Second,
		OnStdout: func(line []byte, _ int64) {
			<-ready
			op := gjson.GetBytes(line, "op").String()
			mu.Lock()
			ops = append(ops, op)
			mu.Unlock()
			switch op {
			case "ask":
				_, err := p.Stdin().Write([]byte(`{"op":"answer","id":1,"allow":true}` + "\n"))
				require.NoError(t, err)
			case "done":
				require.NoError(t, p.Stdin().Close())
			}
		}})
	require.NoError(t, err)
	close(ready)
	_, err = p.Stdin().Write([]byte(`{"op":"prompt","text":"hi"}` + "\n"))
	require.NoError(t, err)
	out := p.Wait()
	require.NoError(t, out.Reason)
	require.Equal(t, 0, out.ExitCode, "the child saw EOF after done")
	require.Equal(t, []string{"ask", "say", "done"}, ops)
	_, err = p.Stdin().Write([]byte("late\n"))
	require.Error(t, err, "a write after the run is refused")
}

func TestKeepStdinOff(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command("exit-0-without-terminal-event")
	p, err := Start(t.Context(), Options{Argv: argv, Env: env, OnStdout: func([]byte, int64) {}})
	require.NoError(t, err)
	require.Nil(t, p.Stdin())
	p.Wait()
	_, err = Start(t.Context(), Options{Argv: argv, Env: env, Stdin: "x", KeepStdin: true})
	require.ErrorIs(t, err, ErrSpawn)
}

// TestStdinQueueBounded: a child that never reads its stdin gets no more
// than the pipe, the write in flight and MaxStdinQueue of it; the write
// past that fails with ErrStdinFull (it used to queue without end).
func TestStdinQueueBounded(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command("hang-silent")
	p, err := Start(t.Context(), Options{Argv: argv, Env: env, KeepStdin: true,
		Idle: time.Minute, Hard: time.Minute, KillGrace: time.Second, OnStdout: func([]byte, int64) {}})
	require.NoError(t, err)
	defer p.Wait()
	defer p.Interrupt()
	chunk := make([]byte, 64<<10)
	accepted := 0
	for accepted < 64<<20 {
		if _, err = p.Stdin().Write(chunk); err != nil {
			break
		}
		accepted += len(chunk)
	}
	require.ErrorIs(t, err, ErrStdinFull)
	require.LessOrEqual(t, accepted, 2*MaxStdinQueue+len(chunk))
}
