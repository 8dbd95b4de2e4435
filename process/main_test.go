package process

import (
	"flag"
	"os"
	"testing"

	"github.com/agentharness/harness/internal/fakeagent"
)

var long = flag.Bool("long", false, "run the 1 GB stdout flood")

func TestMain(m *testing.M) {
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
