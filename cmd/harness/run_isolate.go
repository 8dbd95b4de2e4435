package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/privtmp"
	sandbox "github.com/agentharness/harness/isolate"
)

// isolate points the task at its sandbox (--isolate) and returns what
// ends it. The working directory is the one thing the agent may change:
//
//   - bwrap: the host read-only, the working directory bound writable at
//     its own path, a private /tmp and HOME (empty: credentials come from
//     the environment), a HOME the task sets itself (the scripted model's)
//     bound writable, the agent's install read-only where /tmp or HOME
//     would hide it, the session logs and what the host keeps private
//     (isolate.HostPrivate) shown empty; the host's network is
//     kept (the agent needs its model API); its own PID namespace, which
//     dies with the run; no capability. A working directory that is or
//     holds HOME is refused (checkIsolate).
//   - podman, docker: a container of --image with the working directory
//     bound at its own path and the host's network, the agent run in it
//     with exec (as bench does); removed at the end.
func (c *runCmd) isolate(lib *harness.Settings, t *harness.Task) (func(), error) {
	if err := c.checkIsolate(); err != nil {
		return nil, err
	}
	cwd, err := filepath.Abs(cmp.Or(t.Cwd, "."))
	if err != nil {
		return nil, err
	}
	if sandbox.IsContainer(c.Isolate) {
		eng, err := sandbox.ContainerEngine(c.Isolate)
		if err != nil {
			return nil, withStatus(exitUsage, fmt.Errorf("run: %w", err))
		}
		ct := sandbox.Container{Name: bench.ContainerName(), Image: c.Image, Workdir: cwd, Network: true,
			Binds: []sandbox.Bind{{Host: cwd, Inner: cwd}}}
		if b := t.Budgets; b != nil && b.Hard > 0 {
			ct.Lifetime = b.Hard + b.KillGrace + 10*time.Minute
		}
		run, err := startContainer(eng, ct, t, lib)
		if err != nil {
			return nil, err
		}
		return func() { run.Stop() }, nil
	}
	// privtmp: its removal takes the read-only directories the agent may
	// leave (Go's module cache), and the next run sweeps away one that a
	// harness killed with SIGKILL left behind.
	private, err := privtmp.Make(os.TempDir(), sandboxPrefix)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	home := sandboxHome()
	spec := sandbox.Spec{Chdir: cwd, Network: true, Binds: []sandbox.Bind{
		{Host: filepath.Join(private.Path, "tmp"), Inner: "/tmp"},
		{Host: filepath.Join(private.Path, "home"), Inner: home},
		{Host: cwd, Inner: cwd},
	}}
	if own := bench.OwnHome(*t); own != "" {
		spec.Binds = append(spec.Binds, sandbox.Bind{Host: own, Inner: own})
	}
	// The session logs (other runs' transcripts) and what the host keeps
	// private (an SSH agent, an engine's socket) are not the agent's to
	// read wherever they lie, unless in the directory it may change.
	unseen := sandbox.HostPrivate()
	if logs, err := filepath.Abs(lib.LogDir); lib.LogDir != "" && err == nil {
		unseen = append(unseen, logs)
	}
	for _, p := range unseen {
		if rel, err := filepath.Rel(cwd, p); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			spec.Hide = append(spec.Hide, p)
		}
	}
	for _, d := range []string{"tmp", "home"} {
		if err := os.Mkdir(filepath.Join(private.Path, d), 0o700); err != nil {
			private.Remove()
			return nil, err
		}
	}
	os.Chmod(filepath.Join(private.Path, "tmp"), 0o1777)
	binds, err := bench.SandboxAgentBinds(*t, lib, spec)
	if err != nil {
		private.Remove()
		return nil, fmt.Errorf("run: %w", err)
	}
	spec.Binds = append(spec.Binds, binds...)
	prefix, err := spec.Prefix()
	if err != nil {
		private.Remove()
		return nil, withStatus(exitUsage, fmt.Errorf("run: %w", err))
	}
	t.Sandbox = &harness.Sandbox{Cwd: cwd, Prefix: prefix}
	return func() { private.Remove() }, nil
}

// containerStartBound bounds a container's start when the run has no
// hard timeout (--timeout 0): the default hard timeout.
var containerStartBound = harness.DefaultBudgets().Hard

// startContainer starts the run's container. A start that never says it
// is done (a slow pull, a wedged engine) would hold harness before the
// run's budgets start: it is bounded by the run's hard timeout (a pull
// may take long; containerStartBound without one), exit 124, and a
// SIGINT, SIGTERM or SIGHUP ends it, exit 130; either way the container
// and the engine's client are gone.
func startContainer(eng *sandbox.Engine, ct sandbox.Container, t *harness.Task, lib *harness.Settings) (*sandbox.Running, error) {
	bound, from := containerStartBound, "the default hard timeout: the run has none"
	if b := t.Budgets; b != nil && b.Hard > 0 {
		bound, from = b.Hard, "the run's hard timeout"
	}
	sigCtx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	ctx, cancel := context.WithTimeoutCause(sigCtx, bound, fmt.Errorf("not started within %v (%s)", bound, from))
	defer cancel()
	run, err := bench.StartAgentContainer(ctx, eng, ct, t, lib)
	switch {
	case err == nil:
		return run, nil
	case sigCtx.Err() != nil:
		return nil, withStatus(exitInterrupted, fmt.Errorf("run: %w", err))
	case ctx.Err() != nil:
		return nil, withStatus(exitTimeout, fmt.Errorf("run: %w", err))
	}
	return nil, fmt.Errorf("run: %w", err)
}

// sandboxPrefix names the bwrap sandbox's private directory (its /tmp
// and HOME) in the host's temporary directory; like every privtmp
// prefix, no other's names start with it.
const sandboxPrefix = "harness-sandbox-"

// sandboxHome is the HOME the bwrap sandbox replaces with its private
// one.
func sandboxHome() string {
	if home := os.Getenv("HOME"); home != "" && home != "/" {
		return home
	}
	return "/root"
}

// holdsHome reports whether the working directory cwd is home or holds
// it, as given or with symbolic links resolved: bound writable at its
// path, it would put the real HOME back over the sandbox's private one.
func holdsHome(cwd, home string) bool {
	holds := func(dir, p string) bool {
		rel, err := filepath.Rel(dir, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
	}
	if holds(cwd, home) {
		return true
	}
	rc, err1 := filepath.EvalSymlinks(cwd)
	rh, err2 := filepath.EvalSymlinks(home)
	return err1 == nil && err2 == nil && holds(rc, rh)
}

// checkIsolate refuses an --isolate that this machine cannot give, or
// that lacks its image, as a run does before it makes the isolation (and
// --dry-run without making it).
func (c *runCmd) checkIsolate() error {
	if err := sandbox.Check(c.Isolate); err != nil {
		return withStatus(exitUsage, fmt.Errorf("run: %w", err))
	}
	if sandbox.IsContainer(c.Isolate) && c.Image == "" {
		return usageErrorf("run: --isolate %s needs --image", c.Isolate)
	}
	if c.Isolate == sandbox.Bwrap {
		cwd, err := filepath.Abs(cmp.Or(c.Cwd, "."))
		if err == nil && holdsHome(cwd, sandboxHome()) {
			return usageErrorf("run: --isolate bwrap: the working directory %s is or holds HOME (%s), which the agent would get writable instead of an empty one; run in a project directory (--cwd DIR)", cwd, sandboxHome())
		}
	}
	return nil
}
