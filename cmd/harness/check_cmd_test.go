package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/execfile"
)

// TestCheckNamesConformOnVersionDrift: 'harness check' says when the
// installed CLI is not the version agents.lock pins, and names 'harness
// conform' (on the binary checked) as the way to find out whether harness
// still reads it; the pinned version gets no such line.
func TestCheckNamesConformOnVersionDrift(t *testing.T) {
	home := isolate(t)
	a, err := harness.Lookup("claude")
	require.NoError(t, err)
	pin := harness.Pin(a.Info.NPMPackage)
	require.NotEmpty(t, pin)
	for _, tc := range []struct {
		version string
		drift   bool
	}{{pin + " (Claude Code)", false}, {"0.0.1 (Claude Code)", true}} {
		bin := filepath.Join(home, "claude")
		require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\necho '"+tc.version+"'\n"), 0o755))
		out := invoke(t, "", "check", "claude", "--binary", bin).stdout
		require.Contains(t, out, "ok    version: "+tc.version+"\n")
		// conform must play the binary checked, not the one it would find.
		warn := "warn  version: not the pinned " + pin + " (agents.lock): run 'harness conform --agent claude --binary " + bin + "' to check harness still reads it exactly\n"
		if tc.drift {
			require.Contains(t, out, warn)
		} else {
			require.NotContains(t, out, "warn  version")
		}
	}
}

func TestHasVersion(t *testing.T) {
	for _, tc := range []struct {
		line, version string
		want          bool
	}{
		{"2.1.329 (Claude Code)", "2.1.329", true},
		{"codex-cli 0.169.0", "0.169.0", true},
		{"0.61.0", "0.61.0", true},
		{"v1.18.33", "1.18.33", true},
		{"2.1.3290 (Claude Code)", "2.1.329", false},
		{"codex-cli 0.169.0-alpha", "0.169.0", false},
		{"", "1.0.0", false},
	} {
		require.Equal(t, tc.want, hasVersion(tc.line, tc.version), "%q %q", tc.line, tc.version)
	}
}

// TestCheckSaysWhenTheCLIDidNotAnswer: a CLI still running at the probe's
// bound is reported as not finishing in time, not as printing nothing
// (which reads as a broken install), and check fails.
func TestCheckSaysWhenTheCLIDidNotAnswer(t *testing.T) {
	home := isolate(t)
	bound := probeBound
	probeBound = 200 * time.Millisecond // the CLI sleeps far longer
	t.Cleanup(func() { probeBound = bound })
	bin := filepath.Join(home, "claude")
	require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755))
	r := invoke(t, "", "check", "claude", "--binary", bin)
	require.Equal(t, exitAgentFailed, r.code)
	require.Contains(t, r.stdout, "FAIL  version: "+bin+" --version did not finish within 200ms\n")
	require.Contains(t, r.stdout, "FAIL  flags: not checked: "+bin+" did not answer --version\n")
	require.NotContains(t, r.stdout, "printed nothing")
}

// TestCheckProbeLeavesNothing: a CLI script that starts its real program
// without exec and hangs: at the probe's bound the program is ended too,
// not only the script (it outlived check before).
func TestCheckProbeLeavesNothing(t *testing.T) {
	home := isolate(t)
	bound := probeBound
	probeBound = 200 * time.Millisecond
	t.Cleanup(func() { probeBound = bound })
	bin, pids := filepath.Join(home, "claude"), filepath.Join(home, "pids")
	require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\nsleep 300 &\necho $! >>"+pids+"\nwait\n"), 0o755))
	r := invoke(t, "", "check", "claude", "--binary", bin)
	require.Equal(t, exitAgentFailed, r.code)
	data, err := os.ReadFile(pids)
	require.NoError(t, err)
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, 5*time.Second, 10*time.Millisecond,
			"the CLI's child %d outlived check", pid)
	}
}

// TestCheckInterruptedEndsTheProbe: a Ctrl-C while a CLI hangs ends
// check at once (exit 130) and the CLI with everything it started: in a
// process group of its own, the CLI no longer gets the terminal's signal.
func TestCheckInterruptedEndsTheProbe(t *testing.T) {
	home := isolate(t)
	bin, pids := filepath.Join(home, "claude"), filepath.Join(home, "pids")
	require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\nsleep 300 &\necho $! >"+pids+"\nwait\n"), 0o755))
	done := make(chan result, 1)
	go func() { done <- invoke(t, "", "check", "claude", "--binary", bin) }()
	require.Eventually(t, func() bool { data, _ := os.ReadFile(pids); return len(data) > 0 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT)) // the probe's handler has it: it is running
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("check did not stop at the interrupt")
	}
	require.Equal(t, exitInterrupted, r.code, r.stderr)
	data, err := os.ReadFile(pids)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, 5*time.Second, 10*time.Millisecond, "the CLI's child outlived check")
}

// TestCheckVersionIsStdout: the version is the CLI's stdout, not a
// warning it prints on stderr first (codex with its home under /tmp).
func TestCheckVersionIsStdout(t *testing.T) {
	home := isolate(t)
	bin := filepath.Join(home, "codex")
	require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\necho 'WARNING: proceeding, even though we could not create PATH aliases' >&2\necho 'codex-cli 0.169.0'\n"), 0o755))
	out := invoke(t, "", "check", "codex", "--binary", bin).stdout
	require.Contains(t, out, "ok    version: codex-cli 0.169.0\n")
}

// TestCheckVersionThatFails: a CLI whose --version exits non-zero (a
// missing module, a node too old) is broken: its error is not reported as
// its version ("ok    version: Error: …" and a drift warning naming
// conform, before).
func TestCheckVersionThatFails(t *testing.T) {
	home := isolate(t)
	bin := filepath.Join(home, "claude")
	require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\necho 'Error: Cannot find module cli.js' >&2\nexit 1\n"), 0o755))
	r := invoke(t, "", "check", "claude", "--binary", bin)
	require.Equal(t, exitAgentFailed, r.code)
	require.Contains(t, r.stdout, "FAIL  version: "+bin+" --version: exit status 1: Error: Cannot find module cli.js\n")
	require.NotContains(t, r.stdout, "ok    version")
	require.NotContains(t, r.stdout, "warn  version")
}

// TestCheckUsesTheConfiguration: check looks at what a run would use,
// the configuration's [agents.NAME] binary and the credentials of its env
// table (by name: the value is never printed). Before, the agent a run
// started was "not installed" (127) and its key "none … is set".
func TestCheckUsesTheConfiguration(t *testing.T) {
	a, err := harness.Lookup("claude")
	require.NoError(t, err)
	dir := t.TempDir()
	bin := filepath.Join(dir, "my-claude")
	help := strings.Join(a.Info.Flags, "\n")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\nif [ \"$1\" = --version ]; then echo '"+harness.Pin(a.Info.NPMPackage)+
		" (Claude Code)'; else echo '"+help+"'; fi\n"), 0o755))
	const secret = "sk-ant-from-the-config-0123456789"
	isolateWith(t, fmt.Sprintf("[agents.claude]\nbinary = %q\nenv = { ANTHROPIC_API_KEY = %q }\n", bin, secret))
	for _, k := range a.Info.CredentialEnv {
		t.Setenv(k, "")
	}
	r := invoke(t, "", "check", "claude")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "ok    binary: "+bin+"\n")
	require.Contains(t, r.stdout, "ok    credentials: ANTHROPIC_API_KEY set\n")
	require.NotContains(t, r.stdout+r.stderr, secret)
}

// TestCheckAgentWithNothingToCheck: nop (sh) has no version, credentials
// or flags of its own: check says so, not "version: sh: Illegal option"
// and "none of  is set".
func TestCheckAgentWithNothingToCheck(t *testing.T) {
	isolate(t)
	r := invoke(t, "", "check", "nop")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Regexp(t, `^ok    binary: \S+/sh\nok    nop needs nothing else\n$`, r.stdout)
	// The oracle's command needs a solution script; check needs none.
	r = invoke(t, "", "check", "oracle")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Regexp(t, `^ok    binary: \S+/bash\nok    oracle needs nothing else\n$`, r.stdout)
}

// TestCheckTakesAgentAsRunDoes: the agent is the argument, or --agent
// (-a) as run and conform take it; neither, or two different ones, is a
// usage error (exit 2) with one line.
func TestCheckTakesAgentAsRunDoes(t *testing.T) {
	isolate(t)
	want := invoke(t, "", "check", "nop")
	require.Equal(t, 0, want.code, want.stdout+want.stderr)
	for _, args := range [][]string{{"--agent", "nop"}, {"-a", "nop"}, {"nop", "--agent", "nop"}} {
		r := invoke(t, "", append([]string{"check"}, args...)...)
		require.Equal(t, want, r, "%v", args)
	}
	for args, msg := range map[string]string{
		"":                "harness: check: which agent? give its name (harness check claude)\n",
		"nop --agent bad": "harness: check: one agent at a time: \"nop\" and --agent \"bad\"\n",
	} {
		r := invoke(t, "", append([]string{"check"}, strings.Fields(args)...)...)
		require.Equal(t, 2, r.code, "%q: %s", args, r.stderr)
		require.Equal(t, msg, r.stderr, "%q", args)
		require.Empty(t, r.stdout)
	}
}
