// Command harness runs coding-agent CLIs headless under supervision and
// turns their native output into one unified NDJSON event stream.
package main

import (
	"errors"
	"os"
	"os/signal"
	"sync"
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

// onBrokenPipe, set by endRunsOnBrokenPipe, is given a command's error
// before it is reported.
var onBrokenPipe func(error)

// endRunsOnBrokenPipe makes a closed stdout or stderr end every run before
// harness dies of SIGPIPE, as it did: the runtime's default for a write to
// such a pipe exits at once, and a command that was writing while runs
// lived (bench --progress | head, an MCP client that went away) left what
// they started behind. A SIGPIPE from a write to another pipe (an agent's
// stdin) fails that write with EPIPE and changes nothing, as before.
func endRunsOnBrokenPipe() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGPIPE)
	onBrokenPipe = func(err error) {
		// The command's write failed with EPIPE before the goroutine
		// below saw the signal: die here, before its error is reported.
		if errors.Is(err, syscall.EPIPE) && !pipeOwned.Load() && len(closedStdio()) > 0 {
			dieOfBrokenPipe()
		}
	}
	go func() {
		for range sigs {
			if pipeOwned.Load() || len(closedStdio()) == 0 {
				continue
			}
			dieOfBrokenPipe()
		}
	}()
}

var dying sync.Once

// dieOfBrokenPipe ends every run, then dies of SIGPIPE with its default
// action, as a filter does (141 in a shell). Once called, the process
// never goes on: a second caller waits in dying.Do for the death.
func dieOfBrokenPipe() {
	dying.Do(func() {
		quitting.Store(true)
		process.EndAll()
		signal.Reset(syscall.SIGPIPE)
		// A SIGPIPE from kill is ignored by the runtime once nobody is
		// notified of it; a write to the closed stdout or stderr takes
		// the default action (os.sigpipe), and writes nothing: its
		// reader is gone.
		for _, f := range closedStdio() {
			_, _ = f.Write([]byte{'\n'})
		}
		_ = syscall.Kill(os.Getpid(), syscall.SIGPIPE)
	})
}

// closedStdio returns those of os.Stdout and os.Stderr that are a pipe or
// socket whose reader is gone (poll says POLLERR, or POLLHUP for a socket).
func closedStdio() []*os.File {
	fds := []unix.PollFd{{Fd: 1}, {Fd: 2}}
	if n, err := unix.Poll(fds, 0); err != nil || n == 0 {
		return nil
	}
	var closed []*os.File
	for i, f := range []*os.File{os.Stdout, os.Stderr} {
		if fds[i].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			closed = append(closed, f)
		}
	}
	return closed
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
