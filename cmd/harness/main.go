// Command harness runs coding-agent CLIs headless under supervision and
// turns their native output into one unified NDJSON event stream.
package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/agentharness/harness/process"
)

func main() {
	process.MaybeReap() // first: this binary is also each run's reaper
	endRunsOnQuit()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// endRunsOnQuit has SIGQUIT (Ctrl-\) and SIGABRT end every run of this
// harness before they take it down as they would have, with Go's dump
// of its goroutines (exit 2). Their default action exits at once: each
// agent died of Pdeathsig, but what it started lived on.
func endRunsOnQuit() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGQUIT, syscall.SIGABRT)
	go func() {
		sig := <-sigs
		process.EndAll()
		signal.Reset(syscall.SIGQUIT, syscall.SIGABRT)
		_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
	}()
}
