// Command harness runs coding-agent CLIs headless under supervision and
// turns their native output into one unified NDJSON event stream.
package main

import (
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentharness/harness/process"
)

func main() {
	process.MaybeReap() // first: this binary is also each run's reaper
	endRunsOnQuit()
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

// exit exits with code, unless a SIGQUIT or SIGABRT is ending harness:
// the runs it ends let the command return first, and the signal's own
// end (the dump, exit 2) is waited for, a minute at most.
func exit(code int) {
	if quitting.Load() {
		time.Sleep(time.Minute)
	}
	os.Exit(code)
}
