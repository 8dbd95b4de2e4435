// Package conform plays the built-in scripted scenarios against an agent
// CLI as installed, through the harness binary, and holds each stream to
// what the scripted model did: the stream invariants, the exit and result
// status and error class, the answer and the work directory holding
// exactly the files the tools wrote, the tool calls, usage equal to what
// the model served, every diff replaying with git apply to the files the
// run left, no unparsed line, and no process of the run left alive.
// `harness conform` and the e2e suite both call it: one set of scenarios
// and checks.
//
// Nothing here prints; Play returns what it found.
package conform

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/mockmodel"
)

// Protocols harness drives an agent over.
const (
	CLI = "cli"
	ACP = "acp"
)

// The checks of every run, in the order of a report's columns.
const (
	CheckInvariants = "invariants" // event.CheckNDJSON: framing, order, ids, usage sum, diffs replay
	CheckStatus     = "status"     // exit status, result status, error class and HTTP status
	CheckAnswer     = "answer"     // the final text, and the work directory holding exactly the files the tools wrote
	CheckTools      = "tools"      // tool calls: count, kinds, statuses, exit codes, paths
	CheckUsage      = "usage"      // tokens equal to what the scripted model served, per call
	CheckDiffs      = "diffs"      // the file tools' diffs replay with git apply to the work directory the run left
	CheckUnparsed   = "unparsed"   // no native line the adapter did not understand
	CheckProcesses  = "processes"  // no process of the run alive after harness exits
)

// Checks are the names of the checks, in report order.
var Checks = []string{CheckInvariants, CheckStatus, CheckAnswer, CheckTools, CheckUsage, CheckDiffs, CheckUnparsed, CheckProcesses}

// Outcomes of a check.
const (
	Pass = "pass"
	Fail = "fail"
	NA   = "n/a" // the scenario has nothing this check looks at
)

// Check is the outcome of one check of one run; Detail says what failed,
// or what passed with a note (a diff the agent's data left unknown).
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// Config says what to play the scenarios against.
type Config struct {
	// Harness is the harness executable whose 'run' plays each scenario.
	Harness string
	// Agent is the agent id; Protocol is CLI (when empty) or ACP.
	Agent, Protocol string
	// Binary is the agent's executable (run --binary, a relative path
	// taken from the caller's directory); empty: the one harness finds
	// (HARNESS_AGENTS_DIR, the pinned installs, PATH) from there.
	Binary string
	// Env is the environment of the harness runs; nil: os.Environ(). Each
	// run gets its own XDG config and data directories on top, and its
	// marker (markerEnv) for the processes check.
	Env []string
	// Scratch is the directory each run's files go under; empty: the
	// system's temporary directory. Play's caller removes Run.Dir.
	Scratch string
}

func (c Config) protocol() string {
	if c.Protocol == "" {
		return CLI
	}
	return c.Protocol
}

// Run is one scenario played: what harness printed and the checks.
type Run struct {
	Agent    string `json:"agent"`
	Protocol string `json:"protocol"`
	Scenario string `json:"scenario"`
	// Version is the agent's version as the session_start reports it
	// (over ACP: the ACP adapter's), "" when unknown.
	Version string  `json:"version,omitempty"`
	Exit    int     `json:"exit"`
	Checks  []Check `json:"checks"`

	Dir     string              `json:"-"` // the run's scratch directory, for the caller to remove
	marker  string              // markerEnv=<token>, in the environment of every process of the run
	Workdir string              `json:"-"` // the agent's working directory
	Stdout  []byte              `json:"-"`
	Stderr  string              `json:"-"`
	Events  []event.Event       `json:"-"`
	Result  *event.Result       `json:"-"` // nil when the stream has no result
	Script  *mockmodel.Scenario `json:"-"`
}

// Failed reports whether any check failed.
func (r *Run) Failed() bool {
	for _, c := range r.Checks {
		if c.Status == Fail {
			return true
		}
	}
	return false
}

// Check returns the check named name.
func (r *Run) Check(name string) Check {
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	return Check{Name: name}
}

// String is the run's output, for a failing test's message.
func (r *Run) String() string {
	return fmt.Sprintf("%s %s %s: exit %d\nstderr: %s\nstdout:\n%s", r.Agent, r.Protocol, r.Scenario, r.Exit, r.Stderr, r.Stdout)
}

// ErrUnknownScenario is returned by Play for a scenario not in Scenarios.
var ErrUnknownScenario = errors.New("conform: unknown scenario")

// Play runs harness on cfg.Agent with the scripted model playing
// scenario, in a fresh directory, and checks what comes out. The error is
// for a run that could not be made at all (an unknown scenario, harness
// not executable); a run that went wrong is a Run with failed checks.
func Play(ctx context.Context, cfg Config, scenario string) (*Run, error) {
	sc, ok := lookup(scenario)
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %v)", ErrUnknownScenario, scenario, Scenarios())
	}
	dir, err := os.MkdirTemp(cfg.Scratch, "conform-"+scenario+"-")
	if err != nil {
		return nil, fmt.Errorf("conform: %w", err)
	}
	r := &Run{Agent: cfg.Agent, Protocol: cfg.protocol(), Scenario: scenario, Dir: dir, Workdir: filepath.Join(dir, "work"), marker: newMarker()}
	script, mock, err := sc.prepare(cfg.Agent, r.Workdir, dir)
	if err != nil {
		return r, err
	}
	r.Script = script
	// Budgets for a loaded machine: conform is about what the stream
	// says, not how fast (an agent's first start in a fresh home can be
	// silent for a minute when the CPU is shared).
	// The user's settings are not the scenario's: the stream is read as
	// NDJSON, with every tool allowed. An empty project file shields the
	// run from a harness.toml above the scratch directory.
	if err := os.WriteFile(filepath.Join(dir, config.ProjectFileName), []byte("# harness conform: no project settings\n"), 0o644); err != nil {
		return r, fmt.Errorf("conform: %w", err)
	}
	args := []string{"run", "--agent", cfg.Agent, "--protocol", r.Protocol, "--mock", mock, "--cwd", r.Workdir,
		"-p", "Follow the script.", "--format", "ndjson", "--permissions", config.FullAccess,
		"--no-log", "--timeout", "5m", "--kill-grace", "2s", "--idle-timeout", "2m"}
	if r.Protocol == ACP {
		// An ACP adapter may stay up after its answer: 1 s is plenty.
		args = append(args, "--linger", "1s")
	}
	if cfg.Binary != "" {
		args = append(args, "--binary", cfg.Binary)
	}
	args = append(args, sc.flags(r.Protocol)...)
	if err := r.exec(ctx, cfg, args); err != nil {
		return r, err
	}
	r.check(sc)
	return r, nil
}

// outputWait is how long harness's output is read after it exited: a
// process it left behind may hold it open. A test shortens it.
var outputWait = 30 * time.Second

// exec runs harness with args and keeps what it printed.
func (r *Run) exec(ctx context.Context, cfg Config, args []string) error {
	// Past every budget the run was given: harness ends the agent itself.
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cfg.Harness, args...)
	// Cancelled, harness ends the agent and every process it started as
	// on a user's interrupt; SIGKILL only if it does not.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = outputWait
	// harness runs in the caller's directory (the agent in --cwd), so it
	// finds the agent as the caller did: a relative --binary, the pinned
	// installs of ./.agents.
	env := cfg.Env
	if env == nil {
		env = os.Environ()
	}
	// The marker reaches every process the run starts (harness passes its
	// environment to the agent, the agent to its tools), so the processes
	// check finds one wherever it went.
	cmd.Env = append(scenarioEnv(env), "NO_COLOR=1", r.marker,
		"XDG_CONFIG_HOME="+filepath.Join(r.Dir, "config"), "XDG_DATA_HOME="+filepath.Join(r.Dir, "data"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r.Stdout, r.Stderr = out.Bytes(), errb.String()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.Exit = ee.ExitCode()
	case errors.Is(err, exec.ErrWaitDelay):
		// harness exited 0, but a process of the run holds its output:
		// the processes check names it, and the report goes on.
		r.Exit = cmd.ProcessState.ExitCode()
	case err != nil:
		return fmt.Errorf("conform: running %s: %w", cfg.Harness, err)
	}
	r.Events, _ = event.ReadAll(bytes.NewReader(r.Stdout))
	for _, ev := range r.Events {
		switch b := ev.Body.(type) {
		case *event.SessionStart:
			r.Version = b.AgentVersion
		case *event.Result:
			r.Result = b
		}
	}
	return nil
}

// markerEnv is the variable conform sets, to a value unique to the run, in
// the environment of the harness it runs: every process of the run
// inherits it, unless it empties its environment.
const markerEnv = "HARNESS_CONFORM_RUN"

// newMarker is a run's markerEnv entry, "HARNESS_CONFORM_RUN=<token>".
func newMarker() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return markerEnv + "=" + hex.EncodeToString(b[:])
}

// scenarioEnv is env without what would make a scenario's run the user's
// rather than the script's: harness's settings (HARNESS_FORMAT=text makes
// the stream unreadable, HARNESS_PERMISSIONS=read-only refuses the tools,
// HARNESS_OTLP sends the runs to the user's collector) and OpenTelemetry's
// own variables. The rest (PATH, HARNESS_AGENTS_DIR) finds the CLI.
func scenarioEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if config.IsSettingEnv(name) || strings.HasPrefix(name, "OTEL_") || name == "TRACEPARENT" || name == "TRACESTATE" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// bodies are the bodies of the run's events of type typ.
func (r *Run) bodies(typ event.Type) []event.Body {
	var out []event.Body
	for _, ev := range r.Events {
		if ev.Type == typ {
			out = append(out, ev.Body)
		}
	}
	return out
}

// ToolEnds are the run's tool_end events.
func (r *Run) ToolEnds() []*event.ToolEnd {
	var out []*event.ToolEnd
	for _, b := range r.bodies(event.TypeToolEnd) {
		out = append(out, b.(*event.ToolEnd))
	}
	return out
}

// Errors are the run's error events.
func (r *Run) Errors() []*event.Error {
	var out []*event.Error
	for _, b := range r.bodies(event.TypeError) {
		out = append(out, b.(*event.Error))
	}
	return out
}
