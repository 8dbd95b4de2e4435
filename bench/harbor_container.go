package bench

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/isolate"
)

// A Harbor task under --isolate podman (or docker): its
// environment/Dockerfile is built once (the image is tagged with the
// build context's content hash, so an unchanged task is never rebuilt,
// across benches too), and the image's WORKDIR is copied out once per
// bench as the workspace's starting files. Each run gets its own
// container of that image, in which the agent (podman exec) and then the
// verifier run; the run's workspace and /logs are the run directory's,
// bound in, so the files changed and the reward are read on the host.

// taskImage is a task's image and its WORKDIR's files (seed).
type taskImage struct {
	once      sync.Once
	tag, seed string
	workdir   string // the image's WORKDIR, for a prebuilt image without a Dockerfile
	note      string // a warning of each run: the prebuilt image was not found
	err       error
}

// image builds (or finds) the task's image and copies its WORKDIR out,
// once per bench.
func (b *bencher) image(ctx context.Context, eng *isolate.Engine, task string, h *HarborTask) (*taskImage, error) {
	b.mu.Lock()
	if b.images == nil {
		b.images = map[string]*taskImage{}
	}
	im := b.images[h.Dir]
	if im == nil {
		im = &taskImage{seed: filepath.Join(b.dir, "images", fmt.Sprintf("%s-%d", filepath.Base(h.Dir), len(b.images)))}
		b.images[h.Dir] = im
	}
	b.mu.Unlock()
	im.once.Do(func() { im.err = im.build(ctx, eng, task, h) })
	return im, im.err
}

// build finds the task's image — [environment].docker_image, here or
// pulled, else environment/Dockerfile built — and copies its WORKDIR out
// (for a prebuilt image without a Dockerfile, the image's WORKDIR).
func (im *taskImage) build(ctx context.Context, eng *isolate.Engine, task string, h *HarborTask) error {
	im.workdir = h.Workdir
	var err error
	if h.DockerImage != "" {
		ref := isolate.QualifiedImage(h.DockerImage)
		pctx, cancel := context.WithTimeout(ctx, h.BuildTimeout)
		defer cancel()
		if _, err = isolate.Run(pctx, eng.ImageExistsArgs(ref)); err != nil {
			_, err = isolate.Run(pctx, eng.PullArgs(ref))
		}
		switch {
		case err == nil:
			im.tag = ref
			if im.workdir == "" {
				out, _ := isolate.Run(pctx, eng.ImageWorkdirArgs(im.tag))
				im.workdir = cmp.Or(strings.TrimSpace(string(out)), "/")
			}
		case h.Workdir == "": // no Dockerfile to fall back on
			return fmt.Errorf("bench: task %q: docker_image %s: %w", task, h.DockerImage, err)
		default:
			im.note = fmt.Sprintf("docker_image %s not available (%s): built environment/Dockerfile instead",
				h.DockerImage, oneLine(err.Error()))
		}
	}
	if im.tag == "" {
		if im.tag, err = buildImage(ctx, eng, task, h); err != nil {
			return err
		}
	}
	return seedImage(ctx, eng, task, im.tag, im.workdir, im.seed, h.BuildTimeout)
}

// buildImage builds environment/ unless the image of its content hash
// is there. What the engine reads is checked again as at load
// (checkBuildReads): the task may have changed since.
func buildImage(ctx context.Context, eng *isolate.Engine, task string, h *HarborTask) (string, error) {
	if _, err := checkBuildReads(h.Dir); err != nil {
		return "", fmt.Errorf("bench: harbor task %s: %w", h.Dir, err)
	}
	// Its real path: hashed through a link, the context would be the
	// link's target name, not its files.
	envDir, err := taskPath(h.Dir, "environment")
	if err != nil {
		return "", fmt.Errorf("bench: harbor task %s: %w", h.Dir, err)
	}
	if _, err := os.Stat(filepath.Join(envDir, "Dockerfile")); err != nil {
		return "", fmt.Errorf("bench: --isolate %s: task %q has no environment/Dockerfile", eng.Name, task)
	}
	digest, err := isolate.ContextDigest(envDir)
	if err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	tag := isolate.ImageTag(task, digest)
	if _, err := isolate.Run(ctx, eng.ImageExistsArgs(tag)); err != nil {
		bctx, cancel := context.WithTimeout(ctx, h.BuildTimeout)
		err := eng.Build(bctx, tag, envDir)
		cancel()
		if err != nil {
			return "", fmt.Errorf("bench: building task %q's image: %w", task, err)
		}
	}
	return tag, nil
}

// seedImage copies the image's workdir to seed; each engine command is
// bounded by [environment].build_timeout_sec, bound, as Harbor bounds its
// environment's start.
func seedImage(ctx context.Context, eng *isolate.Engine, task, tag, workdir, seed string, bound time.Duration) error {
	if err := os.MkdirAll(seed, 0o755); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	name := containerName("seed")
	if err := engineStep(ctx, bound, buildBound, eng.CreateArgs(name, tag)); err != nil {
		// A create interrupted (the bench cancelled) may have made the
		// container before it stopped: remove it, if it is there.
		eng.Remove(ctx, name)
		return fmt.Errorf("bench: task %q: %w", task, err)
	}
	cerr := engineStep(ctx, bound, buildBound, eng.CopyArgs(name+":"+workdir+"/.", seed))
	rerr := eng.Remove(ctx, name)
	// An image without its WORKDIR gives an empty workspace.
	if cerr != nil && !strings.Contains(cerr.Error(), "no such file or directory") {
		return fmt.Errorf("bench: task %q: copying %s out of the image: %w", task, workdir, cerr)
	}
	if rerr != nil {
		return fmt.Errorf("bench: task %q: %w", task, rerr)
	}
	return nil
}

// The bounds of a run's engine commands, as the errors name them.
const (
	buildBound    = "[environment].build_timeout_sec"
	verifierBound = "[verifier].timeout_sec"
)

// engineStep runs an engine command (isolate.Run) within bound, its
// phase's, named what: a wedged engine (podman with runc: "given PIDs did
// not die within timeout") must not hold the run until the bench ends.
// Past the bound, the error (a *stepTimeout) says so.
func engineStep(ctx context.Context, bound time.Duration, what string, argv []string) error {
	sctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	_, err := isolate.Run(sctx, argv)
	if err != nil && ctx.Err() == nil && sctx.Err() != nil {
		return &stepTimeout{command: filepath.Base(argv[0]) + " " + argv[1], bound: what, limit: bound}
	}
	return err
}

// stepTimeout is an engine command that outlived its phase's bound.
type stepTimeout struct {
	command string        // "podman exec"
	bound   string        // "[verifier].timeout_sec"
	limit   time.Duration // its value
}

func (e *stepTimeout) Error() string {
	return fmt.Sprintf("%s: not done within %s (%v)", e.command, e.bound, e.limit)
}

// containerName is a fresh container name.
func containerName(kind string) string {
	var b [6]byte
	rand.Read(b[:])
	return "harness-" + kind + "-" + hex.EncodeToString(b[:])
}

// seedWorkspace copies the image's WORKDIR (seed) into the workspace,
// owners and modes kept.
func seedWorkspace(ctx context.Context, seed, ws string) error {
	out, err := exec.CommandContext(ctx, "cp", "-a", seed+"/.", ws).CombinedOutput()
	if err != nil {
		return fmt.Errorf("bench: seeding the workspace: %s", strings.TrimSpace(string(out)))
	}
	return nil
}

// Where an agent installed on the host is shown in a container.
const (
	containerBin  = "/opt/harness/bin" // the host's node, for the npm-installed CLIs
	containerPath = containerBin + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// startContainer starts the run's container for task t (after the
// bench's Setup: its SearchDirs and SetupEnv are final) and points t
// at it.
func (b *bencher) startContainer(ctx context.Context, eng *isolate.Engine, r *harborRun, im *taskImage, t *harness.Task, oracle bool) error {
	h := r.h
	c := isolate.Container{Name: containerName("run"), Image: im.tag, Workdir: h.Workdir, CPUs: h.CPUs,
		MemoryMB: h.MemoryMB, GPUs: h.GPUs, User: h.AgentUser, Network: r.network, Binds: []isolate.Bind{
			{Host: r.p("app"), Inner: h.Workdir},
			{Host: r.p("logs"), Inner: harborLogs},
		}}
	if t.Budgets != nil && t.Budgets.Hard > 0 {
		// A bound whatever becomes of harness: the agent's, the
		// verifier's and a margin for the rest.
		c.Lifetime = t.Budgets.Hard + h.VerifierTimeout + 10*time.Minute
	}
	if oracle {
		c.Binds = append(c.Binds, isolate.Bind{Host: r.p("solution"), Inner: harborSolution, ReadOnly: true})
	}
	b.mu.Lock()
	noStorage := b.noStorage
	b.mu.Unlock()
	if noStorage == "" {
		c.StorageMB = h.StorageMB
	}
	// A container that never says it started would hold the run until
	// the bench ends: its start is bounded as Harbor bounds its
	// environment's, by build_timeout_sec.
	ctx, cancel := context.WithTimeoutCause(ctx, h.BuildTimeout,
		fmt.Errorf("not started within [environment].build_timeout_sec (%v)", h.BuildTimeout))
	defer cancel()
	run, err := StartAgentContainer(ctx, eng, c, t, b.opts.Settings)
	if err != nil && c.StorageMB > 0 && strings.Contains(err.Error(), "storage") {
		// The engine's storage cannot limit a container's size (podman's
		// overlay but on XFS with quotas): once seen, not asked again.
		b.mu.Lock()
		noStorage, b.noStorage = oneLine(err.Error()), oneLine(err.Error())
		b.mu.Unlock()
		c.StorageMB = 0
		run, err = StartAgentContainer(ctx, eng, c, t, b.opts.Settings)
	}
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if h.StorageMB > 0 && noStorage != "" {
		r.warnings = append(r.warnings, fmt.Sprintf("[environment].storage_mb = %d not enforced: %s", h.StorageMB, noStorage))
	}
	r.container = run
	return nil
}

// StartAgentContainer starts container c for the agent of t and points t
// at it: the agent becomes the command of an exec in the container
// (t.Sandbox), which carries the agent's environment in by name. The
// agent's install is bound into c (agentBinds; oracle and nop use the
// image's shells), and so is a HOME the task sets itself (the scripted
// model's). Stop the container when the run is over.
func StartAgentContainer(ctx context.Context, eng *isolate.Engine, c isolate.Container, t *harness.Task, settings *harness.Settings) (*isolate.Running, error) {
	pathEnv := "PATH=" + containerPath
	switch t.Agent {
	case "oracle", "nop":
		// The image's own shell: the host's path of it may not exist there.
		if t.Binary == "" {
			t.Binary = map[string]string{"oracle": "/bin/bash", "nop": "/bin/sh"}[t.Agent]
		}
	default:
		binds, dirs, err := agentBinds(*t, settings)
		if err != nil {
			return nil, err
		}
		c.Binds = append(c.Binds, binds...)
		pathEnv = "PATH=" + strings.Join(append(dirs, containerPath), ":")
	}
	home := OwnHome(*t)
	if home != "" {
		c.Binds = append(c.Binds, isolate.Bind{Host: home, Inner: home})
	}
	given := givenEnv(*t, settings)
	run, err := eng.Start(ctx, c, os.Environ())
	if err != nil {
		return nil, err
	}
	t.Sandbox = &harness.Sandbox{Cwd: c.Workdir, Wrap: func(env []string) []string {
		pass := []string{isolate.AgentMark}
		if !given["PATH"] {
			pass = append(pass, pathEnv)
		}
		for _, kv := range env {
			k, _, _ := strings.Cut(kv, "=")
			if given[k] || !isolate.HostEnv(k) {
				pass = append(pass, k)
			}
		}
		return eng.ExecAsArgs(run.Name, c.Workdir, c.User, pass)
	}}
	return run, nil
}

// givenEnv are the names of the variables the caller hands the agent of
// t: Task.Env and SetupEnv (--env, --mock's wiring, a task's own env
// tables) and the configuration's env table for the agent (which
// Settings puts in Env only when the run starts). They go into a
// container whatever their name, as on the host (docs/supervision.md,
// Secrets); isolate.HostEnv keeps out only what the agent inherits.
func givenEnv(t harness.Task, settings *harness.Settings) map[string]bool {
	given := map[string]bool{}
	for _, kv := range slices.Concat(t.SetupEnv, t.Env) {
		k, _, _ := strings.Cut(kv, "=")
		given[k] = true
	}
	for k := range configuredEnv(settings, t.Agent) {
		given[k] = true
	}
	return given
}

// configuredEnv is the configuration's env table for agent (a canonical
// id, as a plan's are): [agents.NAME].env, which Settings puts in the
// task's Env only when the run starts; nil without a configuration. The
// one read of it for bench: givenEnv passes its names into a container,
// harborAgent puts task.toml's values of its keys over it, so the two
// must agree on which keys the configuration sets.
func configuredEnv(settings *harness.Settings, agent string) map[string]string {
	if settings == nil || settings.Config == nil {
		return nil
	}
	return settings.Config.Agents[agent].Env
}

// OwnHome is the HOME the task sets itself (the scripted model's
// throwaway HOME, holding the agent's configuration), or "": a sandbox
// binds it in, writable, at its own path.
func OwnHome(t harness.Task) string {
	home := ""
	for _, kv := range slices.Concat(t.SetupEnv, t.Env) {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok && filepath.IsAbs(v) {
			home = v
		}
	}
	return home
}

// ContainerName is a fresh name for a container of harness's.
func ContainerName() string { return containerName("run") }

// SandboxAgentBinds are the read-only binds, each at its own path, of
// the agent's install (agentBinds) where the bwrap sandbox spec would
// hide it: under its own /tmp or the run's HOME. The rest of the host is
// seen read-only already; oracle and nop, which run the host's shells,
// have no install.
func SandboxAgentBinds(t harness.Task, settings *harness.Settings, spec isolate.Spec) ([]isolate.Bind, error) {
	if t.Agent == "oracle" || t.Agent == "nop" {
		return nil, nil
	}
	binds, _, err := agentBinds(t, settings)
	if err != nil {
		return nil, err
	}
	var hidden []isolate.Bind
	for _, b := range binds {
		if b.Host == b.Inner && spec.Hides(b.Inner) { // not the node shown at the image's path
			hidden = append(hidden, b)
		}
	}
	return hidden, nil
}

// agentBinds are the read-only binds that show an agent installed on the
// host in a container at the same paths: each directory searched for
// agents (for an npm install's node_modules/.bin, the install's top), the
// binary's own directory when elsewhere, and the host's node at
// /opt/harness/bin/node. dirs go before the image's PATH.
func agentBinds(t harness.Task, settings *harness.Settings) (binds []isolate.Bind, dirs []string, err error) {
	if t.SearchDirs == nil && settings != nil {
		t.SearchDirs = settings.SearchDirs
	}
	t.Sandbox = nil
	cmd, err := harness.Prepare(t)
	if err != nil {
		return nil, nil, err
	}
	var roots []string
	add := func(d string) {
		if d == "" || slices.ContainsFunc(roots, func(r string) bool { return d == r || strings.HasPrefix(d, r+"/") }) {
			return
		}
		roots = append(roots, d)
	}
	for _, d := range t.SearchDirs {
		if abs, err := filepath.Abs(d); err == nil && isDir(abs) == nil {
			dirs = append(dirs, abs)
			if filepath.Base(abs) == ".bin" && filepath.Base(filepath.Dir(abs)) == "node_modules" {
				abs = filepath.Dir(filepath.Dir(abs))
			}
			add(abs)
		}
	}
	if cmd.NotInstalled == nil {
		add(filepath.Dir(cmd.Binary))
		if real, err := filepath.EvalSymlinks(cmd.Binary); err == nil {
			add(filepath.Dir(real))
		}
	}
	for _, r := range roots {
		binds = append(binds, isolate.Bind{Host: r, Inner: r, ReadOnly: true})
	}
	if node, err := exec.LookPath("node"); err == nil {
		if real, err := filepath.EvalSymlinks(node); err == nil {
			binds = append(binds, isolate.Bind{Host: real, Inner: containerBin + "/node", ReadOnly: true})
		}
	}
	return binds, dirs, nil
}

// ImageTags are the tags bench builds the Harbor tasks' images under
// (their build contexts' content hashes as they are now): what
// 'harness bench prune' keeps.
func ImageTags(tasks []Task) ([]string, error) {
	var tags []string
	for _, t := range tasks {
		if t.Harbor == nil {
			continue
		}
		envDir, err := taskPath(t.Harbor.Dir, "environment") // as buildImage hashes it
		if err != nil {
			return nil, fmt.Errorf("bench: harbor task %s: %w", t.Harbor.Dir, err)
		}
		if _, err := os.Stat(filepath.Join(envDir, "Dockerfile")); err != nil {
			continue
		}
		digest, err := isolate.ContextDigest(envDir)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		tags = append(tags, isolate.ImageTag(t.Name, digest))
	}
	return tags, nil
}
