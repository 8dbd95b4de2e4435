// Command perf measures harness's cost in the pipe — parse throughput
// against jq and cat, added latency, wrap overhead, peak memory, kill
// latency, start-up — side by side on this machine, runs the in-process
// go benchmarks, and writes the figures to BENCHMARKS.md (make bench):
//
//	go run ./internal/perf [-smoke] [-run REGEXP] [-o BENCHMARKS.md]
//
// -run measures only the steps whose name matches (see steps: throughput,
// latency, wrap, sessionlog, otlp, session, idle, parallel, liveview, memory, growth, kill, isolate,
// startup, machine, gobench) and prints the report without writing BENCHMARKS.md unless -o
// is given: one row can be measured again without the ten minutes of the
// rest.
//
// It needs jq and hyperfine on $PATH, the agents of make agents and the
// Jaeger of make jaeger ($HARNESS_JAEGER) for the --otlp rows, and
// installs nothing itself. Built
// binaries and generated streams live in a temporary directory, removed
// at the end. -smoke uses tiny inputs and few runs, to prove in CI that
// the measurement still works; its figures are not comparable.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"
)

// sizes are the knobs that -smoke turns down.
type sizes struct {
	Stream         string // benchgen -size
	Long           string // benchgen -size of the long stream of parseGrowth (4 × Stream)
	HFRuns         int    // hyperfine runs for throughput
	LatLines       int
	LatRuns        int
	WrapLines      int
	WrapRuns       int
	FloodStdout    int64
	FloodStderr    int64
	HugeLine       int64
	OneBlock       int64 // one streamed content block (deltas of a single message)
	OpenCall       int64 // the input of each of 60 open tool calls
	DeepLevels     int64 // how deeply one tool input nests
	KillRuns       int
	StartRuns      int
	FloodPairs     int           // runs with and without the session log
	Idle           time.Duration // the silence of the idle run
	IdlePairs      int           // idle runs, each with a run of no silence
	LiveLines      int           // lines of each live-view run, 1 ms apart
	LiveRuns       int
	IsoRuns        int   // runs of each isolate bench
	IsoBenches     int   // hyperfine runs of each
	OTLPCalls      int64 // tool calls of each --otlp run
	OTLPPairs      int   // runs with and without --otlp
	OTLPAgentPairs int   // the same for each real agent: their CPU moves by ±4 % run to run
	// More pairs for an agent whose runs are quick, up to OTLPAgentMax,
	// while they fit in OTLPAgentBudget: claude's ratio sits near the
	// target, where the median of 20 pairs read either side of it.
	OTLPAgentMax    int
	OTLPAgentBudget time.Duration
	SessTurns       int // turns of the live session (prompt latency, RSS after 20 and after all)
	Parallel        int // runs started at once (parallelRuns)
	ParallelLines   int // lines each of them prints
	ParallelRounds  int
	GoBenchFlags    []string
	// The machine rows: a file this big written, and fresh memory touched,
	// right after memory was freed and after MachineRest of rest.
	MachineWrite  int64
	MachineRest   time.Duration
	MachineRounds int
}

var full = sizes{
	Stream: "200MB", Long: "800MB", HFRuns: 5, LatLines: 10000, LatRuns: 7, WrapLines: 10000, WrapRuns: 20,
	FloodStdout: 1 << 30, FloodStderr: 100 << 20, HugeLine: 100 << 20, OneBlock: 256 << 20, KillRuns: 3, StartRuns: 40,
	OpenCall: 4_000_000, DeepLevels: 8_000_000,
	FloodPairs: 7, Idle: time.Minute, IdlePairs: 3, LiveLines: 3000, LiveRuns: 3, IsoRuns: 5, IsoBenches: 5,
	OTLPCalls: 2000, OTLPPairs: 10, OTLPAgentPairs: 20, OTLPAgentMax: 60, OTLPAgentBudget: time.Minute, SessTurns: 200,
	Parallel: 64, ParallelLines: 1000, ParallelRounds: 3,
	MachineWrite: 1 << 30, MachineRest: 5 * time.Second, MachineRounds: 3,
}

var smoke = sizes{
	Stream: "3MB", Long: "12MB", HFRuns: 2, LatLines: 1000, LatRuns: 1, WrapLines: 1000, WrapRuns: 3,
	FloodStdout: 8 << 20, FloodStderr: 2 << 20, HugeLine: 4 << 20, OneBlock: 4 << 20, KillRuns: 1, StartRuns: 5,
	OpenCall: 100_000, DeepLevels: 100_000,
	FloodPairs: 1, Idle: 2 * time.Second, IdlePairs: 1, LiveLines: 300, LiveRuns: 1, IsoRuns: 1, IsoBenches: 1,
	OTLPCalls: 50, OTLPPairs: 1, OTLPAgentPairs: 1, OTLPAgentMax: 1, SessTurns: 40,
	Parallel: 4, ParallelLines: 100, ParallelRounds: 1,
	GoBenchFlags: []string{"-benchtime=1x"},
	MachineWrite: 64 << 20, MachineRest: 500 * time.Millisecond, MachineRounds: 1,
}

// bench holds what every measurement needs.
type bench struct {
	root    string // module root
	tmp     string
	harness string // built binary
	fake    string // built fakeagent
	env     []string
	sz      sizes
	notes   []string
	log     func(format string, args ...any)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == peakRSSArg {
		os.Exit(peakRSSChild(os.Args[2:]))
	}
	smokeFlag := flag.Bool("smoke", false, "tiny inputs and few runs (CI): proves the measurement works")
	out := flag.String("o", "", "write the report here (default BENCHMARKS.md, or only stdout with -smoke or -run)")
	only := flag.String("run", "", "measure only the steps whose name matches this regexp")
	flag.Parse()
	if err := run(*smokeFlag, *only, *out); err != nil {
		fmt.Fprintln(os.Stderr, "perf:", err)
		os.Exit(1)
	}
}

func run(smokeRun bool, only, out string) error {
	pick, err := regexp.Compile(only)
	if err != nil {
		return fmt.Errorf("-run: %v", err)
	}
	for _, tool := range []string{"jq", "hyperfine"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is not installed (apt-get install -y jq hyperfine)", tool)
		}
	}
	if out == "" && !smokeRun && only == "" {
		out = "BENCHMARKS.md"
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "harness-perf-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	start := time.Now()
	b := &bench{root: root, tmp: tmp, sz: full, log: func(f string, a ...any) {
		fmt.Fprintf(os.Stderr, "perf [%5.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(f, a...))
	}}
	if smokeRun {
		b.sz = smoke
	}
	m := describeMachine(root, smokeRun)
	if err := b.build(); err != nil {
		return err
	}
	var figs []row
	for _, st := range b.steps() {
		if pick.MatchString(st.name) {
			figs = append(figs, st.measure()...)
		}
	}
	var benches []goBench
	var benchErr error
	if pick.MatchString("gobench") {
		b.log("go test -bench")
		benches, benchErr = b.goBenchmarks()
	}

	var buf bytes.Buffer
	writeReport(&buf, m, figs, benches, benchErr, b.notes)
	os.Stdout.Write(buf.Bytes())
	if out != "" {
		if !filepath.IsAbs(out) {
			out = filepath.Join(root, out)
		}
		if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
			return err
		}
		b.log("wrote %s", out)
	}
	if benchErr != nil {
		return fmt.Errorf("go test -bench: %v", firstLine(benchErr.Error()))
	}
	for _, f := range figs {
		if strings.HasPrefix(f.Value, "failed:") {
			return fmt.Errorf("%s: %s", f.Figure, f.Value)
		}
	}
	return nil
}

// step is one measurement of the report, by the name -run selects it by.
type step struct {
	name    string
	measure func() []row
}

// steps are the measurements in the order of the report.
func (b *bench) steps() []step {
	one := func(f func() row) func() []row { return func() []row { return []row{f()} } }
	return []step{
		{"throughput", b.throughput},
		{"latency", b.latency},
		{"wrap", one(b.wrapOverhead)},
		{"sessionlog", b.sessionLog},
		{"otlp", func() []row { return append([]row{b.otlpOverhead()}, b.otlpRealAgents()...) }},
		{"session", b.session},
		{"idle", one(b.idleRun)},
		{"parallel", one(b.parallelRuns)},
		{"liveview", b.liveView},
		{"memory", b.memory},
		{"growth", b.parseGrowth},
		{"kill", one(b.killLatency)},
		{"isolate", b.isolation},
		{"startup", func() []row { rows := b.startup(); b.initNote(); return rows }},
		{"machine", b.machine},
	}
}

// build compiles harness (into bin/, as make build does), the fake agent
// and benchgen, and sets up an isolated environment for the runs.
func (b *bench) build() error {
	b.harness = filepath.Join(b.root, "bin", "harness")
	b.fake = filepath.Join(b.tmp, "fakeagent")
	for _, t := range [][2]string{
		{b.harness, "./cmd/harness"},
		{b.fake, "./internal/fakeagent/cmd/fakeagent"},
		{filepath.Join(b.tmp, "benchgen"), "./adapters/internal/benchgen"},
	} {
		b.log("go build %s", t[1])
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", t[0], t[1])
		cmd.Dir = b.root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as make build does
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", t[1], err, out)
		}
	}
	home := filepath.Join(b.tmp, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "HARNESS_"), strings.HasPrefix(k, "XDG_"), k == "HOME", k == "FAKEAGENT_CMD":
		default:
			b.env = append(b.env, kv)
		}
	}
	b.env = append(b.env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local/share"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	return nil
}

// fakeEnv is the environment that makes the fake binary run fake spec.
func (b *bench) fakeEnv(spec string) []string {
	return append(append([]string(nil), b.env...), "FAKEAGENT_CMD="+spec)
}

// harnessRun is the argv of `harness run` with the fake as the agent.
func (b *bench) harnessRun(extra ...string) []string {
	return append([]string{b.harness, "run", "--no-log", "--agent", "claude", "--binary", b.fake, "-p", "bench"}, extra...)
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("run from inside the harness module")
	}
	return filepath.Dir(mod), nil
}

func describeMachine(root string, smokeRun bool) machine {
	m := machine{Date: time.Now().UTC().Format("2006-01-02 15:04 MST"), NProc: runtime.NumCPU(), Smoke: smokeRun,
		CPU: "unknown CPU", Load: "unknown", GoVersion: runtime.Version(), Commit: "unknown"}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for l := range strings.Lines(string(data)) {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) >= 3 {
			m.Load = strings.Join(f[:3], " ")
		}
	}
	if out, err := exec.Command("go", "env", "GOVERSION").Output(); err == nil {
		m.GoVersion = strings.TrimSpace(string(out))
	}
	cmd := exec.Command("git", "describe", "--always", "--dirty")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
	}
	return m
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
