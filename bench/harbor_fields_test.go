package bench_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/isolate"
)

func TestLoadHarborFields(t *testing.T) {
	byName := map[string]*bench.HarborTask{}
	for _, dir := range []string{"testdata/harbor-fields", "testdata/harbor-tb2"} {
		tasks, err := bench.LoadTasks(dir)
		require.NoError(t, err)
		for _, tk := range tasks {
			byName[tk.Name] = tk.Harbor
		}
	}
	cl := byName["count-lines"]
	require.Equal(t, "alexgshaw/count-lines:20251031", cl.DockerImage)
	require.Equal(t, 10240, cl.StorageMB)
	require.Zero(t, cl.GPUs)
	require.Equal(t, "/app", cl.Workdir)
	require.Empty(t, byName["prebuilt"].Workdir, "no Dockerfile: the prebuilt image's WORKDIR")
	ea := byName["env-artifacts"]
	require.Equal(t, []bench.Artifact{{Source: "/app/out.txt"}, {Source: "/app/dir", Destination: "kept", Exclude: []string{"*.tmp"}},
		{Source: "/app/missing.txt"}}, ea.Artifacts)
	require.Equal(t, "${HARNESS_TEST_UNSET_GREETING:-hello}", ea.Env["TASK_GREETING"])
	require.Equal(t, "nobody", byName["run-as-user"].AgentUser)
	require.Equal(t, "daemon", byName["run-as-user"].VerifierUser)
	pn := byName["phase-network"]
	require.False(t, pn.AllowInternet)
	require.True(t, pn.VerifierInternet)
	require.True(t, byName["allowlist"].Allowlist)
	require.Equal(t, 1, byName["needs-gpu"].GPUs)
}

// What task.toml asks of the environment, under both sandboxes: env
// tables, artifacts, users, per-phase networks, and the refusals (GPUs on
// a machine without them, an allowlist).
func TestHarborFields(t *testing.T) {
	if isolate.HostGPUs() {
		t.Fatal("this test expects a machine without GPUs (needs-gpu is refused)")
	}
	for _, engine := range []string{"bwrap", "podman"} {
		t.Run(engine, func(t *testing.T) {
			rep := runHarbor(t, "testdata/harbor-fields", engine, "oracle")
			runs := map[string]bench.RunReport{}
			for _, r := range rep.Runs {
				runs[r.Task] = r
			}
			ea := runs["env-artifacts"]
			require.NotNil(t, ea.Check, ea.Error)
			require.True(t, ea.Check.Passed, ea.Check.Output)
			require.NotContains(t, ea.Check.Output, "sk-harbor-fixture-0123456789abcdef", "a secret env value in the report")
			require.Contains(t, ea.Check.Output, "token: ")
			require.NotEmpty(t, ea.Artifacts)
			out, err := os.ReadFile(filepath.Join(ea.Artifacts, "app", "out.txt"))
			require.NoError(t, err)
			require.Equal(t, "hello\n", string(out))
			require.FileExists(t, filepath.Join(ea.Artifacts, "kept", "a.txt"))
			require.NoFileExists(t, filepath.Join(ea.Artifacts, "kept", "b.tmp"), "excluded")
			require.Contains(t, joinWarnings(ea), "artifact /app/missing.txt: ")
			// bwrap never limits storage; podman only on storage that can
			// (overlay on XFS with quotas), else it says why not.
			if w := joinWarnings(ea); engine == "bwrap" || strings.Contains(w, "storage_mb") {
				require.Contains(t, w, "[environment].storage_mb = 10240 not enforced")
			}

			ru := runs["run-as-user"]
			require.NotNil(t, ru.Check, ru.Error)
			if engine == "podman" {
				require.True(t, ru.Check.Passed, ru.Check.Output)
				require.Empty(t, ru.Warnings)
			} else {
				require.False(t, ru.Check.Passed)
				require.Contains(t, joinWarnings(ru), `[agent].user = "nobody" not honoured under bwrap`)
			}

			pn := runs["phase-network"]
			if engine == "bwrap" {
				require.NotNil(t, pn.Check, pn.Error)
				require.True(t, pn.Check.Passed, pn.Check.Output)
			} else {
				require.Equal(t, bench.ReasonUnsupported, pn.Reason)
				require.Contains(t, pn.Error, "network_mode differ")
			}
			for task, want := range map[string]string{
				"needs-gpu": "the task needs 1 GPU(s) ([environment].gpus) and this machine has none",
				"allowlist": "the task's network_mode is allowlist",
			} {
				r := runs[task]
				require.Equal(t, "error", r.Status, task)
				require.Equal(t, bench.ReasonUnsupported, r.Reason, task)
				require.Contains(t, r.Error, want)
				require.Nil(t, r.Check, "a refused run is not verified")
			}
		})
	}
}

func joinWarnings(r bench.RunReport) string {
	s := ""
	for _, w := range r.Warnings {
		s += w + "\n"
	}
	return s
}

// An env template naming a variable the host does not set, without a
// default, fails the run's setup with one line.
func TestHarborEnvTemplateUnset(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "task")
	copyDir(t, filepath.Join(harborSuite, "create-file"), dir)
	f, err := os.OpenFile(filepath.Join(dir, "task.toml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("\n[verifier.env]\nKEY = \"${HARNESS_SURELY_UNSET_VAR}\"\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	rep := runHarbor(t, dir, "none", "nop")
	r := rep.Runs[0]
	require.Equal(t, bench.ReasonSetup, r.Reason)
	require.Equal(t, "bench: task.toml: verifier.env.KEY: ${HARNESS_SURELY_UNSET_VAR} is not set", r.Error)
}

// A terminal-bench 2.0 style task (its task.toml as published, the
// Dockerfile's FROM the local base) runs end to end: its docker_image is
// not reachable, so environment/Dockerfile is built (a warning says so);
// a task with a docker_image and no Dockerfile runs in that image, in its
// WORKDIR.
func TestHarborTB2Style(t *testing.T) {
	prebuiltImage(t)
	rep := runHarbor(t, "testdata/harbor-tb2", "podman", "oracle", "nop")
	require.Len(t, rep.Runs, 4)
	for _, r := range rep.Runs {
		require.NotNil(t, r.Check, "%s %s: %s", r.Task, r.Agent, r.Error)
		require.Equal(t, r.Agent == "oracle", r.Check.Passed, "%s %s: %s", r.Task, r.Agent, r.Check.Output)
		if r.Task == "count-lines" {
			require.Contains(t, joinWarnings(r), "docker_image alexgshaw/count-lines:20251031 not available (podman pull: ")
		}
	}
}

// prebuiltImage builds the image the prebuilt fixture names, once per
// machine (WORKDIR /work, a marker file only it has).
func prebuiltImage(t *testing.T) {
	const tag = "localhost/harness-test-prebuilt:1"
	eng, err := isolate.ContainerEngine(isolate.Podman)
	require.NoError(t, err)
	if _, err := isolate.Run(t.Context(), eng.ImageExistsArgs(tag)); err == nil {
		return
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"),
		[]byte("FROM localhost/harness-base:bookworm-2\nWORKDIR /work\nRUN echo prebuilt > /etc/prebuilt-marker\n"), 0o644))
	_, err = isolate.Run(t.Context(), eng.BuildArgs(tag, dir))
	require.NoError(t, err)
}

// Under none too the artifacts are copied out (from the run's
// directories), beside the session log, and a results directory keeps a
// copy of them.
func TestHarborArtifactsInResults(t *testing.T) {
	tasks, err := bench.LoadTasks("testdata/harbor-fields/env-artifacts")
	require.NoError(t, err)
	results, logs := t.TempDir(), t.TempDir()
	rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"oracle"}},
		bench.Options{Dir: t.TempDir(), Results: results, Settings: &harness.Settings{LogDir: logs}})
	require.NoError(t, err)
	r := rep.Runs[0]
	require.Equal(t, filepath.Join(logs, r.Run+".artifacts"), r.Artifacts)
	require.FileExists(t, filepath.Join(r.Artifacts, "app", "out.txt"))
	require.True(t, r.Check.Passed, r.Check.Output)
	require.Equal(t, "[environment].storage_mb = 10240 not enforced under none", r.Warnings[0])
	b, err := os.ReadFile(filepath.Join(results, "logs", "000000.artifacts", "kept", "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "a\n", string(b))
}
