// Package e2e runs the real agent CLIs (installed by 'make agents') through
// the built harness binary against the scripted model on 127.0.0.1. The
// scenarios and their checks are package conform's, the ones 'harness
// conform' plays (the stream invariants, status and error class, answer
// and files, tool calls, exact usage per model call, diffs that git apply
// takes, no unparsed line, no process of the run left alive); here every
// agent plays them over both transports, and the two runs of a scenario
// are held to each other. The rest are what conform does not cover:
// timeouts mid-tool, read-only over ACP, harness acp, bench and MCP.
//
// Nothing here is skipped: a missing CLI fails the suite and says why.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	hlib "github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/internal/privtmp"
	"github.com/agentharness/harness/mockmodel"
)

// agents are the CLIs the suite runs for real (harnesstest.MockAgents).
var agents = harnesstest.MockAgents()

// acpBinary is the binary of the agent's ACP command (its table row's
// ACP.Command), installed by scripts/agents.sh from agents.lock.
func acpBinary(t *testing.T, agent string) string {
	a, err := hlib.Lookup(agent)
	require.NoError(t, err)
	require.NotNil(t, a.ACP, "%s has no ACP command", agent)
	return a.ACP.Command[0]
}

var (
	harnessBin string
	agentsDir  string
	// cacheDir is the suite's XDG_CACHE_HOME, in the user's cache (not
	// under /tmp, as the user's is not), removed at the end: the
	// scripted model's homes a run --mock keeps for the next run's
	// resume (mockmodel.PointKept) are made there, not in the user's.
	cacheDir string
)

func TestMain(m *testing.M) {
	os.Exit(setup(m))
}

func setup(m *testing.M) int {
	harnesstest.ContainersConf()
	root, err := filepath.Abs("..")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	agentsDir = os.Getenv("HARNESS_AGENTS_DIR")
	if agentsDir == "" {
		agentsDir = filepath.Join(root, ".agents")
	}
	var missing []string
	for _, a := range agents {
		if _, err := os.Stat(filepath.Join(agentsDir, "node_modules", ".bin", a)); err != nil {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: the real agent CLIs %v are not installed in %s: run 'make agents' (make test does)\n", missing, agentsDir)
		return 1
	}
	dir, err := os.MkdirTemp("", "harness-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	userCache, err := os.UserCacheDir()
	if err == nil {
		err = os.MkdirAll(userCache, 0o700)
	}
	if err == nil {
		cacheDir, err = os.MkdirTemp(userCache, "harness-e2e-")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer privtmp.RemoveAll(cacheDir)
	harnessBin = filepath.Join(dir, "harness")
	// Built as make build builds it (static, -trimpath): the same
	// compiled packages, so a fresh machine compiles them once, not
	// twice (66 s of CPU on 2 cores).
	build := exec.Command("go", "build", "-trimpath", "-o", harnessBin, "./cmd/harness")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building harness: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// outcome is one harness run.
type outcome struct {
	agent   string
	code    int
	stdout  []byte
	stderr  string
	events  []event.Event
	result  *event.Result
	workdir string
}

// harness runs the built binary with a private config and session dir.
func harness(t *testing.T, workdir string, args ...string) outcome {
	t.Helper()
	return harnessWithEnv(t, workdir, nil, args...)
}

// harnessWithEnv is harness with env (KEY=VALUE) added to its environment.
func harnessWithEnv(t *testing.T, workdir string, env []string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, harnessBin, args...)
	cmd.Dir = workdir
	cmd.Env = harnessEnv(t, append([]string{"NO_COLOR=1"}, env...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	o := outcome{stdout: out.Bytes(), stderr: errb.String(), workdir: workdir}
	if ee, ok := err.(*exec.ExitError); ok {
		o.code = ee.ExitCode()
	} else {
		require.NoError(t, err, "harness did not run: %s", errb.String())
	}
	adaptertest.CheckStream(t, o.stdout)
	o.events, err = event.ReadAll(bytes.NewReader(o.stdout))
	require.NoError(t, err)
	o.result = o.events[len(o.events)-1].Body.(*event.Result)
	requireNoSurvivor(t, workdir)
	return o
}

// harnessOutput runs the built binary in dir, with harnessEnv, within
// timeout, and returns its stdout; t fails unless it exits 0.
func harnessOutput(t *testing.T, dir string, timeout time.Duration, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, harnessBin, args...)
	cmd.Dir = dir
	cmd.Env = harnessEnv(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "stderr: %s\nstdout: %s", stderr.String(), out)
	return out
}

// harnessEnv is the environment of a harness command: the installed
// agents, a private config and session dir, and extra.
func harnessEnv(t *testing.T, extra ...string) []string {
	home := t.TempDir()
	return append(append(os.Environ(), "HARNESS_AGENTS_DIR="+agentsDir, "XDG_CACHE_HOME="+cacheDir,
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_DATA_HOME="+filepath.Join(home, "data")), extra...)
}

// requireNoSurvivor fails if any process still has its working directory
// in the run's directory: the agent, its node wrapper, or a tool command it
// started in a session of its own.
func requireNoSurvivor(t *testing.T, workdir string) {
	t.Helper()
	for _, p := range harnesstest.Processes() {
		if p.Cwd == workdir || strings.HasPrefix(p.Cwd, workdir+"/") {
			t.Errorf("process %d (%s) of the run is still alive", p.PID, strings.Join(p.Args, " "))
		}
	}
}

func (o outcome) all(typ event.Type) []event.Body { return harnesstest.Bodies(o.events, typ) }

func (o outcome) toolEnds() []*event.ToolEnd {
	var out []*event.ToolEnd
	for _, b := range o.all(event.TypeToolEnd) {
		out = append(out, b.(*event.ToolEnd))
	}
	return out
}

func (o outcome) String() string {
	return fmt.Sprintf("exit %d\nstderr: %s\nstdout:\n%s", o.code, o.stderr, o.stdout)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err, "the agent's tool should have written %s", path)
	return string(b)
}

// run starts agent on the scripted model playing scenario in a fresh
// directory, with small budgets and a TMPDIR of its own. The idle budget
// is 90 s: OpenCode has printed nothing for over 30 s while it started on
// a loaded machine (make test runs this package beside cmd/harness and
// bench).
func run(t *testing.T, agent, scenario string, extra ...string) outcome {
	t.Helper()
	workdir, tmp := t.TempDir(), t.TempDir()
	args := append([]string{"run", "--agent", agent, "--mock", scenario, "--cwd", workdir,
		"-p", "Follow the script.", "--idle-timeout", "90s", "--timeout", "2m", "--kill-grace", "2s"}, extra...)
	o := harnessWithEnv(t, workdir, []string{"TMPDIR=" + tmp}, args...)
	o.agent = agent
	if agent == "opencode" {
		// OpenCode writes its native library (5.4 MB) to its temporary
		// directory at every start and never removes it: the run gives
		// it one of its own, gone with the run (adapters.Agent.PrivateTmp).
		entries, err := os.ReadDir(tmp)
		require.NoError(t, err)
		for _, e := range entries {
			t.Errorf("the run left %s in the user's TMPDIR", e.Name())
		}
	}
	return o
}

// TestMidToolTimeout: the tool never ends by itself and runs in a
// session of its own (Codex, OpenCode and Gemini do that), out of reach of
// a group kill. Once the tool's budget has passed, silence ends the run:
// timed from the tool's start, not the agent's, and before Codex's own
// 10 s command timeout.
func TestMidToolTimeout(t *testing.T) {
	for _, agent := range agents {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			// The idle budget also bounds the CLI's start: Gemini's printed
			// nothing in 6 s beside the other agents under CI's load. Codex
			// ends a command itself after 10 s and goes on: it keeps 6 s.
			idle := "15s"
			if agent == "codex" {
				idle = "6s"
			}
			o := run(t, agent, midToolScenario(t), "--tool-timeout", "1s", "--idle-timeout", idle)
			requireIdleTimeout(t, o, "what the agent said before its tool call is not an answer")
			// OpenCode reports a tool only once it completes; the others
			// announce it, and its end is the agent's own (Claude ends its
			// tool on SIGTERM) or the harness's.
			if agent != "opencode" {
				require.NotEmpty(t, o.all(event.TypeToolStart), "%s", o)
				require.NotEmpty(t, o.toolEnds(), "%s", o)
			}
		})
	}
}

// requireIdleTimeout holds o to a run the idle budget ended: exit status
// 124, an idle_timeout error, and no answer (why says why not).
func requireIdleTimeout(t *testing.T, o outcome, why string) {
	t.Helper()
	require.Equal(t, 124, o.code, "%s", o)
	require.Equal(t, event.ResultTimeout, o.result.Status)
	var codes []string
	for _, b := range o.all(event.TypeError) {
		codes = append(codes, b.(*event.Error).Code)
	}
	require.Contains(t, codes, event.ErrIdleTimeout)
	require.Empty(t, o.result.Text, "%s\n%s", why, o)
}

// midToolScenario writes a scenario whose tool never finishes by itself.
// Claude's Bash refuses a leading "sleep N" with more after it, so the
// command is a timeout around a tail that never ends.
func midToolScenario(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "midtool.toml")
	require.NoError(t, os.WriteFile(path, []byte(`name = "midtool"
[[turn]]
text = ["Running", " it."]
usage = { input = 120, output = 25 }
[[turn.tool]]
kind = "shell"
command = "timeout 300 tail -f /dev/null; echo done > out.txt"
[[turn]]
text = ["never reached"]
usage = { input = 120, output = 25 }
`), 0o644))
	return path
}

// TestMockDemo is the README's first command, as a test: the text
// transcript of a real agent on the scripted model.
func TestMockDemoTranscript(t *testing.T) {
	t.Parallel()
	workdir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, harnessBin, "run", "--no-log", "--agent", "claude", "--mock", "tool", "-f", "text", "-p", "make out.txt")
	cmd.Dir = workdir
	cmd.Env = harnessEnv(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "✓ Bash [shell] ok")
	require.Contains(t, string(out), mockmodel.ToolAnswer)
	require.Contains(t, string(out), "— success")
	var probe json.RawMessage
	require.Error(t, json.Unmarshal(out, &probe), "text output is for people, not JSON")
}

// TestBenchRealAgents is the offline bench: every real CLI on the
// same task, each in its own tree, checked by a verifier.
func TestBenchRealAgents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := harnessOutput(t, dir, 4*time.Minute, "bench", "--agents", strings.Join(agents, ","), "--mock", "tool",
		"-p", "Create out.txt with the shell.", "--check", "test -f out.txt", "--report", "json", "--no-progress",
		"--parallel", "2", "--idle-timeout", "90s", "--timeout", "2m")
	var rep struct {
		Runs []struct {
			Agent, Status, Log string
			Check              struct{ Passed bool }
		}
	}
	require.NoError(t, json.Unmarshal(out, &rep), "%s", out)
	require.Len(t, rep.Runs, len(agents))
	for _, r := range rep.Runs {
		require.Equal(t, event.ResultSuccess, r.Status, r.Agent)
		require.True(t, r.Check.Passed, r.Agent)
		require.FileExists(t, r.Log)
	}
	_, err := os.Stat(filepath.Join(dir, "out.txt"))
	require.True(t, os.IsNotExist(err), "the agents worked in their own trees, not in the source")
}

// TestBenchHarborIsolated: real Claude Code and Codex on a fixture Harbor
// task, each run in a bwrap sandbox or a podman container, the scripted
// model making them write /app/hello.txt with their shell tool: the
// verifier passes only where the tool ran with the workspace at /app, in
// the sandbox or the container, reaching the model on the host.
func TestBenchHarborIsolated(t *testing.T) {
	t.Parallel()
	task, err := filepath.Abs("../bench/testdata/harbor/create-file")
	require.NoError(t, err)
	scenario := filepath.Join(t.TempDir(), "hello.toml")
	require.NoError(t, os.WriteFile(scenario, []byte(`name = "hello"
[[turn]]
text = ["Writing the file."]
[[turn.tool]]
kind = "shell"
command = "echo 'Hello, world!' > /app/hello.txt"
[[turn]]
text = ["Done."]
`), 0o644))
	for _, engine := range []string{"bwrap", "podman"} {
		out := harnessOutput(t, t.TempDir(), 6*time.Minute, "bench", "--tasks", task, "--agents", "claude,codex",
			"--mock", scenario, "--isolate", engine, "--report", "json", "--no-progress", "--parallel", "2",
			"--idle-timeout", "60s")
		var rep struct {
			Runs []struct {
				Agent, Status string
				ToolCalls     int `json:"tool_calls"`
				Check         struct{ Passed bool }
			}
		}
		require.NoError(t, json.Unmarshal(out, &rep), "%s", out)
		require.Len(t, rep.Runs, 2)
		for _, r := range rep.Runs {
			require.Equal(t, event.ResultSuccess, r.Status, "%s %s", engine, r.Agent)
			require.Equal(t, 1, r.ToolCalls, "%s %s", engine, r.Agent)
			require.True(t, r.Check.Passed, "%s %s: the shell tool ran inside", engine, r.Agent)
		}
	}
}

// TestMCPDelegation: real Claude Code, on the scripted model, is given
// 'harness mcp' as an MCP server and calls run_agent to delegate to real
// Codex (on a scripted model too); the delegated result comes back into
// Claude's stream.
func TestMCPDelegation(t *testing.T) {
	t.Parallel()
	caller, delegate := t.TempDir(), t.TempDir()
	scenario := filepath.Join(t.TempDir(), "delegate.toml")
	require.NoError(t, os.WriteFile(scenario, []byte(fmt.Sprintf(`name = "delegate"
[[turn]]
text = ["Delegating to codex."]
usage = { input = 120, output = 25 }
[[turn.tool]]
kind = "mcp__harness__run_agent"
args = { agent = "codex", prompt = "Create out.txt with the shell.", cwd = %q, wait = "turn" }
[[turn]]
text = ["Codex finished the job."]
usage = { input = 120, output = 25 }
`, delegate)), 0o644))
	mcpConfig, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"harness": map[string]any{
		"command": harnessBin, "args": []string{"mcp", "--mock", "tool", "--no-log", "--root", delegate},
		"env": map[string]string{"HARNESS_AGENTS_DIR": agentsDir, "XDG_CONFIG_HOME": t.TempDir()},
	}}})
	require.NoError(t, err)
	o := harness(t, caller, "run", "--agent", "claude", "--mock", scenario, "--cwd", caller, "--no-log",
		"-p", "Delegate the task.", "--idle-timeout", "60s", "--timeout", "3m", "--", "--mcp-config", string(mcpConfig))
	require.Equal(t, 0, o.code, "%s", o)
	ends := o.toolEnds()
	require.Len(t, ends, 1, "%s", o)
	require.Equal(t, "mcp__harness__run_agent", ends[0].Name)
	require.Equal(t, event.KindMCP, ends[0].Kind)
	require.Equal(t, event.StatusOK, ends[0].Status, "%s", o)
	require.Contains(t, ends[0].Output, mockmodel.ToolAnswer, "the delegated agent's answer reaches the caller")
	require.Equal(t, "Codex finished the job.", o.result.Text)
	require.Equal(t, "hello-from-tool\n", readFile(t, filepath.Join(delegate, "out.txt")))
	requireNoSurvivor(t, delegate)
}
