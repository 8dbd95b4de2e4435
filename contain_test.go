package harness_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
)

func init() { fakeagent.Register("panicking-library", panickingLibrary) }

// panicking-library: a program using the library, whose OnEvent panics
// at the native line of the child that setsid-escapee started in a
// session of its own, after printing that child's pid.
func panickingLibrary([]string) int {
	argv, env := fakeagent.Command("setsid-escapee")
	dir, err := os.MkdirTemp("", "panicking-library")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	run, err := harness.Start(context.Background(), harness.Task{
		Agent: "claude", Binary: argv[0], BaseEnv: env, Raw: true, Prompt: "do it", Cwd: dir,
	}, harness.Options{OnEvent: func(ev event.Event) {
		if n, ok := ev.Body.(*event.Native); ok && gjson.GetBytes(n.Line, "subtype").String() == "fake_child" {
			fmt.Println(gjson.GetBytes(n.Line, "pid").Int())
			panic("a bug in OnEvent")
		}
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, _ = run.Wait()
	return 0
}

// TestPanickingOnEventEndsTheRun: a program whose OnEvent panics dies of
// it, and the process its agent started in a session of its own goes
// first (the process package's TestPanicInCallbackEndsTheRuns has each
// containment and several runs).
func TestPanickingOnEventEndsTheRun(t *testing.T) {
	t.Parallel()
	harnesstest.RequirePanicEndsRuns(t, "panicking-library", "panic: a bug in OnEvent", "the agent's child outlived the program's panic")
}
