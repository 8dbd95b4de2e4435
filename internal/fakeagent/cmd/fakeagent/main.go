// Command fakeagent runs one of the named fake agents of
// internal/fakeagent as a standalone binary, for measurements outside go
// test (make bench):
//
//	fakeagent NAME [ARGS...]
//
// When $FAKEAGENT_CMD is set ("NAME ARGS..."), it names the fake and its
// arguments instead and the command line is ignored, so the binary can
// stand in for an agent that harness starts with the agent's own argv.
// The fakes' own children re-execute this binary with $HARNESS_FAKE_AGENT.
package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/agentharness/harness/internal/fakeagent"
)

// CmdEnv names the fake and its arguments in place of the command line.
const CmdEnv = "FAKEAGENT_CMD"

func main() {
	fakeagent.MaybeRun()
	args := os.Args[1:]
	if spec, ok := os.LookupEnv(CmdEnv); ok {
		args = strings.Fields(spec)
	}
	if len(args) == 0 || !slices.Contains(fakeagent.Names(), args[0]) {
		fmt.Fprintf(os.Stderr, "usage: fakeagent NAME [ARGS...] (or $%s=\"NAME ARGS...\"); NAME one of: %s\n", CmdEnv, strings.Join(fakeagent.Names(), ", "))
		os.Exit(2)
	}
	// MaybeRun runs the fake named by the variable with os.Args[1:].
	os.Setenv(fakeagent.EnvVar, args[0])
	os.Args = append([]string{os.Args[0]}, args[1:]...)
	fakeagent.MaybeRun()
}
