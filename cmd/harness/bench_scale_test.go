package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/fakeagent"
)

func init() {
	// harness-main is harness itself, in another process: the shards of a
	// plan run as separate processes, and a bench can be killed.
	fakeagent.Register("harness-main", func(args []string) int {
		return run(args, os.Stdin, os.Stdout, os.Stderr)
	})
	fakeagent.Register("bench-cli-counted", benchCLICounted)
}

// bench-cli-counted: appends a line to $BENCH_COUNT_FILE, then acts as
// bench-cli-writer; the start numbered $BENCH_HANG_AT instead hangs until
// its parent is gone (so a killed bench leaves nothing behind).
func benchCLICounted(args []string) int {
	f, err := os.OpenFile(os.Getenv("BENCH_COUNT_FILE"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return 3
	}
	f.WriteString("start\n")
	f.Close()
	data, _ := os.ReadFile(os.Getenv("BENCH_COUNT_FILE"))
	if n := strings.Count(string(data), "\n"); strconv.Itoa(n) == os.Getenv("BENCH_HANG_AT") {
		fakeagent.Line(`{"type":"system","subtype":"init","session_id":"s1","pid":` + strconv.Itoa(os.Getpid()) + `}`)
		parent := os.Getppid()
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && os.Getppid() == parent; {
			time.Sleep(20 * time.Millisecond)
		}
		return 1
	}
	return benchCLIWriter(args)
}

// harnessProc starts harness with args in another process.
func harnessProc(t *testing.T, env []string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	argv, fenv := fakeagent.Command("harness-main", args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(fenv, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	return cmd, &out, &errb
}

func runKeys(runs []bench.RunReport) []bench.RunKey {
	var out []bench.RunKey
	for _, r := range runs {
		out = append(out, r.Key())
	}
	return out
}

func decodeReport(t *testing.T, s string) bench.Report {
	t.Helper()
	var rep bench.Report
	require.NoError(t, json.Unmarshal([]byte(s), &rep), "%s", s)
	return rep
}

func TestBenchShardsInThreeProcessesMerge(t *testing.T) {
	home := isolate(t)
	src := benchSource(t)
	plan := benchArgs(t, "bench-cli-writer", "--agents", "claude", "--models", "m1,m2", "-p", "write out.txt", "--workdir", src,
		"--repeat", "3", "--check", "test -f out.txt", "--report", "json", "--parallel", "1")
	whole := invoke(t, "", plan...)
	require.Equal(t, 0, whole.code, whole.stderr)
	wrep := decodeReport(t, whole.stdout)
	require.Len(t, wrep.Runs, 6)
	require.Len(t, wrep.PlanID, 32)

	results := filepath.Join(home, "results")
	var wg sync.WaitGroup
	for i := range 3 {
		cmd, out, errb := harnessProc(t, nil, append(plan, "--shard", strconv.Itoa(i)+"/3", "--results", results)...)
		wg.Go(func() {
			require.NoError(t, cmd.Wait(), "shard %d: %s", i, errb)
			rep := decodeReport(t, out.String())
			require.Equal(t, &bench.Shard{Index: i, Count: 3}, rep.Shard)
			require.Len(t, rep.Runs, 2)
			require.Equal(t, wrep.PlanID, rep.PlanID)
		})
	}
	wg.Wait()
	logs, _ := filepath.Glob(filepath.Join(results, "logs", "*.ndjson"))
	require.Len(t, logs, 6, "each row has its session log copied")

	m := invoke(t, "", "bench", "merge", "--report", "json", results)
	require.Equal(t, 0, m.code, m.stderr)
	mrep := decodeReport(t, m.stdout)
	require.Equal(t, runKeys(wrep.Runs), runKeys(mrep.Runs), "same rows, none missing, no duplicate")
	require.Empty(t, mrep.Missing)
	require.Empty(t, mrep.Duplicates)
	require.Equal(t, wrep.PlanID, mrep.PlanID)
	for _, r := range mrep.Runs {
		require.Equal(t, "success", r.Status)
		require.True(t, r.Check.Passed)
	}

	// Every report was stored, the shards' too (same XDG_DATA_HOME).
	stored, err := bench.Store{Dir: bench.StoreDir()}.List()
	require.NoError(t, err)
	require.Len(t, stored, 5, "whole, 3 shards, merge")
	got, err := bench.LoadReport(mrep.ID)
	require.NoError(t, err)
	require.Equal(t, runKeys(mrep.Runs), runKeys(got.Runs))

	md := invoke(t, "", "bench", "merge", "--report", "markdown", results)
	require.Equal(t, 0, md.code, md.stderr)
	require.Contains(t, md.stdout, "### Paired comparisons")
}

// countedBench is a bench of the bench-cli-counted fake (claude, the
// models, two repeats, parallel, a JSON report) in an isolated home: the
// file that counts the starts, the --results directory and the arguments.
func countedBench(t *testing.T, models, parallel string, extra ...string) (count, results string, args []string) {
	t.Helper()
	home := isolate(t)
	src := benchSource(t)
	count = filepath.Join(home, "count")
	results = filepath.Join(home, "results")
	args = benchArgs(t, "bench-cli-counted", append([]string{"--agents", "claude", "--models", models, "-p", "write out.txt", "--workdir", src,
		"--repeat", "2", "--parallel", parallel, "--report", "json", "--results", results,
		"--env", "BENCH_COUNT_FILE=" + count, "--no-progress"}, extra...)...)
	return count, results, args
}

func TestBenchKilledResumes(t *testing.T) {
	count, results, args := countedBench(t, "m1,m2", "1")

	// The second run hangs: kill the bench (SIGKILL, no chance to clean
	// up) once the first run's row is there. Its run trees and the run's
	// temporary directory, which it cannot remove, go with the test's.
	cmd, _, errb := harnessProc(t, []string{"TMPDIR=" + t.TempDir()}, append(args, "--env", "BENCH_HANG_AT=2")...)
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(count)
		_, err := os.Stat(filepath.Join(results, "runs", "000000.json"))
		return err == nil && strings.Count(string(data), "\n") == 2
	}, 30*time.Second, 10*time.Millisecond, "stderr: %s", errb)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	rows, _ := filepath.Glob(filepath.Join(results, "runs", "*.json"))
	require.Len(t, rows, 1)
	require.FileExists(t, filepath.Join(results, "claims", "000001.lock"), "the dead bench's claim: its lock went with it")

	r := invoke(t, "", args...)
	require.Equal(t, 0, r.code, r.stderr)
	rep := decodeReport(t, r.stdout)
	require.Len(t, rep.Runs, 4)
	require.True(t, rep.Runs[0].Resumed)
	for _, run := range rep.Runs[1:] {
		require.False(t, run.Resumed)
		require.Equal(t, "success", run.Status)
	}
	data, _ := os.ReadFile(count)
	require.Equal(t, 2+3, strings.Count(string(data), "\n"), "only the three missing runs ran again")
}

// TestTwoBenchProcessesShareResults: two bench processes of one plan on
// one --results directory run every run once between them.
func TestTwoBenchProcessesShareResults(t *testing.T) {
	count, results, args := countedBench(t, "m1,m2,m3", "2", "--no-store")
	var wg sync.WaitGroup
	for i := range 2 {
		cmd, out, errb := harnessProc(t, nil, args...)
		wg.Go(func() {
			require.NoError(t, cmd.Wait(), "bench %d: %s", i, errb)
			rep := decodeReport(t, out.String())
			require.Len(t, rep.Runs, 6)
			for _, r := range rep.Runs {
				require.Equal(t, "success", r.Status)
			}
		})
	}
	wg.Wait()
	data, err := os.ReadFile(count)
	require.NoError(t, err)
	require.Equal(t, 6, strings.Count(string(data), "\n"), "each of the 6 runs ran once")
	m := invoke(t, "", "bench", "merge", "--report", "json", "--no-store", results)
	require.Equal(t, 0, m.code, m.stderr)
}

func TestBenchScaleBadInput(t *testing.T) {
	home := isolate(t)
	src := benchSource(t)
	results := filepath.Join(home, "results")
	plan := benchArgs(t, "bench-cli-writer", "--agents", "claude", "-p", "write out.txt", "--workdir", src, "--report", "json")
	r := invoke(t, "", append(plan, "--results", results)...)
	require.Equal(t, 0, r.code, r.stderr)
	row := filepath.Join(results, "runs", "000000.json")
	good, err := os.ReadFile(row)
	require.NoError(t, err)
	empty := filepath.Join(home, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	corrupt := filepath.Join(home, "corrupt")
	require.NoError(t, os.MkdirAll(filepath.Join(corrupt, "runs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(corrupt, "plan.json"), []byte("{\"plan_id\": 3"), 0o644))
	junk := filepath.Join(home, "junk.json")
	require.NoError(t, os.WriteFile(junk, []byte("not json"), 0o644))
	// A report that says its plan has 5 million runs (2 GB, before).
	absurd := filepath.Join(home, "absurd.json")
	require.NoError(t, os.WriteFile(absurd, []byte(`{"plan_id":"0123456789abcdef0123456789abcdef","planned":5000000,`+
		`"runs":[{"index":0,"agent":"claude","status":"success"}]}`), 0o644))

	for name, args := range map[string][]string{
		"shard-3-of-3":         append(plan, "--shard", "3/3"),
		"shard-x":              append(plan, "--shard", "x"),
		"merge-empty-dir":      {"bench", "merge", empty},
		"merge-nothing":        {"bench", "merge"},
		"merge-corrupt-plan":   {"bench", "merge", corrupt},
		"merge-junk-report":    {"bench", "merge", junk},
		"merge-absurd-planned": {"bench", "merge", absurd},
		"repeat-too-many":      append(plan, "--repeat", "100001"),
		"k8s-repeat-too-many":  {"bench", "--agents", "claude", "-p", "x", "--repeat", "200000", "k8s-job", "--shards", "2", "--image", "i"},
		"compare-junk":         {"bench", "compare", junk, junk},
		"compare-bad-growth":   {"bench", "compare", "--max-cost-growth", "lots", results, results},
		"compare-nan-growth":   {"bench", "compare", "--max-time-growth", "nan", results, results},
		"compare-inf-growth":   {"bench", "compare", "--max-cost-growth", "+Inf%", results, results},
		"k8s-env-inline":       {"bench", "--agents", "claude", "-p", "x", "--env", "ANTHROPIC_API_KEY=sk-secret", "k8s-job", "--shards", "2", "--image", "i"},
		"k8s-no-shards":        {"bench", "--agents", "claude", "-p", "x", "k8s-job", "--shards", "0", "--image", "i"},
		"k8s-bad-secret-name":  {"bench", "--agents", "claude", "-p", "x", "k8s-job", "--shards", "2", "--image", "i", "--env-from-secret", "Bad_Name"},
		"k8s-otlp-password":    {"bench", "--agents", "claude", "-p", "x", "--otlp", "https://u:sk-secret@collector:4318", "k8s-job", "--shards", "2", "--image", "i"},
		"k8s-otlp-query":       {"bench", "--agents", "claude", "-p", "x", "--otlp", "https://collector:4318?key=sk-secret", "k8s-job", "--shards", "2", "--image", "i"},
		"k8s-otlp-bad":         {"bench", "--agents", "claude", "-p", "x", "--otlp", "ftp://collector", "k8s-job", "--shards", "2", "--image", "i"},
	} {
		t.Run(name, func(t *testing.T) {
			r := invoke(t, "", args...)
			require.Equal(t, exitUsage, r.code, "stdout: %s stderr: %s", r.stdout, r.stderr)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			require.True(t, strings.HasPrefix(lines[0], "harness: "), r.stderr)
			require.Len(t, lines, 1, r.stderr)
			require.NotContains(t, r.stdout+r.stderr, "sk-secret")
		})
	}

	// A corrupt row: the bench refuses to resume, the merge too; every
	// file stays as it was.
	require.NoError(t, os.WriteFile(row, good[:len(good)/2], 0o600))
	for _, args := range [][]string{append(plan, "--results", results), {"bench", "merge", results}} {
		r := invoke(t, "", args...)
		require.Equal(t, exitUsage, r.code, r.stderr)
		require.Contains(t, r.stderr, "000000.json: not a run record")
		require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, r.stderr)
		now, err := os.ReadFile(row)
		require.NoError(t, err)
		require.Equal(t, good[:len(good)/2], now, "nothing already written is lost")
	}
}

func TestBenchCompareCLI(t *testing.T) {
	home := isolate(t)
	src := benchSource(t)
	report := func(name string, extra ...string) string {
		t.Helper()
		out := filepath.Join(home, name+".json")
		args := benchArgs(t, "bench-cli-writer", append([]string{"--agents", "claude", "-p", "write out.txt", "--workdir", src,
			"--repeat", "8", "--report", "json", "-o", out}, extra...)...)
		r := invoke(t, "", args...)
		require.Contains(t, []int{0, 1}, r.code, r.stderr)
		return out
	}
	pass := report("pass", "--check", "true")
	fail := report("fail", "--check", "false")
	other := report("other", "--check", "true", "--models", "m1")

	r := invoke(t, "", "bench", "compare", pass, pass)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "no difference shown")

	r = invoke(t, "", "bench", "compare", pass, fail)
	require.Equal(t, exitAgentFailed, r.code, r.stdout)
	require.Contains(t, r.stdout, "worse: pass rate 100% → 0%")
	require.Contains(t, r.stderr, "NEW is worse")

	// Between different benches the fakes' wall times differ by noise:
	// the time limit is lifted where the verdict must not depend on it.
	r = invoke(t, "", "bench", "compare", "--report", "json", "--max-time-growth", "10000%", fail, pass)
	require.Equal(t, 0, r.code, r.stderr)
	var d bench.DiffReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
	require.Equal(t, "better", d.Rows[0].Verdict)

	r = invoke(t, "", "bench", "compare", pass, other)
	require.Equal(t, exitUsage, r.code, r.stdout)
	require.Contains(t, r.stderr, "not comparable")

	// Stored reports are found by id.
	stored, err := bench.Store{Dir: bench.StoreDir()}.List()
	require.NoError(t, err)
	require.Len(t, stored, 3)
	r = invoke(t, "", "bench", "compare", "--max-time-growth", "10000%", stored[0].ID, other)
	require.Equal(t, 0, r.code, r.stderr)
}

func TestBenchK8sJob(t *testing.T) {
	home := isolate(t)
	suite := filepath.Join(home, "suite", "hello")
	require.NoError(t, os.MkdirAll(suite, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(suite, "prompt.md"), []byte("say hello\n"), 0o644))
	planFlags := []string{"--agents", "claude,codex", "--models", "sonnet", "--tasks", "suite", "--repeat", "3",
		"--check", "test -f out.txt", "--timeout", "20m", "--parallel", "2", "--isolate", "bwrap",
		"--otlp", "http://collector.example:4318", "--otlp-content"}
	r := invoke(t, "", append(append([]string{"bench"}, planFlags...), "k8s-job", "--shards", "4", "--image", "ghcr.io/x/harness:1",
		"--parallelism", "2", "--results-claim", "bench-results", "--env-from-secret", "agent-keys", "--env-from-secret", "more-keys")...)
	require.Equal(t, 0, r.code, r.stderr)

	var job batchv1.Job
	require.NoError(t, yaml.UnmarshalStrict([]byte(r.stdout), &job), "decodes strictly: no unknown field\n%s", r.stdout)
	require.Equal(t, "batch/v1", job.APIVersion)
	require.Equal(t, "Job", job.Kind)
	require.Equal(t, batchv1.IndexedCompletion, *job.Spec.CompletionMode)
	require.Equal(t, int32(4), *job.Spec.Completions)
	require.Equal(t, int32(2), *job.Spec.Parallelism)
	pod := job.Spec.Template.Spec
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	require.Equal(t, "ghcr.io/x/harness:1", c.Image)
	require.Equal(t, []string{"harness"}, c.Command)
	require.Len(t, c.EnvFrom, 2)
	require.Equal(t, "agent-keys", c.EnvFrom[0].SecretRef.Name)
	require.Equal(t, "more-keys", c.EnvFrom[1].SecretRef.Name)
	for _, ev := range c.Env {
		require.Empty(t, ev.Value, "no value inline: %s", ev.Name)
	}
	require.Equal(t, "bench-results", pod.Volumes[0].PersistentVolumeClaim.ClaimName)
	require.Equal(t, bench.ResultsMount, c.VolumeMounts[0].MountPath)

	// The pods' arguments give the same plan (and shard I of 4).
	want := bench.Plan{}
	{
		var cl cli
		p, err := kong.New(&cl, kong.Exit(func(int) { t.Fatal("exit") }), helpVars())
		require.NoError(t, err)
		_, err = p.Parse(append([]string{"bench"}, planFlags...))
		require.NoError(t, err)
		want, err = cl.Bench.plan(&env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: os.Getenv})
		require.NoError(t, err)
	}
	require.Equal(t, want.ID()[:12], job.Labels["harness.dev/plan"])
	args := strings.ReplaceAll(strings.Join(c.Args, "\x00"), "$(JOB_COMPLETION_INDEX)", "1")
	var cl cli
	p, err := kong.New(&cl, kong.Exit(func(int) { t.Fatal("exit") }), helpVars())
	require.NoError(t, err)
	_, err = p.Parse(strings.Split(args, "\x00"))
	require.NoError(t, err, "%q", c.Args)
	got, err := cl.Bench.plan(&env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: os.Getenv})
	require.NoError(t, err)
	require.Equal(t, want.ID(), got.ID())
	require.Equal(t, "suite", cl.Bench.Tasks[len(cl.Bench.Tasks)-len("suite"):], "the suite's path")
	sh, err := cl.Bench.shard()
	require.NoError(t, err)
	require.Equal(t, bench.Shard{Index: 1, Count: 4}, sh)
	require.Equal(t, bench.ResultsMount, cl.Bench.Results)
	require.True(t, cl.Bench.ExitZero)
	require.Equal(t, "20m0s", cl.Bench.Timeout.String())
	require.Equal(t, "bwrap", cl.Bench.Isolate, "the pods run in the engine the plan names")
	require.Equal(t, "http://collector.example:4318", cl.Bench.OTLP, "the pods export where the bench would")
	require.True(t, cl.Bench.OTLPContent)
	require.Contains(t, c.Args, "suite", "a path under the current directory travels relative")

	// Without a claim, the results are on an emptyDir.
	r = invoke(t, "", append(append([]string{"bench"}, planFlags...), "k8s-job", "--shards", "2", "--image", "i")...)
	require.Equal(t, 0, r.code, r.stderr)
	job = batchv1.Job{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(r.stdout), &job))
	require.NotNil(t, job.Spec.Template.Spec.Volumes[0].EmptyDir)
	require.Equal(t, int32(2), *job.Spec.Parallelism)

	// Without --image, the image 'make image' tags for this version and
	// agents.lock ('harness version --image'), under --registry if given.
	tag := invoke(t, "", "version", "--image")
	require.Equal(t, 0, tag.code, tag.stderr)
	require.Equal(t, "harness-bench:"+version+"-"+harness.AgentsLockHash()[:12]+"\n", tag.stdout)
	for reg, want := range map[string]string{"": strings.TrimSpace(tag.stdout), "reg.example/team/": "reg.example/team/" + strings.TrimSpace(tag.stdout)} {
		r = invoke(t, "", append(append([]string{"bench"}, planFlags...), "k8s-job", "--shards", "2", "--registry", reg)...)
		require.Equal(t, 0, r.code, r.stderr)
		job = batchv1.Job{}
		require.NoError(t, yaml.UnmarshalStrict([]byte(r.stdout), &job))
		require.Equal(t, want, job.Spec.Template.Spec.Containers[0].Image)
	}
}

// The image tag holds only what a tag may: any version string gives one.
func TestBenchImageTag(t *testing.T) {
	defer func(v string) { version = v }(version)
	tagRe := regexp.MustCompile(`^harness-bench:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	for _, v := range []string{"dev", "v1.2.3-4-gabc-dirty", "1.0+build/x", "-x", ".y", strings.Repeat("v", 200), "é"} {
		version = v
		require.Regexp(t, tagRe, benchImage(), "version %q", v)
	}
}

// k8sExpand expands s as Kubernetes expands a container's command and
// args (k8s.io/kubernetes third_party/forked/golang/expansion): $(VAR)
// becomes VAR's value when VAR is defined and stays as written when not,
// $$ becomes $, and any other $ is kept (with the byte after it read as
// a rune of its own, as Kubernetes does).
func k8sExpand(s string, vars map[string]string) string {
	var b strings.Builder
	checkpoint := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			continue
		}
		b.WriteString(s[checkpoint:i])
		rest := s[i+1:]
		switch {
		case rest[0] == '$':
			b.WriteByte('$')
		case rest[0] == '(' && strings.IndexByte(rest, ')') > 0:
			end := strings.IndexByte(rest, ')')
			if v, ok := vars[rest[1:end]]; ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + rest[1:end] + ")")
			}
			i += end
		case rest[0] == '(':
			b.WriteString("$(")
		default:
			b.WriteString("$" + string(rune(rest[0])))
		}
		i++
		checkpoint = i + 1
	}
	return b.String() + s[checkpoint:]
}

func TestK8sExpandIsKubernetes(t *testing.T) {
	vars := map[string]string{"A": "x"}
	for in, want := range map[string]string{
		"$(A)": "x", "$(B)": "$(B)", "$$(A)": "$(A)", "$$$(A)": "$x", "$": "$", "a$": "a$", "$$": "$",
		"$(A": "$(A", "$A": "$A", "($(A))": "(x)", "$é": "$Ã\xa9", "$(A)$(A)": "xx", "$()": "$()",
	} {
		require.Equal(t, want, k8sExpand(in, vars), "%q", in)
	}
}

// TestBenchK8sJobArgsSurviveExpansion: whatever the plan flags hold, the
// pods see them as given, on every shard: no $(VAR) of the pod's
// environment (the completion index, a secret's key) gets into them.
func TestBenchK8sJobArgsSurviveExpansion(t *testing.T) {
	isolate(t)
	prompt := "shard $(JOB_COMPLETION_INDEX), key $(ANTHROPIC_API_KEY), $$HOME $HOME $( $é $(NOPE) ends in $"
	check := `test "$(cat out.txt)" = "$$"`
	planFlags := []string{"--agents", "claude", "--models", "m$(JOB_COMPLETION_INDEX)", "-p", prompt, "--check", check}
	const shards = 3
	r := invoke(t, "", append(append([]string{"bench"}, planFlags...), "k8s-job", "--shards", strconv.Itoa(shards), "--image", "i",
		"--harness-path", "/opt/$(ANTHROPIC_API_KEY)/harness")...)
	require.Equal(t, 0, r.code, r.stderr)
	var job batchv1.Job
	require.NoError(t, yaml.UnmarshalStrict([]byte(r.stdout), &job))
	c := job.Spec.Template.Spec.Containers[0]
	for i := range shards {
		vars := map[string]string{"JOB_COMPLETION_INDEX": strconv.Itoa(i), "ANTHROPIC_API_KEY": "sk-secret", "HOME": "/root"}
		expand := func(ss []string) []string {
			out := make([]string, len(ss))
			for j, s := range ss {
				out[j] = k8sExpand(s, vars)
			}
			return out
		}
		require.Equal(t, []string{"/opt/$(ANTHROPIC_API_KEY)/harness"}, expand(c.Command))
		args := expand(c.Args)
		require.NotContains(t, strings.Join(args, " "), "sk-secret")
		var cl cli
		p, err := kong.New(&cl, kong.Exit(func(int) { t.Fatal("exit") }), helpVars())
		require.NoError(t, err)
		_, err = p.Parse(args)
		require.NoError(t, err, "%q", args)
		require.Equal(t, prompt, cl.Bench.Prompt, "shard %d", i)
		require.Equal(t, check, cl.Bench.Check)
		require.Equal(t, []string{"m$(JOB_COMPLETION_INDEX)"}, cl.Bench.Models)
		sh, err := cl.Bench.shard()
		require.NoError(t, err)
		require.Equal(t, bench.Shard{Index: i, Count: shards}, sh, "the Job's own reference stays live")
	}
}
