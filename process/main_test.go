//go:build linux

package process

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/agentharness/harness/internal/fakeagent"
)

func TestMain(m *testing.M) {
	MaybeReap() // first: a re-executed test binary may be a run's reaper
	fakeagent.Register("mini-harness", miniHarness)
	fakeagent.MaybeRun()
	flag.Parse()
	// These tests mostly wait on child processes: run more of them at once
	// than -parallel's default (GOMAXPROCS), unless it was set explicitly.
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "8")
	}
	os.Exit(m.Run())
}

// miniHarness [reaper]: a harness in a fake: it supervises a sleeper
// (through the run's reaper rather than a cgroup with "reaper"), announces
// the sleeper's pid, and waits to be killed (TestPdeathsig).
func miniHarness(args []string) int {
	argv, env := fakeagent.Command("sleeper")
	reaper := len(args) > 0 && args[0] == "reaper"
	p, err := Start(context.Background(), Options{Argv: argv, Env: env, noCgroup: reaper})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cg := ""
	if p.cg != nil {
		cg = p.cg.dir
	}
	fmt.Printf("{\"type\":\"system\",\"subtype\":\"fake_child\",\"pid\":%d,\"cgroup\":%q,\"seq\":1}\n", p.PID(), cg)
	p.Wait()
	return 0
}
