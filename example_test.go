package harness_test

// The README's library examples, compiled with the tests so that they keep
// matching the API. They have no Output: they would start a real agent.

import (
	"context"
	"fmt"
	"os"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/logger"
	"github.com/agentharness/harness/registry"
)

func ExampleStart() {
	ctx := context.Background()
	run, err := harness.Start(ctx, harness.Task{
		Agent:  "claude",
		Prompt: "fix the failing test",
		Cwd:    ".",
	}, harness.Options{ // no Budgets: the spec's defaults
		OnEvent: func(ev event.Event) {
			if d, ok := ev.Body.(*event.TextDelta); ok {
				fmt.Print(d.Text)
			}
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // the task cannot run: unknown agent, bad option, bad cwd
		return
	}
	res, err := run.Wait() // the result event; err wraps harness.ErrIdleTimeout, ErrAgentFailed, …
	fmt.Println(res.Status, err)
}

func ExampleSettings_Start() {
	ctx := context.Background()
	cfg, _, err := config.Load(config.LoadOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	models, err := registry.Load("", &cfg.Models)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	s := &harness.Settings{Config: &cfg, Models: models, LogDir: logger.DefaultDir(os.Getenv)}
	write := func(line []byte) { os.Stdout.Write(line) }
	run, err := s.Start(ctx, harness.Task{Prompt: "fix the failing test"}, harness.Options{OnLine: write})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	_, _ = run.Wait()
}
