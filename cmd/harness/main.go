// Command harness runs coding-agent CLIs headless under supervision and
// turns their native output into one unified NDJSON event stream.
package main

import (
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentharness/harness/process"
)

func main() {
	process.MaybeReap() // first: this binary is also each run's reaper
	endRunsOnQuit()
	endRunsOnBrokenPipe()
	exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// quitting is set once a SIGQUIT or SIGABRT is ending harness.
var quitting atomic.Bool

// endRunsOnQuit has SIGQUIT (Ctrl-\) and SIGABRT end every run of this
// harness before they take it down as they would have, with Go's dump
// of its goroutines (exit 2). Their default action exits at once: each
// agent died of Pdeathsig, but what it started lived on.
func endRunsOnQuit() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGQUIT, syscall.SIGABRT)
	go func() {
		sig := <-sigs
		quitting.Store(true)
		process.EndAll()
		signal.Reset(syscall.SIGQUIT, syscall.SIGABRT)
		_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
	}()
}

// pipeOwned is set by a command that ends by itself, with its status,
// when its stdout is closed (run, parse, session catch SIGPIPE for that).
var pipeOwned atomic.Bool

// endRunsOnBrokenPipe makes a closed stdout or stderr end every run before
// harness dies of SIGPIPE, as it did: the runtime's default for a write to
// such a pipe exits at once, and a command that was writing while runs
// lived (bench --progress | head, an MCP client that went away) left what
// they started behind. A SIGPIPE from a write to another pipe (an agent's
// stdin) fails that write with EPIPE and changes nothing, as before.
func endRunsOnBrokenPipe() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGPIPE)
	go func() {
		for range sigs {
			if pipeOwned.Load() || !stdioClosed() {
				continue
			}
			quitting.Store(true)
			process.EndAll()
			signal.Reset(syscall.SIGPIPE)
			_ = syscall.Kill(os.Getpid(), syscall.SIGPIPE)
		}
	}()
}

// stdioClosed reports whether stdout or stderr is a pipe or socket whose
// reader is gone (poll says POLLERR, or POLLHUP for a socket).
func stdioClosed() bool {
	fds := []unix.PollFd{{Fd: 1}, {Fd: 2}}
	if n, err := unix.Poll(fds, 0); err != nil || n == 0 {
		return false
	}
	for _, f := range fds {
		if f.Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			return true
		}
	}
	return false
}

// exit exits with code, unless a SIGQUIT, SIGABRT or SIGPIPE is ending harness:
// the runs it ends let the command return first, and the signal's own
// end (the dump, exit 2) is waited for, a minute at most.
func exit(code int) {
	if quitting.Load() {
		time.Sleep(time.Minute)
	}
	os.Exit(code)
}
