package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/atif/atiftest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// The CLI's behaviour is pinned by the scripts of testdata/script: each
// runs the real harness binary (this test binary, copied onto $PATH as
// "harness" by testscript.Main) and the fake agents (the same binary as
// "fakeagent"), and checks stdout, stderr, files and the exit status.
//
// In a script:
//
//	harness ARGS...            must exit 0
//	status N harness ARGS...   must exit N (any command, not only harness)
//	fakeagent ARGS...          runs the fake named by $FAKEAGENT_CMD ("NAME ARGS...")
//	                           with those ARGS, then its own: pass --binary fakeagent and
//	                           --env FAKEAGENT_CMD=NAME (or set it with env) to stand
//	                           in for any agent; `replay FILE [STATUS]` prints a
//	                           native capture, so it stands in for every agent
//	normalize SRC DST          SRC (a file, stdout or stderr) with run ids, times,
//	                           durations, pids and $WORK made stable, written to DST
//	checkstream SRC            SRC is an event stream that keeps every invariant
//	                           (event.CheckNDJSON) and matches the JSON Schema
//
// With $SCRIPT_SIGINT_AFTER set, harness sends itself SIGINT once a line
// holding that text has been written to its stdout: an interrupt at a
// known point of the run (the script cannot tell from outside when the
// run has reached it), delivered as a real signal to the real process.
//
// Every script gets HOME, XDG_* and the working directory in $WORK, and a
// PATH of the harness binaries ($HARNESSBIN), $WORK/bin and the system
// directories, so nothing reads or writes the user's files or finds a real
// agent; $REPO is the repository, to compare with its files.
//
// go test -update rewrites the golden files of the scripts (the second
// argument of a failing cmp); read the diff before committing it.

// scriptCommands are the programs scripts run, as testscript.Main installs
// them on $PATH.
var scriptCommands = map[string]func(){
	"harness":   scriptHarness,
	"fakeagent": scriptFakeAgent,
}

// sigintAfter and sigquitAfter name the variables that make harness send
// itself SIGINT or SIGQUIT once a line of its output holds their value.
const (
	sigintAfter  = "SCRIPT_SIGINT_AFTER"
	sigquitAfter = "SCRIPT_SIGQUIT_AFTER"
)

func scriptHarness() {
	endRunsOnQuit() // as main does
	endRunsOnBrokenPipe()
	var stdout io.Writer = os.Stdout
	for name, sig := range map[string]syscall.Signal{sigintAfter: syscall.SIGINT, sigquitAfter: syscall.SIGQUIT} {
		if marker := os.Getenv(name); marker != "" {
			os.Unsetenv(name)
			stdout = &interruptOnLine{w: stdout, marker: marker, fire: func() { syscall.Kill(os.Getpid(), sig) }}
		}
	}
	exit(run(os.Args[1:], os.Stdin, stdout, os.Stderr))
}

// interruptOnLine passes writes to w and calls fire once, after the first
// write holding marker.
type interruptOnLine struct {
	w      io.Writer
	marker string
	fire   func()
	fired  bool
}

func (s *interruptOnLine) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if !s.fired && bytes.Contains(p, []byte(s.marker)) {
		s.fired = true
		s.fire()
	}
	return n, err
}

// fakeAgentCmd names the fake, and its arguments, that fakeagent runs.
const fakeAgentCmd = "FAKEAGENT_CMD"

// scriptFakeAgent runs the fake of $FAKEAGENT_CMD with the arguments
// there followed by its own (the argv harness built for the agent), as
// internal/fakeagent/cmd/fakeagent does with its own ignored.
func scriptFakeAgent() {
	spec := strings.Fields(os.Getenv(fakeAgentCmd))
	if len(spec) == 0 {
		fmt.Fprintf(os.Stderr, "fakeagent: set $%s to \"NAME ARGS...\"\n", fakeAgentCmd)
		os.Exit(2)
	}
	os.Setenv(fakeagent.EnvVar, spec[0])
	os.Args = append(append([]string{os.Args[0]}, spec[1:]...), os.Args[1:]...)
	fakeagent.MaybeRun()
}

func init() {
	fakeagent.Register("replay", replay)
}

// replay FILE [STATUS]: prints FILE (a native capture) to stdout and exits
// with STATUS (default 0, also when the argument is not a number: it is
// then the agent's argv).
func replay(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "replay: no file")
		return 2
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "replay:", err)
		return 2
	}
	os.Stdout.Write(data)
	if len(args) > 1 {
		if n, err := strconv.Atoi(args[1]); err == nil {
			return n
		}
	}
	return 0
}

func TestScripts(t *testing.T) {
	sch := adaptertest.Schema(t)
	testscript.Run(t, testscript.Params{
		Dir:           filepath.Join("testdata", "script"),
		UpdateScripts: updating(),
		Setup:         scriptSetup,
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"status":      cmdStatus,
			"normalize":   cmdNormalize,
			"checkstream": func(ts *testscript.TestScript, neg bool, args []string) { cmdCheckStream(ts, neg, args, sch) },
			"checkatif":   cmdCheckATIF,
		},
	})
}

// scriptSetup gives the script a home of its own and a PATH with no agent
// on it.
func scriptSetup(e *testscript.Env) error {
	work := e.WorkDir
	bin := filepath.SplitList(os.Getenv("PATH"))[0] // testscript.Main's, holding harness and fakeagent
	e.Setenv("HOME", filepath.Join(work, "home"))
	e.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "home", ".config"))
	e.Setenv("XDG_DATA_HOME", filepath.Join(work, "home", ".local", "share"))
	e.Setenv("XDG_CACHE_HOME", filepath.Join(work, "home", ".cache"))
	e.Setenv("XDG_STATE_HOME", filepath.Join(work, "home", ".local", "state"))
	e.Setenv("PATH", strings.Join([]string{bin, filepath.Join(work, "bin"), "/usr/bin", "/bin"}, string(filepath.ListSeparator)))
	e.Setenv("HARNESSBIN", bin)
	e.Setenv("REPO", filepath.Join(pkgDir, "..", ".."))
	// A race-enabled binary sleeps 1 s at exit by default: every harness
	// and fake of a script would.
	e.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	return os.MkdirAll(filepath.Join(work, "home"), 0o755)
}

// cmdStatus: status N COMMAND [ARGS...] runs COMMAND and fails unless it
// exits with status N; its stdout and stderr are kept for the next checks.
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! status")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: status N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("status: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// The parts of the output that change from run to run, and what they
// become.
var unstable = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`run_[0-9A-HJKMNP-TV-Z]{26}`), "run_ID"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "TIME"},
	{regexp.MustCompile(`"(pid|ts|\w+_ms|\w+_ms_ago)":( ?)\d+`), `"$1":${2}N`},
	// The harness process a session meta names (pid, start, namespace).
	{regexp.MustCompile(`"harness": \{[^{}]*\}`), `"harness": PROC`},
	// Measured durations of the text transcript (summary, tool lines) and
	// of interrupt and idle messages.
	{regexp.MustCompile(`(· |elapsed=|no output for )\d[\dhm.]*m?s\b`), "${1}DUR"},
	{regexp.MustCompile(`(?m)^(  [✓⊘✗] .*\] \S+( \(exit -?\d+\))?) \d[\dhm.]*m?s\b`), "$1 DUR"},
}

// anyDuration is a duration as formatDuration and time.Duration print it.
var anyDuration = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s)\b|\b\d+m(\d+(\.\d+)?s)?\b|\b\d+h(\d+m)?(\d+(\.\d+)?s)?\b`)

// cmdNormalize: normalize [-durations] [-csv] SRC DST writes SRC (a file,
// stdout or stderr) to DST with what changes between runs made stable:
// run ids, RFC 3339 times, pids, "ts" and "*_ms" JSON numbers, measured
// durations of the text transcript, the paths of $WORK and of the
// harness binary. -durations also makes every duration DUR (a report's
// timings); -csv makes every column whose header ends in _ms N.
func cmdNormalize(ts *testscript.TestScript, neg bool, args []string) {
	durations, csvMS := false, false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-durations":
			durations = true
		case "-csv":
			csvMS = true
		default:
			ts.Fatalf("normalize: unknown flag %s", args[0])
		}
		args = args[1:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: normalize [-durations] [-csv] src dst")
	}
	s := ts.ReadFile(args[0])
	bin := ts.Getenv("HARNESSBIN")
	s = strings.ReplaceAll(s, bin, "$HARNESSBIN")
	// Where harness looks for agents beside its own binary (bin/..).
	s = strings.ReplaceAll(s, filepath.Dir(bin), "$HARNESSBIN/..")
	s = strings.ReplaceAll(s, ts.Getenv("WORK"), "$WORK")
	for _, u := range unstable {
		s = u.re.ReplaceAllString(s, u.with)
	}
	if durations {
		s = anyDuration.ReplaceAllString(s, "DUR")
	}
	if csvMS {
		s = csvTimes(ts, s)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(s), 0o644))
}

// csvTimes replaces the values of the columns named *_ms with N.
func csvTimes(ts *testscript.TestScript, s string) string {
	rows, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	ts.Check(err)
	if len(rows) == 0 {
		return s
	}
	for i, h := range rows[0] {
		if !strings.HasSuffix(h, "_ms") {
			continue
		}
		for _, row := range rows[1:] {
			if row[i] != "" {
				row[i] = "N"
			}
		}
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	ts.Check(w.WriteAll(rows))
	return b.String()
}

// cmdCheckStream: checkstream SRC holds the event stream SRC to the
// invariants and the schema.
func cmdCheckStream(ts *testscript.TestScript, neg bool, args []string, sch *jsonschema.Schema) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: checkstream src")
	}
	data := []byte(ts.ReadFile(args[0]))
	ts.Check(event.CheckNDJSON(data))
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
		if err == nil {
			err = sch.Validate(doc)
		}
		if err != nil {
			ts.Fatalf("%s line %d: %v", args[0], i+1, err)
		}
	}
}

// cmdCheckATIF: checkatif src holds a trajectory file to the ATIF schema
// and to atif.Validate.
func cmdCheckATIF(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: checkatif src")
	}
	if _, err := atiftest.Validate([]byte(ts.ReadFile(args[0]))); err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
}
