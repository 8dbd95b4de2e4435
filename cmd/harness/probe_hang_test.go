package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/conform"
	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/internal/fakeagent"
)

// shortProbe bounds the probes of agent binaries to d for the test.
func shortProbe(t *testing.T, d time.Duration) {
	t.Helper()
	bound := probeBound
	probeBound = d
	t.Cleanup(func() { probeBound = bound })
}

// playNothing makes a scenario played by mistake fail at once: conform
// runs os.Executable(), here this test binary, which would run every test
// again (and play again) rather than harness; as a fake agent of no such
// name it exits.
func playNothing(t *testing.T) {
	t.Setenv(fakeagent.EnvVar, "conform-plays-no-scenario")
}

// hangingCLI writes a CLI that counts its starts (a line each in the
// returned file) and then hangs.
func hangingCLI(t *testing.T, dir string) (bin, starts string) {
	t.Helper()
	bin, starts = filepath.Join(dir, "claude"), filepath.Join(dir, "starts")
	require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\necho \"$*\" >>"+starts+"\nexec sleep 300\n"), 0o755))
	return bin, starts
}

// TestCheckProbesAHangOnce: a CLI that did not answer --version is not
// asked for its --help too (another bound of waiting, two with a
// subcommand: 2 min, before, for one hang); check says the flags were not
// checked, and why.
func TestCheckProbesAHangOnce(t *testing.T) {
	home := isolate(t)
	// Long enough for the script to record its start on a loaded machine
	// (200 ms was not, in CI: no start recorded, nothing to count); the
	// test costs this bound once, or twice if check asks again.
	shortProbe(t, 2*time.Second)
	bin, starts := hangingCLI(t, home)
	r := invoke(t, "", "check", "claude", "--binary", bin)
	require.Equal(t, exitAgentFailed, r.code)
	require.Contains(t, r.stdout, "FAIL  version: "+bin+" --version did not finish within 2s\n")
	require.Contains(t, r.stdout, "FAIL  flags: not checked: "+bin+" did not answer --version\n")
	data, err := os.ReadFile(starts)
	require.NoError(t, err)
	require.Equal(t, "--version\n", string(data), "check probed the hanging CLI more than once")
}

// TestCheckHelpThatHangs: a CLI that answers --version but not --help
// is still asked, and reported as not finishing it.
func TestCheckHelpThatHangs(t *testing.T) {
	home := isolate(t)
	// Long enough for a shell script's --version on a loaded machine:
	// the --help that hangs costs the test this bound.
	shortProbe(t, 3*time.Second)
	bin := filepath.Join(home, "claude")
	require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\n[ \"$1\" = --version ] && { echo '2.1.329 (Claude Code)'; exit; }\nexec sleep 300\n"), 0o755))
	r := invoke(t, "", "check", "claude", "--binary", bin)
	require.Equal(t, exitAgentFailed, r.code)
	require.Contains(t, r.stdout, "ok    version: 2.1.329 (Claude Code)\n")
	require.Contains(t, r.stdout, "FAIL  flags: "+bin+" --help did not finish within 3s\n")
}

// TestConformCLIThatDoesNotAnswer: a CLI whose --version does not finish
// within the probe's bound is reported as not answering, by name, with
// every scenario not played (each took its 2 min idle budget, before,
// and the verdict blamed harness); the exit status is 1.
func TestConformCLIThatDoesNotAnswer(t *testing.T) {
	home := isolate(t)
	shortProbe(t, 2*time.Second) // as in TestCheckProbesAHangOnce
	playNothing(t)
	bin, starts := hangingCLI(t, home)
	start := time.Now()
	r := invoke(t, "", "conform", "--agent", "claude", "--binary", bin, "--scenario", "hang,text")
	require.Less(t, time.Since(start), 10*time.Second)
	require.Equal(t, exitAgentFailed, r.code, r.stderr)
	require.Equal(t, "claude over cli, version unknown ("+bin+")\n"+
		"claude over cli: not run: "+bin+" does not answer: --version did not finish within 2s; scenarios not played: hang, text\n", r.stdout)
	data, err := os.ReadFile(starts)
	require.NoError(t, err)
	require.Equal(t, "--version\n", string(data), "a scenario was played")

	r = invoke(t, "", "conform", "--agent", "claude", "--binary", bin, "--scenario", "hang", "-f", "json")
	require.Equal(t, exitAgentFailed, r.code, r.stderr)
	var rep struct {
		Passed  bool `json:"passed"`
		Targets []struct {
			NotRun    string            `json:"not_run"`
			Skipped   []string          `json:"skipped"`
			Scenarios []json.RawMessage `json:"scenarios"`
		} `json:"targets"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	require.False(t, rep.Passed)
	require.Len(t, rep.Targets, 1)
	require.Equal(t, bin+" does not answer: --version did not finish within 2s", rep.Targets[0].NotRun)
	require.Equal(t, []string{"hang"}, rep.Targets[0].Skipped)
	require.NotNil(t, rep.Targets[0].Scenarios)
	require.Empty(t, rep.Targets[0].Scenarios)
}

// TestConformCLIWhoseVersionFails: a CLI that cannot even say its
// version (a missing module) is not played either: its error is the
// verdict, not "harness does not read this version".
func TestConformCLIWhoseVersionFails(t *testing.T) {
	home := isolate(t)
	playNothing(t)
	bin := filepath.Join(home, "claude")
	require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\necho 'Error: Cannot find module cli.js' >&2\nexit 1\n"), 0o755))
	r := invoke(t, "", "conform", "--agent", "claude", "--binary", bin, "--scenario", "text")
	require.Equal(t, exitAgentFailed, r.code, r.stderr)
	require.Contains(t, r.stdout, "claude over cli: not run: "+bin+" --version failed: exit status 1: Error: Cannot find module cli.js; scenarios not played: text\n")
	require.NotContains(t, r.stdout, "harness does not read")
}

// TestVersionLineIsAVersion: what a binary printed is shown as its
// version only when it can be one, and a few words long: 3000 random
// bytes were shown whole, as "ok    version: ���…" (3 KB), and in
// conform's header.
func TestVersionLineIsAVersion(t *testing.T) {
	home := isolate(t)
	var garbage bytes.Buffer
	for i := range 3000 {
		// Half the bytes not UTF-8, none a newline.
		garbage.WriteByte(byte(0x80 + i*7%0x80))
		if i%2 == 0 {
			garbage.WriteByte(byte('!' + i%90))
		}
	}
	long := "2.1.329 (Claude Code) " + strings.Repeat("x", 200)
	for _, tc := range []struct {
		name, output, line, version string
	}{
		{"random-bytes", garbage.String(), "FAIL  version: BIN --version printed no version (binary output)\n", ""},
		{"no-digit", "usage: claude [options]", "FAIL  version: BIN --version printed no version: usage: claude [options]\n", ""},
		{"long", long, "ok    version: " + long[:79] + "…\n", long[:79] + "…"},
		{"a-version", "2.1.329 (Claude Code)", "ok    version: 2.1.329 (Claude Code)\n", "2.1.329 (Claude Code)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, bin := filepath.Join(home, tc.name+".out"), filepath.Join(home, tc.name)
			require.NoError(t, os.WriteFile(out, []byte(tc.output), 0o644))
			require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\ncat "+out+"\n"), 0o755))
			r := invoke(t, "", "check", "claude", "--binary", bin)
			require.Contains(t, r.stdout, strings.ReplaceAll(tc.line, "BIN", bin))
			ct := &conformTarget{Agent: "claude", Protocol: conform.CLI, Binary: bin}
			require.NoError(t, ct.probe(nil))
			require.Equal(t, tc.version, ct.Version)
			require.Empty(t, ct.NotRun)
			var hdr bytes.Buffer
			require.NoError(t, printConform(&env{Stdout: &hdr}, conformReport{Checks: conform.Checks, Targets: []*conformTarget{ct}}))
			want := "claude over cli, version " + cmpOr(tc.version, "unknown") + " (" + bin + ")\n"
			require.True(t, strings.HasPrefix(hdr.String(), want), hdr.String())
		})
	}
}
