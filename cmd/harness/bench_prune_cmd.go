package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/alecthomas/kong"

	"github.com/agentharness/harness/bench"
	sandbox "github.com/agentharness/harness/isolate"
)

// benchPruneCmd removes the images bench built for Harbor tasks:
// one per content hash of a task's environment/, so every change of a
// task leaves one behind. With bench's --tasks, the images of those
// tasks as they are now are kept; bench's other flags are refused, as
// merge and compare refuse them (--isolate docker would not choose the
// engine: --engine does).
//
// Exit status: 0 when every image was removed (each removed one is a
// line on stdout), 1 when one could not be (a container uses it), 2 for
// bad input (no such engine, unreadable tasks, a flag of a bench run).
type benchPruneCmd struct {
	Engine string `help:"The container engine whose images to remove: podman or docker." enum:"podman,docker" default:"podman"`
}

func (p *benchPruneCmd) Run(e *env, parent *benchCmd, ctx *kong.Context) error {
	for _, f := range ctx.Path {
		if f.Flag != nil && f.Flag.Name == "isolate" && slices.Contains(ctx.Selected().Parent.Flags, f.Flag) {
			return usageErrorf("bench: prune: --isolate is the engine of a bench run; prune's is --engine (podman or docker)")
		}
	}
	if err := refuseRunFlags(ctx, "prune", "tasks"); err != nil {
		return err
	}
	eng, err := sandbox.ContainerEngine(p.Engine)
	if err != nil {
		return withStatus(exitUsage, fmt.Errorf("bench: prune: %w", err))
	}
	var keep []string
	if parent.Tasks != "" {
		tasks, err := bench.LoadTasks(parent.Tasks)
		if err != nil {
			return withStatus(exitUsage, err)
		}
		if keep, err = bench.ImageTags(tasks); err != nil {
			return withStatus(exitUsage, err)
		}
	}
	removed, err := sandbox.PruneImages(context.Background(), eng, sandbox.TaskImages, keep)
	for _, r := range removed {
		fmt.Fprintln(e.Stdout, r)
	}
	if err != nil {
		return withStatus(exitAgentFailed, fmt.Errorf("bench: prune: %w", err))
	}
	return nil
}
