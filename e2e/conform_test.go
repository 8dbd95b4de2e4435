package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/conform"
	"github.com/agentharness/harness/internal/execfile"
)

// acpReportsUsage are the agents whose ACP answer carries the turn's
// exact token totals; conform accepts usage absent over ACP (exact or
// absent), the suite holds these to reporting it.
var acpReportsUsage = map[string]bool{"claude": true, "codex": true}

// knownTransportDifferences are the facets (agent/scenario/facet) on
// which the CLI and ACP runs of a scenario may still differ, each with
// why. Every entry is a defect or a limit of an agent's ACP side: shrink
// the list as they are fixed. A listed pair that agrees fails the suite,
// so the list cannot go stale.
var knownTransportDifferences = map[string]string{
	"opencode/error/errors":      conform.KnownNoHTTPStatus["opencode/acp"],
	"opencode/overloaded/errors": conform.KnownNoHTTPStatus["opencode/acp"],
}

// TestConform plays every conform scenario against every agent over the
// CLI and over ACP, holds each run to conform's checks, and holds the two
// runs of each scenario to the same truth (conform.Compare): the same
// answer, tool count, kinds, files, statuses, error classes, and usage
// where both report it.
func TestConform(t *testing.T) {
	for _, agent := range agents {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			runs := map[string]*conform.Run{} // scenario/protocol
			for _, protocol := range []string{conform.CLI, conform.ACP} {
				t.Run(protocol, func(t *testing.T) {
					if protocol == conform.ACP {
						bin := acpBinary(t, agent)
						_, err := os.Stat(filepath.Join(agentsDir, "node_modules", ".bin", bin))
						require.NoError(t, err, "run 'make agents': %s is pinned in agents.lock", bin)
					}
					for _, scenario := range conform.Scenarios() {
						t.Run(scenario, func(t *testing.T) {
							r := play(t, agent, protocol, scenario)
							mu.Lock()
							runs[scenario+"/"+protocol] = r
							mu.Unlock()
						})
					}
				})
			}
			t.Run("cli-vs-acp", func(t *testing.T) {
				for _, scenario := range conform.Scenarios() {
					t.Run(scenario, func(t *testing.T) {
						cli, acp := runs[scenario+"/"+conform.CLI], runs[scenario+"/"+conform.ACP]
						require.NotNil(t, cli, "the cli run did not happen")
						require.NotNil(t, acp, "the acp run did not happen")
						requireSameTruth(t, agent, scenario, cli, acp)
					})
				}
			})
		})
	}
}

// play runs one conform scenario and fails the test with every check
// that fails, and the run's output; the run is returned all the same,
// for the comparison.
func play(t *testing.T, agent, protocol, scenario string) *conform.Run {
	t.Helper()
	r, err := conform.Play(context.Background(), conform.Config{Harness: harnessBin, Agent: agent, Protocol: protocol,
		Env: harnessEnv(t), Scratch: t.TempDir()}, scenario)
	require.NoError(t, err)
	adaptertest.CheckStream(t, r.Stdout) // the JSON Schema, on top of conform's invariants
	for _, c := range r.Checks {
		switch {
		case c.Status == conform.Fail:
			t.Errorf("%s: %s", c.Name, c.Detail)
		case c.Detail != "":
			t.Logf("%s: %s", c.Name, c.Detail)
		}
	}
	if protocol == conform.ACP {
		if acpReportsUsage[agent] && r.Check(conform.CheckUsage).Detail != "" {
			t.Errorf("%s reports its usage over ACP: %s", agent, r.Check(conform.CheckUsage).Detail)
		}
		if (scenario == "text" || scenario == "hang") && (r.Result == nil || r.Result.SessionID == "") {
			// The session was set up before the prompt answered or hung.
			t.Errorf("no session id")
		}
	}
	if t.Failed() {
		t.Logf("%s", r)
	}
	return r
}

// requireSameTruth fails on every facet the two runs differ on that
// knownTransportDifferences does not list, and on every listed facet
// they agree on.
func requireSameTruth(t *testing.T, agent, scenario string, cli, acp *conform.Run) {
	t.Helper()
	differ := map[string]bool{}
	for _, d := range conform.Compare(cli, acp) {
		key := agent + "/" + scenario + "/" + d.Facet
		differ[key] = true
		if why, ok := knownTransportDifferences[key]; ok {
			t.Logf("known transport difference %s (%s): cli %s, acp %s", d.Facet, why, d.A, d.B)
			continue
		}
		t.Errorf("cli and acp differ on %s: cli %s, acp %s", d.Facet, d.A, d.B)
	}
	for key := range knownTransportDifferences {
		if strings.HasPrefix(key, agent+"/"+scenario+"/") && !differ[key] {
			t.Errorf("%s is listed as a known transport difference but the runs agree: remove it", key)
		}
	}
}

// TestConformCommand is the user's command on the real Claude Code:
// 'harness conform --agent claude --protocol cli' exits 0, and its JSON
// names every check of each scenario played. Three scenarios (tools, an
// edit's diff, an HTTP error) stand for all: TestConform plays every
// scenario through the same conform.Play, and ten more real runs here
// would cost a minute of make test for nothing it does not check.
func TestConformCommand(t *testing.T) {
	t.Parallel()
	played := []string{"tool", "edit-existing", "error"}
	args := []string{"conform", "--agent", "claude", "--protocol", "cli", "-f", "json"}
	for _, s := range played {
		args = append(args, "--scenario", s)
	}
	out := harnessOutput(t, t.TempDir(), 20*time.Minute, args...)
	var rep struct {
		Passed  bool
		Checks  []string
		Targets []struct {
			Agent, Protocol, Version string
			Passed                   bool
			Scenarios                []struct {
				Scenario string
				Checks   []conform.Check
			}
		}
	}
	require.NoError(t, json.Unmarshal(out, &rep), "%s", out)
	require.True(t, rep.Passed)
	require.Equal(t, conform.Checks, rep.Checks)
	require.Len(t, rep.Targets, 1)
	tg := rep.Targets[0]
	require.Equal(t, "claude", tg.Agent)
	require.Equal(t, conform.CLI, tg.Protocol)
	require.NotEmpty(t, tg.Version)
	require.Len(t, tg.Scenarios, len(played))
	for i, s := range tg.Scenarios {
		require.Equal(t, played[i], s.Scenario)
		var names []string
		for _, c := range s.Checks {
			names = append(names, c.Name)
			require.Contains(t, []string{conform.Pass, conform.NA}, c.Status, "%s %s: %s", s.Scenario, c.Name, c.Detail)
		}
		require.Equal(t, conform.Checks, names, s.Scenario)
	}
}

// TestConformIgnoresTheUsersSettings: conform answers about the CLI, not
// about the user's settings. HARNESS_FORMAT=text (which made every check
// fail with "harness does not read this version"), read-only permissions,
// a dead OTLP collector and a harness.toml above the scratch directory
// asking for text change nothing: the tool scenario's checks all hold.
func TestConformIgnoresTheUsersSettings(t *testing.T) {
	t.Parallel()
	above := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(above, "harness.toml"), []byte("format = \"text\"\npermissions = \"read-only\"\n"), 0o644))
	scratch := filepath.Join(above, "scratch")
	require.NoError(t, os.Mkdir(scratch, 0o755))
	env := harnessEnv(t, "HARNESS_FORMAT=text", "HARNESS_PERMISSIONS=read-only", "HARNESS_OTLP=http://127.0.0.1:9",
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9")
	r, err := conform.Play(context.Background(), conform.Config{Harness: harnessBin, Agent: "claude", Protocol: conform.CLI,
		Env: env, Scratch: scratch}, "tool")
	require.NoError(t, err)
	for _, c := range r.Checks {
		require.NotEqual(t, conform.Fail, c.Status, "%s: %s\n%s", c.Name, c.Detail, r)
	}
	require.NotEmpty(t, r.Events)
}

// TestConformSeesAFileNoToolReports: a CLI that writes a file no tool
// call reports (a wrapper that runs the real Claude Code, then writes
// extra.txt in its directory) fails answer and diffs, which hold the
// whole work directory the run left. Before, both read only the files the
// scenario and the diffs named, and every check held.
func TestConformSeesAFileNoToolReports(t *testing.T) {
	t.Parallel()
	wrapper := filepath.Join(t.TempDir(), "claude")
	claude := filepath.Join(agentsDir, "node_modules", ".bin", "claude")
	require.NoError(t, execfile.Write(wrapper, []byte("#!/bin/sh\n'"+claude+"' \"$@\"\nstatus=$?\necho sneaky >extra.txt\nexit $status\n"), 0o755))
	r, err := conform.Play(context.Background(), conform.Config{Harness: harnessBin, Agent: "claude", Protocol: conform.CLI,
		Binary: wrapper, Env: harnessEnv(t), Scratch: t.TempDir()}, "edit-new")
	require.NoError(t, err)
	for _, c := range r.Checks {
		switch c.Name {
		case conform.CheckAnswer:
			require.Equal(t, conform.Fail, c.Status, "%s", r)
			require.Equal(t, `extra.txt: the run left "sneaky\n", which no tool of the scenario writes`, c.Detail)
		case conform.CheckDiffs:
			require.Equal(t, conform.Fail, c.Status, "%s", r)
			require.Equal(t, "extra.txt: the run left it, the diffs do not make it", c.Detail)
		default:
			require.NotEqual(t, conform.Fail, c.Status, "%s: %s\n%s", c.Name, c.Detail, r)
		}
	}
}

// TestConformCodexACPWithCacheUnderTmp: the scripted model's homes live in
// the user's cache directory, and with XDG_CACHE_HOME under /tmp Codex's
// home was under the temporary directory, where Codex refuses to make its
// apply_patch helper: over ACP it edited nothing, and conform blamed the
// version. The codex wiring's TMPDIR keeps CODEX_HOME out of it.
func TestConformCodexACPWithCacheUnderTmp(t *testing.T) {
	t.Parallel()
	env := harnessEnv(t, "XDG_CACHE_HOME="+filepath.Join(t.TempDir(), "cache")) // under os.TempDir(), as Codex's temporary directory
	r, err := conform.Play(context.Background(), conform.Config{Harness: harnessBin, Agent: "codex", Protocol: conform.ACP,
		Env: env, Scratch: t.TempDir()}, "edit-new")
	require.NoError(t, err)
	for _, c := range r.Checks {
		require.NotEqual(t, conform.Fail, c.Status, "%s: %s\n%s", c.Name, c.Detail, r)
	}
}

// TestOpenCodeMockLeavesNoLibrary: OpenCode writes its embedded native
// library (5.4 MB) to the temporary directory at every start and never
// removes it; a --mock run (tests, conform, bench smoke) kept one for
// each run in /tmp. It now goes in the mock's home, removed with it.
func TestOpenCodeMockLeavesNoLibrary(t *testing.T) {
	t.Parallel()
	tmp, work := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, harnessBin, "run", "--agent", "opencode", "--mock", "text", "-p", "hi", "--no-log")
	cmd.Dir, cmd.Env = work, harnessEnv(t, "TMPDIR="+tmp)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), `"type":"result"`)
	left, err := filepath.Glob(filepath.Join(tmp, ".*.so"))
	require.NoError(t, err)
	require.Empty(t, left, "OpenCode's library was left in TMPDIR")
}
