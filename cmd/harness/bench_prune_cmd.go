package main

import (
	"context"
	"fmt"

	"github.com/agentharness/harness/bench"
	sandbox "github.com/agentharness/harness/isolate"
)

// benchPruneCmd removes the images bench built for Harbor tasks:
// one per content hash of a task's environment/, so every change of a
// task leaves one behind. With bench's --tasks, the images of those
// tasks as they are now are kept.
//
// Exit status: 0 when every image was removed (each removed one is a
// line on stdout), 1 when one could not be (a container uses it), 2 for
// bad input (no such engine, unreadable tasks).
type benchPruneCmd struct {
	Engine string `help:"The container engine whose images to remove: podman or docker." enum:"podman,docker" default:"podman"`
}

func (p *benchPruneCmd) Run(e *env, parent *benchCmd) error {
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
