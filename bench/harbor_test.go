package bench_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/isolate"

	"github.com/stretchr/testify/require"
)

const harborSuite = "testdata/harbor"

func TestLoadHarborSuite(t *testing.T) {
	tasks, err := bench.LoadTasks(harborSuite)
	require.NoError(t, err)
	var names []string
	byName := map[string]bench.Task{}
	for _, tk := range tasks {
		names = append(names, tk.Name)
		byName[tk.Name] = tk
		require.NotNil(t, tk.Harbor, tk.Name)
		require.Empty(t, tk.Check, tk.Name)
	}
	require.Equal(t, []string{"create-file", "fix-bug", "no-network", "reward-json", "slow-solution", "verifier-timeout"}, names)
	cf := byName["create-file"].Harbor
	require.Equal(t, 120*time.Second, cf.AgentTimeout)
	require.Equal(t, 60*time.Second, cf.VerifierTimeout)
	require.True(t, cf.AllowInternet)
	require.Equal(t, "/app", cf.Workdir)
	require.Contains(t, byName["create-file"].Prompt, "/app/hello.txt")
	require.False(t, byName["no-network"].Harbor.AllowInternet)
	require.Equal(t, time.Second, byName["slow-solution"].Harbor.AgentTimeout)
	require.Len(t, byName["fix-bug"].Harbor.Copies, 1)
	require.Equal(t, 1.0, cf.CPUs)
	require.Equal(t, 2048, cf.MemoryMB)
	require.Equal(t, 600*time.Second, cf.BuildTimeout)
	require.Equal(t, 2048, byName["fix-bug"].Harbor.MemoryMB, `memory = "2G"`)

	// One task directory is a suite of one.
	one, err := bench.LoadTasks(filepath.Join(harborSuite, "fix-bug"))
	require.NoError(t, err)
	require.Len(t, one, 1)
	require.Equal(t, "fix-bug", one[0].Name)
	require.Equal(t, byName["fix-bug"].Harbor.Digest, one[0].Harbor.Digest)
}

func TestHarborTasksBesideOwnFormat(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "own.toml"), []byte(`prompt = "hi"`), 0o644))
	copyDir(t, filepath.Join(harborSuite, "create-file"), filepath.Join(dir, "harbor"))
	tasks, err := bench.LoadTasks(dir)
	require.NoError(t, err)
	require.Len(t, tasks, 2)
	require.NotNil(t, tasks[0].Harbor)
	require.Nil(t, tasks[1].Harbor)
}

func TestMalformedHarborTasks(t *testing.T) {
	toml := func(text string) func(string) {
		return func(d string) { os.WriteFile(filepath.Join(d, "task.toml"), []byte(text), 0o644) }
	}
	cases := []struct {
		name, want string
		edit       func(dir string)
	}{
		{"no test.sh", "no tests/test.sh", func(d string) { os.Remove(filepath.Join(d, "tests", "test.sh")) }},
		{"timeout not a number", "verifier.timeout_sec: want a number of seconds", toml("[verifier]\ntimeout_sec = \"ten\"\n")},
		{"negative timeout", "agent.timeout_sec = -1", toml("[verifier]\n[agent]\ntimeout_sec = -1\n")},
		// NaN fails every comparison: a range check must say what it wants.
		{"timeout nan", "verifier.timeout_sec = NaN: want 0 to 10000000 seconds", toml("[verifier]\ntimeout_sec = nan\n")},
		{"build timeout nan", "environment.build_timeout_sec = NaN", toml("[verifier]\n[environment]\nbuild_timeout_sec = nan\n")},
		{"cpus nan", "environment.cpus = NaN: want 0 to 1024", toml("[verifier]\n[environment]\ncpus = nan\n")},
		{"memory_mb nan", "environment.memory_mb = NaN: want 0 to 16777216", toml("[verifier]\n[environment]\nmemory_mb = nan\n")},
		{"memory nan", "environment.memory = nan", toml("[verifier]\n[environment]\nmemory = \"nan\"\n")},
		{"storage nan", "environment.storage = NaNG", toml("[verifier]\n[environment]\nstorage = \"NaNG\"\n")},
		{"allow_internet not a bool", "allow_internet: want true or false", toml("[verifier]\n[environment]\nallow_internet = \"no\"\n")},
		{"env not strings", "verifier.env.N: want a string", toml("[verifier]\nenv = { N = 1 }\n")},
		{"cpus not a number", "environment.cpus: want a number", toml("[verifier]\n[environment]\ncpus = \"two\"\n")},
		{"memory_mb negative", "environment.memory_mb = -1", toml("[verifier]\n[environment]\nmemory_mb = -1\n")},
		{"memory not a size", "environment.memory = lots", toml("[verifier]\n[environment]\nmemory = \"lots\"\n")},
		{"no [verifier]", "task.toml has no [verifier] table", toml("[agent]\ntimeout_sec = 5\n")},
		{"network_mode unknown", "environment.network_mode = offline: want public, no-network or allowlist", toml("[verifier]\n[environment]\nnetwork_mode = \"offline\"\n")},
		{"allowed_hosts without allowlist", "verifier.allowed_hosts: only with network_mode", toml("[verifier]\nnetwork_mode = \"public\"\nallowed_hosts = [\"a.b\"]\n")},
		{"user not a name", "agent.user: want a user name or uid", toml("[verifier]\n[agent]\nuser = 1.5\n")},
		{"gpus negative", "environment.gpus = -1: want a whole number", toml("[verifier]\n[environment]\ngpus = -1\n")},
		{"storage not a size", "environment.storage = big", toml("[verifier]\n[environment]\nstorage = \"big\"\n")},
		{"docker_image not a string", "environment.docker_image: want a string", toml("[verifier]\n[environment]\ndocker_image = 1\n")},
		{"mcp server without a name", "environment.mcp_servers[0]: want a table with a name", toml("[verifier]\n[[environment.mcp_servers]]\nurl = \"http://x\"\n")},
		{"artifact leaving", "artifacts[1]: destination \"../x\": want no ..", toml("artifacts = [\"/app/a\", { source = \"/app\", destination = \"../x\" }]\n[verifier]\n")},
		{"env table not strings", "environment.env.N: want a string", toml("[verifier]\n[environment.env]\nN = 1\n")},
		{"toml does not parse", "task.toml:", toml("[verifier\n")},
		{"empty instruction", "instruction.md is empty", func(d string) {
			os.WriteFile(filepath.Join(d, "instruction.md"), []byte("\n"), 0o644)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			suite := t.TempDir()
			dir := filepath.Join(suite, "task")
			copyDir(t, filepath.Join(harborSuite, "create-file"), dir)
			c.edit(dir)
			_, err := bench.LoadTasks(suite)
			require.ErrorContains(t, err, c.want)
			require.NotContains(t, err.Error(), "\n")
		})
	}
}

// runHarbor runs agents on the fixture suite with an engine. The run
// trees are under the test's own directory: runsDir(t) names it.
func runHarbor(t *testing.T, dir, engine string, agents ...string) *bench.Report {
	t.Helper()
	tasks, err := bench.LoadTasks(dir)
	require.NoError(t, err)
	grace := harness.DefaultBudgets()
	grace.KillGrace = 500 * time.Millisecond
	runs := t.TempDir()
	t.Cleanup(func() {
		// Checked once the bench is over: nothing of it is left running.
		require.Empty(t, harnesstest.ContainersUnder(t, runs), "containers left behind")
	})
	rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: agents, Isolate: engine}, bench.Options{
		Parallel: 4, Dir: runs, Keep: true,
		Setup: func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
			b := grace
			tk.Budgets = &b
			tk.Env = append(tk.Env, "HARNESS_ESCAPE_TARGET="+filepath.Join(t.TempDir(), "outside"))
			return tk, harness.Observer{}, nil
		},
	})
	require.NoError(t, err)
	return rep
}

func TestHarborOracleAndNop(t *testing.T) {
	for _, engine := range []string{"none", "bwrap", "podman"} {
		t.Run(engine, func(t *testing.T) {
			rep := runHarbor(t, harborSuite, engine, "oracle", "nop")
			solvable := map[string]bool{"create-file": true, "fix-bug": true, "reward-json": true, "no-network": engine != "none"}
			for _, r := range rep.Runs {
				// HOME and /tmp of the run's own are bwrap's only.
				for _, d := range []string{"home", "tmp"} {
					_, err := os.Stat(filepath.Join(filepath.Dir(r.Tree), d))
					require.Equal(t, engine == "bwrap", err == nil, "%s %s: RUN/%s: %v", r.Task, r.Agent, d, err)
				}
				require.NotNil(t, r.Check, "%s %s: %s", r.Task, r.Agent, r.Error)
				c := r.Check
				switch {
				case r.Task == "verifier-timeout":
					require.Equal(t, bench.OutcomeVerifierTimeout, c.Outcome)
					require.True(t, c.TimedOut)
					require.False(t, c.Passed)
				case r.Agent == "oracle" && r.Task == "slow-solution":
					require.Equal(t, "timeout", r.Status, "the solution outlives [agent].timeout_sec")
					require.Equal(t, bench.OutcomeReward, c.Outcome)
					require.False(t, c.Passed)
				case r.Agent == "oracle":
					require.Equal(t, "success", r.Status, r.Task)
					require.Equal(t, bench.OutcomeReward, c.Outcome)
					require.Equal(t, solvable[r.Task], c.Passed, "%s: %s", r.Task, c.Output)
				case r.Task == "slow-solution": // nop
					// [agent].timeout_sec is 1 s: a podman exec under
					// load may take longer than that to start nop.
					require.Contains(t, []string{"success", "timeout"}, r.Status)
					require.Equal(t, bench.OutcomeReward, c.Outcome, r.Task)
					require.False(t, c.Passed, r.Task)
				default: // nop
					require.Equal(t, "success", r.Status)
					require.Equal(t, bench.OutcomeReward, c.Outcome, r.Task)
					require.False(t, c.Passed, r.Task)
					require.Zero(t, *c.Reward)
				}
				if r.Task == "reward-json" {
					require.Contains(t, c.Rewards, "color")
					require.NotContains(t, c.Rewards, "note", "only numbers are rewards")
				}
			}
			// The report decides with intervals and pairs the two agents.
			require.Len(t, rep.Groups, 2)
			for _, g := range rep.Groups {
				require.Equal(t, 6, g.Checked)
				require.NotNil(t, g.PassCILow)
				if g.Agent == "nop" {
					require.Zero(t, g.Passed)
				} else {
					require.Equal(t, len(solvableNames(solvable)), g.Passed)
				}
			}
			require.NotEmpty(t, rep.Comparisons)
		})
	}
}

func solvableNames(m map[string]bool) []string {
	return slices.DeleteFunc(slices.Collect(maps.Keys(m)), func(k string) bool { return !m[k] })
}

func TestHarborEscape(t *testing.T) {
	for _, engine := range []string{"bwrap", "podman"} {
		t.Run(engine, func(t *testing.T) {
			home, _ := os.UserHomeDir()
			bashrc := filepath.Join(home, ".bashrc")
			before, errBefore := os.ReadFile(bashrc)
			rep := runHarbor(t, "testdata/harbor-escape", engine, "oracle")
			r := rep.Runs[0]
			require.Equal(t, "success", r.Status, r.Error)
			require.True(t, r.Check.Passed, "the solution ran: it wrote its workspace")
			after, errAfter := os.ReadFile(bashrc)
			require.Equal(t, errBefore == nil, errAfter == nil)
			require.Equal(t, string(before), string(after), "~/.bashrc unchanged")
			for _, p := range []string{"/etc/harness-harbor-escape", "/var/tmp/harness-harbor-escape"} {
				_, err := os.Lstat(p)
				require.True(t, os.IsNotExist(err), "%s was written on the host", p)
			}
			// HARNESS_ESCAPE_TARGET named a path under the host's /tmp:
			// the sandbox's /tmp is its own.
			entries, _ := filepath.Glob(filepath.Join(os.TempDir(), "TestHarborEscape*", "*", "outside"))
			require.Empty(t, entries)
			require.Empty(t, harnesstest.ProcsNamed("sleep 3127"), "a process the run left behind")
		})
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	}))
}

// Two shards of a Harbor plan sharing a results directory, merged, hold
// the runs of the unsharded plan with the same verdicts.
// The verdicts are those of the unsharded runs (TestHarborOracleAndNop).
// Sharding does not depend on the engine: none, and bwrap for an isolated
// one (podman's twelve containers here cost two minutes of make test and
// TestHarborOracleAndNop runs the suite under podman already).
func TestHarborShardsMerge(t *testing.T) {
	for _, engine := range []string{"none", "bwrap"} {
		t.Run(engine, func(t *testing.T) {
			tasks, err := bench.LoadTasks(harborSuite)
			require.NoError(t, err)
			plan := bench.Plan{Tasks: tasks, Agents: []string{"oracle", "nop"}, Isolate: engine}
			results := t.TempDir()
			for i := range 2 {
				_, err := bench.Run(t.Context(), plan, bench.Options{Parallel: 4, Shard: bench.Shard{Index: i, Count: 2},
					Results: results})
				require.NoError(t, err)
			}
			merged, err := bench.Merge([]string{results})
			require.NoError(t, err)
			require.Empty(t, merged.Missing)
			require.Empty(t, merged.Duplicates)
			require.Equal(t, plan.ID(), merged.PlanID)
			require.Len(t, merged.Runs, 12)
			for _, r := range merged.Runs {
				want := r.Agent == "oracle" && (r.Task == "create-file" || r.Task == "fix-bug" || r.Task == "reward-json" ||
					r.Task == "no-network" && engine != "none")
				require.Equal(t, want, r.Check.Passed, "%s %s", r.Agent, r.Task)
			}
		})
	}
}

// A Harbor task's verifier is part of what the plan asks: changing
// tests/ changes the plan id.
func TestHarborVerifierInPlanID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "task")
	copyDir(t, filepath.Join(harborSuite, "create-file"), dir)
	id := func() string {
		tasks, err := bench.LoadTasks(dir)
		require.NoError(t, err)
		return bench.Plan{Tasks: tasks, Agents: []string{"oracle"}}.ID()
	}
	before := id()
	require.Equal(t, before, id())
	require.NoError(t, execfile.Write(filepath.Join(dir, "tests", "test.sh"), []byte("echo 1 > /logs/verifier/reward.txt\n"), 0o755))
	require.NotEqual(t, before, id())
}

// An agent that outlives [agent].timeout_sec is ended before the verifier
// runs: under podman a killed exec client leaves what it started running
// in the container until harness kills it there.
func TestHarborTimedOutAgentEndsBeforeVerifier(t *testing.T) {
	for _, engine := range []string{"bwrap", "podman"} {
		t.Run(engine, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "outlive")
			copyDir(t, filepath.Join(harborSuite, "slow-solution"), dir)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "solution", "solve.sh"),
				[]byte("#!/bin/bash\nsleep 3131\n"), 0o755))
			// Reward 1 only when no sleep 3131 is left.
			require.NoError(t, os.WriteFile(filepath.Join(dir, "tests", "test.sh"), []byte(`#!/bin/bash
for p in /proc/[0-9]*; do
  if [ "$(tr '\0' ' ' < $p/cmdline 2>/dev/null)" = "sleep 3131 " ]; then echo 0 > /logs/verifier/reward.txt; exit 0; fi
done
echo 1 > /logs/verifier/reward.txt
`), 0o755))
			rep := runHarbor(t, dir, engine, "oracle")
			r := rep.Runs[0]
			require.Equal(t, "timeout", r.Status, r.Error)
			require.NotNil(t, r.Check, r.Error)
			require.True(t, r.Check.Passed, "the timed-out solution still ran when the verifier looked: %s", r.Check.Output)
		})
	}
}

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

// Under --isolate none, what the agent and the tests leave in their
// temporary directory goes with the run, as in a sandbox's or a
// container's own /tmp, and does not pile up in the host's; so for a
// task of bench's own format. The run directory a bench killed with
// SIGKILL left (unlocked, a while ago) goes with the next run
// (internal/privtmp).
func TestBenchRunTmpGoesWithTheRun(t *testing.T) {
	hostTmp := t.TempDir()
	t.Setenv("TMPDIR", hostTmp)
	stale := filepath.Join(hostTmp, "harness-benchtmp-stale")
	require.NoError(t, os.Mkdir(stale, 0o700))
	old := time.Now().Add(-2 * time.Minute)
	require.NoError(t, os.Chtimes(stale, old, old))
	dir := filepath.Join(t.TempDir(), "task")
	copyDir(t, filepath.Join(harborSuite, "create-file"), dir)
	for script, name := range map[string]string{"solution/solve.sh": "left-by-agent", "tests/test.sh": "left-by-verifier"} {
		f, err := os.OpenFile(filepath.Join(dir, script), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = fmt.Fprintf(f, "\ntouch \"${TMPDIR:-/tmp}/%s\"\n", name)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	rep := runHarbor(t, dir, "none", "oracle")
	r := rep.Runs[0]
	require.NotNil(t, r.Check, r.Error)
	require.True(t, r.Check.Passed, r.Check.Output)
	left, err := os.ReadDir(hostTmp)
	require.NoError(t, err)
	require.Empty(t, left, "files left in the host's TMPDIR")

	// The agent gets it too, though the Setup hook (as the CLI's) sets
	// the task's Env anew; the paths are harness's own, not redacted.
	plan := bench.Plan{Tasks: []bench.Task{{Prompt: "x", Check: `touch "$TMPDIR/left-by-check" && cat tmp.txt && echo "$TMPDIR"`}}, Agents: []string{"claude"}}
	prep, err := bench.Run(t.Context(), plan, bench.Options{Setup: fakes(map[string]string{"claude": "bench-tmp"})})
	require.NoError(t, err)
	c := prep.Runs[0].Check
	require.NotNil(t, c, prep.Runs[0].Error)
	require.True(t, c.Passed, c.Output)
	lines := strings.Split(strings.TrimSpace(c.Output), "\n")
	require.Len(t, lines, 4, c.Output)
	tmp := lines[3]
	require.True(t, strings.HasPrefix(tmp, filepath.Join(hostTmp, "harness-benchtmp-")), c.Output)
	require.Equal(t, []string{"TMPDIR=" + tmp + " (set true)", "TMP=" + tmp + " (set true)", "TEMP=" + tmp + " (set true)"}, lines[:3],
		"the agent's temporary directory is the check's")
	left, err = os.ReadDir(hostTmp)
	require.NoError(t, err)
	require.Empty(t, left, "files left in the host's TMPDIR")
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

// TestHarborBwrapAgentUnderTmp: an agent installed under /tmp runs in the
// bwrap sandbox, whose /tmp is its own: its install is bound in
// read-only at its path (before, bwrap's execvp found no such file).
func TestHarborBwrapAgentUnderTmp(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("/tmp", "harness-agent-under-tmp-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	exe, err := os.Executable()
	require.NoError(t, err)
	data, err := os.ReadFile(exe)
	require.NoError(t, err)
	bin := filepath.Join(dir, "bin", "fake-claude")
	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	require.NoError(t, execfile.Write(bin, data, 0o755))

	tasks, err := bench.LoadTasks(filepath.Join(harborSuite, "create-file"))
	require.NoError(t, err)
	inner := fakes(map[string]string{"claude": "bench-writer"})
	rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"claude"}, Isolate: isolate.Bwrap}, bench.Options{
		Dir: t.TempDir(),
		Setup: func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
			tk, obs, err := inner(s, tk)
			tk.Binary = bin
			return tk, obs, err
		},
	})
	require.NoError(t, err)
	require.Len(t, rep.Runs, 1)
	r := rep.Runs[0]
	require.Equal(t, "success", r.Status, "%s %s", r.Error, r.Detail)
	require.Equal(t, 1, r.ToolCalls, "the fake ran in the sandbox")
}

// TestHarborBwrapHidesTaskAndRuns: under bwrap the agent reads neither
// its task's tests/ and solution/ at their host paths nor the bench's
// run directories (its own and other runs'), wherever they lie: here
// under /var/tmp, which the sandbox's own /tmp and HOME do not hide. As
// under podman, it has /solution (the oracle) and its workspace.
func TestHarborBwrapHidesTaskAndRuns(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "harness-bwrap-peek-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	task, runs := filepath.Join(base, "suite", "peek"), filepath.Join(base, "runs")
	copyDir(t, filepath.Join(harborSuite, "create-file"), task)
	require.NoError(t, os.WriteFile(filepath.Join(task, "solution", "solve.sh"), []byte(`#!/bin/bash
{
  cat "$PEEK_TASK/tests/test.sh" && echo SAW-TESTS
  cat "$PEEK_TASK/solution/solve.sh" > /dev/null && echo SAW-SOLUTION
  ls -A "$PEEK_RUNS"/bench-*/
  test -f /solution/solve.sh && echo OWN-SOLUTION
} > /app/peek.txt 2>&1
echo 'Hello, world!' > /app/hello.txt
`), 0o755))
	tasks, err := bench.LoadTasks(task)
	require.NoError(t, err)
	rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"nop", "oracle"}, Isolate: isolate.Bwrap}, bench.Options{
		Dir: runs, Keep: true, Parallel: 1,
		Setup: func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
			tk.Env = append(tk.Env, "PEEK_TASK="+task, "PEEK_RUNS="+runs)
			return tk, harness.Observer{}, nil
		},
	})
	require.NoError(t, err)
	r := rep.Runs[1] // the nop's run, kept, is there as it runs
	require.Equal(t, "oracle", r.Agent)
	require.NotNil(t, r.Check, r.Error)
	require.True(t, r.Check.Passed, r.Check.Output)
	peek, err := os.ReadFile(filepath.Join(r.Tree, "peek.txt"))
	require.NoError(t, err)
	for _, leak := range []string{"SAW-TESTS", "SAW-SOLUTION", "001-peek", "002-peek"} {
		require.NotContains(t, string(peek), leak)
	}
	require.Contains(t, string(peek), "OWN-SOLUTION")
}

// A timeout under a nanosecond is the shortest timeout, not none: Duration
// truncated it to 0, which for the agent means no timeout at all.
func TestHarborTinyTimeoutIsATimeout(t *testing.T) {
	suite := t.TempDir()
	dir := filepath.Join(suite, "task")
	copyDir(t, filepath.Join(harborSuite, "create-file"), dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "task.toml"),
		[]byte("[agent]\ntimeout_sec = 1e-12\n[verifier]\ntimeout_sec = 1e-12\n"), 0o644))
	tasks, err := bench.LoadTasks(suite)
	require.NoError(t, err)
	require.Equal(t, time.Duration(1), tasks[0].Harbor.AgentTimeout)
	require.Equal(t, time.Duration(1), tasks[0].Harbor.VerifierTimeout)
}
