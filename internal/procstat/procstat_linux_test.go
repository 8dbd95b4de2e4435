package procstat

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	t.Parallel()
	line := "4242 (a b) c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10\n"
	st, ok := Parse(4242, []byte(line))
	require.True(t, ok)
	require.Equal(t, Stat{PID: 4242, PPID: 1, Pgrp: 4242, SID: 4242, State: 'S', Start: 987654}, st)
	require.True(t, st.Live())
	_, ok = Parse(1, []byte("garbage"))
	require.False(t, ok)
	_, ok = Parse(1, []byte("1 (x) S 1 2"))
	require.False(t, ok)
	// A pid no process has: a zombie with no thread left.
	st, _ = Parse(1<<30, []byte("1073741824 (x) Z 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19"))
	require.False(t, st.Live())
}

func TestRead(t *testing.T) {
	t.Parallel()
	self, ok := Read(os.Getpid())
	require.True(t, ok)
	require.Equal(t, os.Getppid(), self.PPID)
	require.True(t, self.Live())
	require.Positive(t, self.Pgrp)
	_, ok = Read(1 << 30)
	require.False(t, ok, "a pid no process has")
}

const leaderExitsEnv = "PROCSTAT_TEST_LEADER_EXITS"

// The helper process of TestLiveLeaderExited: its main thread exits on
// its own (SYS_EXIT, as pthread_exit in a C main) while the others run
// on. Only a package initializer surely runs on the main thread.
func init() {
	if os.Getenv(leaderExitsEnv) == "" {
		return
	}
	go func() { select {} }()
	_, _, _ = syscall.RawSyscall(syscall.SYS_EXIT, 0, 0, 0)
}

// A process whose main thread has exited reads 'Z' yet runs: it is live
// until its last thread is gone.
func TestLiveLeaderExited(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), leaderExitsEnv+"=1")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	reaped := false
	defer func() {
		if !reaped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	// state waits until pid's stat reads want and returns it.
	state := func(want func(Stat) bool) Stat {
		var st Stat
		require.Eventually(t, func() bool {
			var ok bool
			st, ok = Read(pid)
			return ok && want(st)
		}, 10*time.Second, time.Millisecond)
		return st
	}
	st := state(func(s Stat) bool { return s.State == 'Z' })
	require.NotZero(t, OtherThread(pid), "its other threads run on")
	require.True(t, st.Live())

	require.NoError(t, cmd.Process.Kill())
	st = state(func(s Stat) bool { return OtherThread(pid) == 0 })
	require.False(t, st.Live(), "killed, not yet reaped: every thread has exited")
	_ = cmd.Wait()
	reaped = true
	_, ok := Read(pid)
	require.False(t, ok, "reaped")
}
