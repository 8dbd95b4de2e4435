// Command harness runs coding-agent CLIs headless under supervision and
// turns their native output into one unified NDJSON event stream.
package main

import (
	"os"

	"github.com/agentharness/harness/process"
)

func main() {
	process.MaybeReap() // first: this binary is also each run's reaper
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
