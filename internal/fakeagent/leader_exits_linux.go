package fakeagent

import (
	"os"
	"syscall"
)

// LeaderExits is the fake whose main thread exits on its own (SYS_EXIT,
// not exit_group) while its other threads live on, as a C program's
// main calling pthread_exit does: /proc shows the process as a zombie
// ('Z', environment unreadable) though it still runs.
const LeaderExits = "leader-exits"

// It must happen in a package initializer: only there is the main
// goroutine sure to run on the main thread. The goroutine left behind
// keeps the process's other threads busy (the runtime's own would do).
func init() {
	Register("leader-exits-escapee", leaderExitsEscapee)
	if os.Getenv(EnvVar) != LeaderExits {
		return
	}
	go func() { select {} }()
	_, _, _ = syscall.RawSyscall(syscall.SYS_EXIT, 0, 0, 0)
}

// leader-exits-escapee: as setsid-escapee, but the escapee's main thread
// exits at once and its other threads live on (LeaderExits): a process
// /proc calls a zombie that the run must still kill. Linux only: the
// thread-level exit is Linux's system call.
func leaderExitsEscapee([]string) int {
	initLine()
	c := start(LeaderExits, true, nil)
	childLine(c.Process.Pid)
	return hang()
}
