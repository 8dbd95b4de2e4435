package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
)

// TestBenchImage is issue 29's proof with a real container engine: the
// bench image (Containerfile.agents, Containerfile, scripts/image.sh) builds offline from this
// tree's harness and the pinned agents install ('make test' builds the
// shared layers first with 'make image'); harness and every pinned agent
// work in it; the container of the manifest 'bench k8s-job' writes, its
// command and args exactly as Kubernetes expands them with
// JOB_COMPLETION_INDEX set to each shard in turn, run in one container
// per shard (no network: the scripted model is on the container's
// loopback) onto one shared results volume, merges to the unsharded run;
// and a rebuild with only the suite changed reuses every other layer.
func TestBenchImage(t *testing.T) {
	agents := os.Getenv("HARNESS_AGENTS_DIR") // before isolate clears it
	if agents == "" {
		agents = filepath.Join(pkgDir, "..", "..", ".agents")
	}
	root := filepath.Join(pkgDir, "..", "..")

	// A static harness, with a fixed version and -trimpath: the same
	// bytes every time, so its layer is cached from one test to the next.
	// Built before isolate, which moves HOME and with it go's caches.
	bin := filepath.Join(t.TempDir(), "harness")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=image-test", "-o", bin, "./cmd/harness")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	home := isolate(t)

	ctx := filepath.Join(home, "ctx") // the image's /bench: suite/ under it
	for _, task := range []string{"alpha", "beta"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ctx, "suite", task), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ctx, "suite", task, "prompt.md"), []byte("Create out.txt with the shell.\n"), 0o644))
	}
	buildImage := func(tag string) (string, []string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(root, "scripts", "image.sh"), tag, bin, agents, ctx)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		layers, err := exec.Command("podman", "image", "inspect", "--format", "{{json .RootFS.Layers}}", tag).Output()
		require.NoError(t, err)
		var ids []string
		require.NoError(t, json.Unmarshal(layers, &ids))
		return string(out), ids
	}
	first := "localhost/harness-bench-test:suite-1"
	_, layers1 := buildImage(first)

	// Only the suite changes: every step before its COPY comes from the
	// cache, and the image differs from the first in its last layer only.
	require.NoError(t, os.WriteFile(filepath.Join(ctx, "suite", "beta", "prompt.md"), []byte("Create out.txt with the shell, then report.\n"), 0o644))
	image := "localhost/harness-bench-test:suite-2"
	log, layers2 := buildImage(image)
	require.NotContains(t, log, "COPY --from=agents", "the agents image is built once per agents.lock and base")
	for _, step := range []string{"COPY --chown=root:root harness"} {
		i := strings.Index(log, step)
		require.Positive(t, i, "step %q in\n%s", step, log)
		next := log[i:]
		if j := strings.Index(next[1:], "STEP "); j > 0 {
			next = next[:j+1]
		}
		require.Contains(t, next, "Using cache", "step %q rebuilt:\n%s", step, log)
	}
	require.Equal(t, len(layers1), len(layers2))
	require.Equal(t, layers1[:len(layers1)-1], layers2[:len(layers2)-1], "the layers below the suite's")
	require.NotEqual(t, layers1[len(layers1)-1], layers2[len(layers2)-1], "the suite's layer")

	labels, err := exec.Command("podman", "image", "inspect", "--format", "{{json .Labels}}", image).Output()
	require.NoError(t, err)
	require.Contains(t, string(labels), `"dev.harness.version":"image-test"`)
	require.Contains(t, string(labels), `"dev.harness.agents-lock":"`+harness.AgentsLockHash()+`"`)
	require.Contains(t, string(labels), "@anthropic-ai/claude-code@")
	user, err := exec.Command("podman", "image", "inspect", "--format", "{{.User}}", image).Output()
	require.NoError(t, err)
	require.Equal(t, "bench", strings.TrimSpace(string(user)), "not root")

	podmanRun := func(args ...string) (string, error) {
		cmd := exec.Command("podman", append([]string{"run", "--rm"}, args...)...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		if err != nil {
			err = fmt.Errorf("%w: %s%s", err, o.String(), e.String())
		}
		return o.String(), err
	}
	v, err := podmanRun(image, "harness", "--version")
	require.NoError(t, err)
	require.Equal(t, "harness image-test\n", v)
	// With the network, as in a pod: gemini --version under CI=1 (harness
	// check's probe) printed nothing without one, on the host too. One
	// after the other: four node CLIs starting at once on a loaded
	// machine took gemini's past the probe's minute.
	for _, agent := range []string{"claude", "codex", "opencode", "gemini"} {
		out, err := podmanRun(image, "harness", "check", agent)
		require.NoError(t, err, "harness check %s in the image", agent)
		require.NotContains(t, out, "FAIL")
		require.NotContains(t, out, "warn  version", "the pinned version")
	}

	// The Job: the manifest bench k8s-job writes for a plan on the suite,
	// run from ctx so that the suite travels as the relative path the
	// image holds under its working directory.
	t.Chdir(ctx)
	// One agent (every pinned one passed check above): two tasks make
	// two rows, one for each of two shards.
	plan := []string{"bench", "--agents", "claude", "--tasks", filepath.Join(ctx, "suite"), "--mock", "tool",
		"--check", "test -f out.txt", "--idle-timeout", "1m", "--timeout", "3m", "--parallel", "1"}
	job := func(shards int) batchv1.Job {
		r := invoke(t, "", append(plan, "k8s-job", "--shards", strconv.Itoa(shards), "--image", image)...)
		require.Equal(t, 0, r.code, r.stderr)
		var job batchv1.Job
		require.NoError(t, yaml.UnmarshalStrict([]byte(r.stdout), &job))
		return job
	}
	// runJob runs every pod of job, at once, as Kubernetes would start
	// them: command and args expanded from the container's environment,
	// the declared JOB_COMPLETION_INDEX set, results on one volume.
	runJob := func(job batchv1.Job, results string) []bench.Report {
		require.NoError(t, os.MkdirAll(results, 0o777))
		require.NoError(t, os.Chmod(results, 0o777)) // the image's user writes it, as on a claim
		c := job.Spec.Template.Spec.Containers[0]
		require.Equal(t, image, c.Image)
		require.Equal(t, "JOB_COMPLETION_INDEX", c.Env[0].Name)
		n := int(*job.Spec.Completions)
		reps := make([]bench.Report, n)
		var wg sync.WaitGroup
		for i := range n {
			vars := map[string]string{"JOB_COMPLETION_INDEX": strconv.Itoa(i)}
			argv := []string{"--network", "none", "-e", "JOB_COMPLETION_INDEX=" + strconv.Itoa(i), "-v", results + ":" + c.VolumeMounts[0].MountPath}
			if c.WorkingDir != "" {
				argv = append(argv, "-w", c.WorkingDir)
			}
			// command replaces the image's entrypoint, args its CMD.
			var command []string
			for _, a := range c.Command {
				command = append(command, k8sExpand(a, vars))
			}
			entry, err := json.Marshal(command)
			require.NoError(t, err)
			argv = append(argv, "--entrypoint", string(entry), image)
			for _, a := range c.Args {
				argv = append(argv, k8sExpand(a, vars))
			}
			wg.Go(func() {
				out, err := podmanRun(argv...)
				require.NoError(t, err, "shard %d", i)
				reps[i] = decodeReport(t, out)
			})
		}
		wg.Wait()
		return reps
	}

	whole := runJob(job(1), filepath.Join(home, "whole"))[0]
	require.Len(t, whole.Runs, 2)
	for _, r := range whole.Runs {
		require.Equal(t, "success", r.Status, "%+v", r)
		require.True(t, r.Check.Passed, "%+v", r)
	}
	const shards = 2
	results := filepath.Join(home, "results")
	reps := runJob(job(shards), results)
	for i, rep := range reps {
		require.Equal(t, &bench.Shard{Index: i, Count: shards}, rep.Shard)
		require.Equal(t, whole.PlanID, rep.PlanID)
	}
	m := invoke(t, "", "bench", "merge", "--report", "json", results)
	require.Equal(t, 0, m.code, m.stderr)
	merged := decodeReport(t, m.stdout)
	require.Equal(t, whole.PlanID, merged.PlanID)
	require.Empty(t, merged.Missing)
	require.Empty(t, merged.Duplicates)
	require.Equal(t, runKeys(whole.Runs), runKeys(merged.Runs), "same rows, none missing, no duplicate")
	for i, r := range merged.Runs {
		require.Equal(t, whole.Runs[i].Status, r.Status, "%+v", r)
		require.Equal(t, whole.Runs[i].Check.Passed, r.Check.Passed, "%+v", r)
	}
}
