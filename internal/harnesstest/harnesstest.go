// Package harnesstest holds the setup the harness's own test packages
// share: a test binary that is also the fake agents and a run's reaper
// (the os/exec TestMain pattern), the processes a fake reports starting
// and whether they outlived their run, the events of one type, golden
// files, and the client's side of each protocol harness serves (an ACP
// editor, MCP tool results, the serve API).
package harnesstest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/process"
)

// Main is the TestMain of a package whose tests run fake agents under the
// supervisor: see RunChild.
func Main(m *testing.M) {
	RunChild()
	ContainersConf()
	os.Exit(m.Run())
}

// ContainersConf points podman at the repository's scripts/containers.conf
// (runc, cgroupfs, no default ulimits) unless CONTAINERS_CONF is set, as
// the Makefile does: go test run alone gets the same podman.
func ContainersConf() {
	if os.Getenv("CONTAINERS_CONF") != "" {
		return
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return
	}
	conf := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "containers.conf")
	if _, err := os.Stat(conf); err == nil {
		os.Setenv("CONTAINERS_CONF", conf)
	}
}

// RunChild turns this test binary into what it was started as, when it
// was re-executed as a run's reaper or as a fake agent (it then exits);
// it returns in the test binary itself. The reaper comes first: a reaper
// carries the fake's variable on to the agent it starts.
func RunChild() {
	process.MaybeReap()
	fakeagent.MaybeRun()
}

// Process is a live process: its pid, working directory and arguments
// (empty where /proc does not show them).
type Process struct {
	PID  int
	Cwd  string
	Args []string
}

// Processes are the live (not zombie) processes on the machine.
func Processes() []Process {
	ents, _ := os.ReadDir("/proc")
	var out []Process
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !process.Alive(pid) {
			continue
		}
		dir := "/proc/" + e.Name()
		p := Process{PID: pid}
		p.Cwd, _ = os.Readlink(dir + "/cwd")
		if b, err := os.ReadFile(dir + "/cmdline"); err == nil && len(b) > 0 {
			p.Args = strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		}
		out = append(out, p)
	}
	return out
}

// Children are the processes fake agents reported starting (their
// "fake_child" lines), noted from the runs' native lines, possibly by
// several runs at once.
type Children struct {
	mu   sync.Mutex
	pids []int
}

// Note records the pid of line when it is a fake_child line.
func (c *Children) Note(line []byte) {
	if gjson.GetBytes(line, "subtype").String() != "fake_child" {
		return
	}
	c.mu.Lock()
	c.pids = append(c.pids, int(gjson.GetBytes(line, "pid").Int()))
	c.mu.Unlock()
}

// PIDs are the pids noted so far.
func (c *Children) PIDs() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.pids...)
}

// RequireGone fails the test if a noted process is still alive: every
// process of a run ends with it.
func (c *Children) RequireGone(t testing.TB) {
	t.Helper()
	for _, pid := range c.PIDs() {
		require.False(t, process.Alive(pid), "process %d of a run is still alive", pid)
	}
}

// Bodies are the bodies of the events of type typ in evs, in order.
func Bodies(evs []event.Event, typ event.Type) []event.Body {
	var out []event.Body
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev.Body)
		}
	}
	return out
}

// ProcsNamed lists the /proc entries of the processes whose command line
// is cmdline (its arguments joined by spaces).
func ProcsNamed(cmdline string) []string {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var out []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.TrimRight(strings.ReplaceAll(string(b), "\x00", " "), " ") == cmdline {
			out = append(out, p)
		}
	}
	return out
}

// ContainersUnder lists the containers harness made (podman's label
// harness.run) that bind a directory under dir: those of one test.
func ContainersUnder(t testing.TB, dir string) []string {
	t.Helper()
	out, err := exec.Command("podman", "ps", "-a", "--filter", "label=harness.run", "--format", "{{.Names}}").Output()
	require.NoError(t, err)
	var ours []string
	for _, name := range strings.Fields(string(out)) {
		src, err := exec.Command("podman", "inspect", "--format", "{{range .Mounts}}{{.Source}}\n{{end}}", name).Output()
		if err == nil && strings.Contains("\n"+string(src), "\n"+dir+"/") {
			ours = append(ours, name)
		}
	}
	return ours
}

// ReparseParts is what a live session's stream and its reparse share
// (sessions reparse, harness.ParseOptions.Session): each event as JSON
// without its times, run id and what only a process has (pid, argv, cwd,
// exit).
func ReparseParts(t *testing.T, stream []byte) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(stream)), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		for _, k := range []string{"run", "ts", "duration_ms", "pid", "argv", "cwd", "pty", "exit_code", "signal", "lingered_after_done"} {
			delete(m, k)
		}
		b, err := json.Marshal(m)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	return out
}
