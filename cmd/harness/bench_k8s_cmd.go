package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/otlp"
)

// benchK8sJobCmd prints a Kubernetes Indexed Job that runs the plan
// given by bench's own flags as --shards shards: pod I runs
// 'harness bench … --shard I/N --results /results'. It runs nothing
// itself; there is no cluster in harness's tests: the manifest is
// decoded into the real batch/v1 types and its arguments parsed back
// into the same plan.
//
// Exit status: 0, or 2 for bad input (a plan that does not parse, a
// flag that cannot go into a manifest, such as --env with its values).
type benchK8sJobCmd struct {
	Shards        int      `help:"Number of shards (the Job's completions)." required:""`
	Image         string   `help:"Container image holding harness, the agents and the task files (at the same paths, relative to --image-workdir); default: this version's image as 'make image' tags it ('harness version --image'), under --registry."`
	Registry      string   `help:"Registry the default image was pushed to (REGISTRY/harness-bench:TAG); ignored with --image."`
	Parallelism   int      `help:"Pods at once (default: all shards)."`
	ResultsClaim  string   `help:"PersistentVolumeClaim for the results directory (ReadWriteMany when pods may land on several nodes); default: an emptyDir per pod, the reports then only in the pods' logs."`
	EnvFromSecret []string `help:"Secret whose keys become the container's environment (API keys); repeatable. Secrets are never put in the manifest." placeholder:"NAME"`
	Name          string   `help:"The Job's name (default: harness-bench-PLAN)."`
	Namespace     string   `help:"The Job's namespace (default: kubectl's)."`
	ImageWorkdir  string   `help:"Working directory of the container; relative task paths are resolved from it (default: the image's)."`
	HarnessPath   string   `help:"The harness executable in the image." default:"harness"`
	BackoffLimit  *int     `help:"Retries of failed pods (default: Kubernetes', 6)."`
}

func (k *benchK8sJobCmd) Run(e *env, parent *benchCmd) error {
	args, err := parent.jobArgs()
	if err != nil {
		return err
	}
	plan, err := parent.plan(e)
	if err != nil {
		return err
	}
	if k.Shards < 1 {
		return usageErrorf("bench: k8s-job: --shards %d: want 1 or more", k.Shards)
	}
	id := plan.ID()
	name := k.Name
	if name == "" {
		name = "harness-bench-" + id[:12]
	}
	image := k.Image
	if image == "" {
		image = benchImage()
		if k.Registry != "" {
			image = strings.TrimSuffix(k.Registry, "/") + "/" + image
		}
	}
	spec := bench.JobSpec{Name: name, Namespace: k.Namespace, Image: image, Command: []string{k.HarnessPath},
		Args: args, Shards: k.Shards, Parallelism: k.Parallelism, ResultsClaim: k.ResultsClaim,
		EnvFromSecrets: k.EnvFromSecret, WorkingDir: k.ImageWorkdir, PlanID: id, BackoffLimit: k.BackoffLimit}
	out, err := spec.Manifest()
	if err != nil {
		return withStatus(exitUsage, err)
	}
	_, err = e.Stdout.Write(out)
	return err
}

// jobArgs are the arguments that give a pod the same plan and the same
// way of running it: bench's flags as set, paths under the current
// directory made relative (the image holds the suite at the same place
// under its working directory). Flags whose value cannot travel in a
// manifest are refused.
func (c *benchCmd) jobArgs() ([]string, error) {
	if err := k8sOTLP(c.OTLP); err != nil {
		return nil, err
	}
	switch {
	case len(c.Env) > 0:
		return nil, usageErrorf("bench: k8s-job: --env would put its values in the manifest: give them with --env-from-secret NAME")
	case c.Shard != "" || c.Results != "":
		return nil, usageErrorf("bench: k8s-job: the Job sets --shard and --results itself")
	case c.Output != "" || c.Events != "":
		return nil, usageErrorf("bench: k8s-job: -o and --events name files of this machine; the pods write to /results")
	}
	args := []string{"bench"}
	str := func(name, v string) {
		if v != "" {
			args = append(args, "--"+name, v)
		}
	}
	dur := func(name string, d *time.Duration) {
		if d != nil {
			args = append(args, "--"+name, d.String())
		}
	}
	flag := func(name string, on bool) {
		if on {
			args = append(args, "--"+name)
		}
	}
	// A *bool flag travels when given, off as on: --pty=false must win
	// over the pods' own pty setting as it does here.
	given := func(name string, v *bool) {
		switch {
		case v == nil:
		case *v:
			args = append(args, "--"+name)
		default:
			args = append(args, "--"+name+"=false")
		}
	}
	str("agents", strings.Join(c.Agents, ","))
	str("models", strings.Join(c.Models, ","))
	if c.Prompt != "" {
		args = append(args, "--prompt", c.Prompt)
	}
	str("prompt-file", relPath(c.PromptFile))
	str("tasks", relPath(c.Tasks))
	str("workdir", relPath(c.Workdir))
	args = append(args, "--repeat", strconv.Itoa(c.Repeat))
	if c.Parallel != nil {
		args = append(args, "--parallel", strconv.Itoa(*c.Parallel))
	}
	str("check", c.Check)
	args = append(args, "--check-timeout", c.CheckTimeout.String())
	flag("keep", c.Keep)
	str("permissions", deref(c.Permissions))
	dur("idle-timeout", c.IdleTimeout)
	dur("timeout", c.Timeout)
	dur("tool-timeout", c.ToolTimeout)
	dur("linger", c.Linger)
	dur("kill-grace", c.KillGrace)
	given("pty", c.PTY)
	if c.MaxTurns != 0 {
		args = append(args, "--max-turns", strconv.Itoa(c.MaxTurns))
	}
	for _, b := range c.Binary {
		args = append(args, "--binary", b)
	}
	given("no-log", c.NoLog)
	str("mock", c.Mock)
	if c.Isolate != "none" {
		// The engine is part of the plan id the Job is labelled with:
		// pods left at none would run another plan, unsandboxed.
		str("isolate", c.Isolate)
	}
	if c.Seed != 0 {
		args = append(args, "--seed", strconv.FormatUint(c.Seed, 10))
	}
	// The flags only: this machine's otlp setting and OTEL_* variables
	// are not the pods' (their headers, a key, come by --env-from-secret).
	str("otlp", c.OTLP)
	if c.contentGiven {
		// Off as on, as --pty: --otlp-content=false must win over the
		// pods' own otlp_content setting as it does here.
		given("otlp-content", &c.OTLPContent)
	}
	return args, nil
}

// k8sOTLP refuses an --otlp endpoint the pods could not use, or that
// would put a credential in the manifest: a user or password in it (a
// query, where a key may be, is refused as a base endpoint's already).
// The endpoint itself is no secret.
func k8sOTLP(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	if _, _, err := otlp.FromEnv(endpoint, func(string) string { return "" }); err != nil {
		return usageErrorf("bench: k8s-job: --otlp: %v", err)
	}
	if strings.Contains(endpoint, "@") { // anywhere: a password need not be valid in a URL
		return usageErrorf("bench: k8s-job: --otlp: a user or password in the endpoint would be in the manifest: give the collector's credentials in OTEL_EXPORTER_OTLP_HEADERS, from a Secret (--env-from-secret)")
	}
	return nil
}

// relPath makes an absolute path under the current directory relative to
// it; other paths stay as they are.
func relPath(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return p
	}
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return p
}
