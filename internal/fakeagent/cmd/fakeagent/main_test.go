package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentharness/harness/internal/fakeagent"
)

// The test binary stands in for the built fakeagent when $runMain is set.
const runMain = "FAKEAGENT_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMain) != "" {
		main()
		return
	}
	os.Exit(m.Run())
}

// command runs this binary as fakeagent with args and extra environment.
func command(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(append(os.Environ(), runMain+"=1"), env...)
	return cmd
}

func TestLatencyStampFromEnvIgnoresArgv(t *testing.T) {
	// As harness starts it: the agent's own argv, the fake named by the variable.
	before := fakeagent.MonotonicNS()
	out, err := command(t, []string{CmdEnv + "=latency-stamp 3 1ms"}, "-p", "--output-format", "stream-json").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 5 || !strings.Contains(lines[4], `"type":"result"`) {
		t.Fatalf("want init, 3 stamped lines, result; got:\n%s", out)
	}
	var last int64
	for i, l := range lines[1:4] {
		_, rest, ok := strings.Cut(l, fakeagent.StampPrefix)
		if !ok {
			t.Fatalf("line %d has no stamp: %s", i+2, l)
		}
		var seq, ns int64
		if _, err := fmtSscan(rest, &seq, &ns); err != nil || seq != int64(i+1) || ns < before || ns <= last {
			t.Errorf("line %d stamp %q: seq %d ns %d (before %d, previous %d)", i+2, rest, seq, ns, before, last)
		}
		last = ns
	}
}

func TestPrintLinesByName(t *testing.T) {
	out, err := command(t, nil, "print-lines", "4").Output()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "\n"); n != 6 {
		t.Errorf("want init + 4 lines + result, got %d lines:\n%s", n, out)
	}
}

func TestUnknownFake(t *testing.T) {
	for _, args := range [][]string{nil, {"no-such-fake"}} {
		err := command(t, nil, args...).Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Errorf("fakeagent %v: %v, want exit status 2", args, err)
		}
	}
}

func TestIgnoreSigtermTree(t *testing.T) {
	cmd := command(t, nil, "ignore-sigterm-tree", "2")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	defer syscall.Kill(-pgid, syscall.SIGKILL)
	sc := bufio.NewScanner(out)
	var children int
	for children < 2 && sc.Scan() {
		if strings.Contains(sc.Text(), `"fake_child"`) {
			children++
		}
	}
	if children != 2 {
		t.Fatalf("saw %d children announced, want 2", children)
	}
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("the fake exited on SIGTERM: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the fake did not die on SIGKILL")
	}
}

// fmtSscan reads "SEQ:NS" (the rest of the line after the stamp prefix).
func fmtSscan(s string, seq, ns *int64) (int, error) {
	return fmt.Sscanf(strings.Replace(s, ":", " ", 1), "%d %d", seq, ns)
}
