package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/conform"
	"github.com/agentharness/harness/internal/ansi"
)

// conformCmd plays the built-in scenarios against agents as installed.
type conformCmd struct {
	Agent    string   `short:"a" help:"Agent to check: ${agents}, or all (every installed agent the scripted model can drive)." default:"all"`
	Protocol string   `help:"Transport: cli, acp or all." enum:"cli,acp,all" default:"cli"`
	Binary   string   `help:"Path of the agent's executable (one agent, one protocol)."`
	Scenario []string `help:"Scenario to play (repeatable; default: all of ${scenarios})." placeholder:"S" sep:"none"`
	Format   string   `short:"f" help:"Output: text (a table) or json." enum:"text,json" default:"text"`
}

// conformTarget is one agent over one protocol, as installed.
type conformTarget struct {
	Agent    string         `json:"agent"`
	Protocol string         `json:"protocol"`
	Version  string         `json:"version,omitempty"`
	Binary   string         `json:"binary"`
	Pinned   string         `json:"pinned,omitempty"` // over the CLI: the version agents.lock pins, harness's measured one
	Passed   bool           `json:"passed"`
	NotRun   string         `json:"not_run,omitempty"` // why no scenario was played: the binary's --version hung or failed
	Skipped  []string       `json:"skipped,omitempty"` // the scenarios not played, with NotRun
	Runs     []*conform.Run `json:"scenarios"`
	npm      string         // the CLI's npm package
}

// conformReport is the JSON output.
type conformReport struct {
	Passed  bool             `json:"passed"`
	Checks  []string         `json:"checks"`
	Targets []*conformTarget `json:"targets"`
}

// Run plays each scenario against each agent and protocol through this
// harness binary. Exit 0 when every check holds, 1 when one fails, 2 on
// bad usage, 127 when a named agent is not installed.
func (c *conformCmd) Run(e *env) error {
	// The flag's values are split here, not by kong: kong reads
	// --scenario '' as no value at all, which would play every scenario.
	var scenarios []string
	for _, v := range c.Scenario {
		scenarios = append(scenarios, strings.Split(v, ",")...)
	}
	if len(c.Scenario) == 0 {
		scenarios = conform.Scenarios()
	}
	for i, s := range scenarios {
		if !slices.Contains(conform.Scenarios(), s) {
			return usageErrorf("conform: unknown scenario %q (known: %s)", s, strings.Join(conform.Scenarios(), ", "))
		}
		if slices.Contains(scenarios[:i], s) {
			// Played twice, it would be two rows of one name.
			return usageErrorf("conform: scenario %q given twice", s)
		}
	}
	targets, err := c.targets(e)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("conform: %w", err)
	}
	// A signal ends the run in play and conform, which then removes its
	// scratch directory: SIGHUP too (the terminal closed), whose default
	// action would leave both behind. Caught before the directory exists.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	scratch, err := os.MkdirTemp("", "harness-conform-")
	if err != nil {
		return fmt.Errorf("conform: %w", err)
	}
	defer os.RemoveAll(scratch)
	rep := conformReport{Passed: true, Checks: conform.Checks, Targets: targets}
	for _, t := range targets {
		t.Passed, t.Runs = true, []*conform.Run{}
		if t.NotRun != "" {
			// A binary (CLI or ACP adapter) that does not answer
			// --version would fail every scenario on its idle budget
			// (2 min each) and blame harness.
			t.Passed, rep.Passed, t.Skipped = false, false, scenarios
			continue
		}
		cfg := conform.Config{Harness: self, Agent: t.Agent, Protocol: t.Protocol, Binary: c.Binary, Scratch: scratch}
		for _, s := range scenarios {
			r, err := conform.Play(ctx, cfg, s)
			if ctx.Err() != nil {
				// Before err: a signal as the run started fails its
				// start with the context's error, which is no fault.
				return withStatus(exitInterrupted, errors.New("conform: interrupted"))
			}
			if err != nil {
				return err
			}
			os.RemoveAll(r.Dir)
			if t.Version == "" || t.Protocol == conform.ACP {
				t.Version = cmpOr(r.Version, t.Version)
			}
			t.Runs = append(t.Runs, r)
			if r.Failed() {
				t.Passed, rep.Passed = false, false
			}
		}
	}
	if c.Format == "json" {
		if err := writeJSON(e, rep); err != nil {
			return err
		}
	} else if err := printConform(e, rep); err != nil {
		return err
	}
	if !rep.Passed {
		return withStatus(exitAgentFailed, nil)
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// targets are the agents and protocols to play against: a named agent
// must be installed (else 127) and drivable by the scripted model (else
// 2); "all" takes every agent that is both, and says on stderr which it
// leaves out.
func (c *conformCmd) targets(e *env) ([]*conformTarget, error) {
	protocols := []string{c.Protocol}
	if c.Protocol == "all" {
		protocols = []string{conform.CLI, conform.ACP}
	}
	all := c.Agent == "all"
	agents := []string{c.Agent}
	if all {
		agents = harness.AgentNames()
	}
	if c.Binary != "" && (all || len(protocols) > 1) {
		return nil, usageErrorf("conform: --binary needs one agent and one protocol")
	}
	var out []*conformTarget
	// Gemini and opencode are one binary over both protocols: a hanging
	// one asked twice would cost two probe bounds for one answer.
	probed := map[string]versionAnswer{}
	for _, name := range agents {
		a, err := harness.Lookup(name)
		if err != nil {
			return nil, usageErrorf("conform: %w", err)
		}
		if a.Mock == nil {
			if all {
				continue
			}
			return nil, usageErrorf("conform: %s cannot be pointed at the scripted model", a.Name())
		}
		for _, p := range protocols {
			cmd, err := harness.Prepare(harness.Task{Agent: a.Name(), Prompt: "-", Binary: c.Binary, Protocol: p, SearchDirs: agentDirs(e)})
			if err != nil {
				if all {
					continue // no such transport for this agent
				}
				return nil, usageErrorf("conform: %w", err)
			}
			if cmd.NotInstalled != nil {
				if all {
					fmt.Fprintf(e.Stderr, "harness: conform: %s over %s left out: %v\n", a.Name(), p, cmd.NotInstalled)
					continue
				}
				return nil, withStatus(exitNotFound, fmt.Errorf("conform: %w", cmd.NotInstalled))
			}
			t := &conformTarget{Agent: a.Name(), Protocol: p, Binary: cmd.Binary}
			// Over ACP the binary is the ACP server's (claude-agent-acp,
			// codex-acp, or gemini's and opencode's CLI): each answers
			// --version, so a hanging one is told as a hanging CLI is.
			if err := t.probe(probed); err != nil {
				return nil, err
			}
			if p == conform.CLI {
				t.Pinned, t.npm = harness.Pin(a.Info.NPMPackage), a.Info.NPMPackage
			}
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, withStatus(exitNotFound, errors.New("conform: no agent the scripted model can drive is installed"))
	}
	return out, nil
}

// versionAnswer is what a binary answered to --version (probeVersion).
type versionAnswer struct {
	out string
	err error
}

// probe asks the target's binary its --version, unless seen holds its
// answer already (one binary, gemini's or opencode's, serves both
// protocols), and keeps the answer there (a nil seen keeps nothing):
// Version when it prints one (isVersion) over the CLI (over ACP the
// header's version is the run's session_start's), NotRun when it does
// not answer within probeBound or fails, over either protocol. The error
// is errProbeInterrupted only: the caller stops (exit 130).
func (t *conformTarget) probe(seen map[string]versionAnswer) error {
	a, ok := seen[t.Binary]
	if !ok {
		a.out, a.err = probeVersion(t.Binary)
		if seen != nil {
			seen[t.Binary] = a
		}
	}
	v, err := a.out, a.err
	switch {
	case errors.Is(err, errProbeInterrupted):
		return err
	case errors.Is(err, errProbeTimeout):
		t.NotRun = fmt.Sprintf("%s does not answer: --version did not finish within %s", t.Binary, probeBound)
	case err != nil:
		if v != "" {
			v = ": " + cutVersion(v)
		}
		t.NotRun = fmt.Sprintf("%s --version failed: %v%s", t.Binary, err, v)
	case isVersion(v) && t.Protocol == conform.CLI:
		t.Version = cutVersion(v)
	}
	return nil
}

// printConform prints one table per agent and protocol (scenario ×
// check, the version in the header), then each failure and note.
func printConform(e *env, rep conformReport) error {
	for i, t := range rep.Targets {
		if i > 0 {
			fmt.Fprintln(e.Stdout)
		}
		fmt.Fprintf(e.Stdout, "%s over %s, version %s (%s)\n", t.Agent, t.Protocol, cmpOr(t.Version, "unknown"), t.Binary)
		if t.NotRun != "" {
			// Nothing was played: no table, and no word on harness.
			fmt.Fprintf(e.Stdout, "%s over %s: not run: %s; scenarios not played: %s\n", t.Agent, t.Protocol, ansi.TermSafe(t.NotRun), strings.Join(t.Skipped, ", "))
			continue
		}
		tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SCENARIO\t"+strings.ToUpper(strings.Join(rep.Checks, "\t")))
		var notes []string
		for _, r := range t.Runs {
			cells := []string{r.Scenario}
			for _, name := range rep.Checks {
				ch := r.Check(name)
				cells = append(cells, map[string]string{conform.Pass: "ok", conform.Fail: "FAIL", conform.NA: "-"}[ch.Status])
				switch {
				case ch.Status == conform.Fail:
					notes = append(notes, fmt.Sprintf("FAIL  %s %s: %s", r.Scenario, name, ansi.TermSafe(ch.Detail)))
				case ch.Detail != "":
					notes = append(notes, fmt.Sprintf("note  %s %s: %s", r.Scenario, name, ansi.TermSafe(ch.Detail)))
				}
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, n := range notes {
			fmt.Fprintln(e.Stdout, n)
		}
		verdict := "every check holds"
		if !t.Passed {
			verdict = "checks fail: harness does not read this version exactly"
			if t.Pinned != "" && !hasVersion(t.Version, t.Pinned) {
				// What to do: the version harness reads.
				verdict += fmt.Sprintf("; it was measured on %s (agents.lock): npm i -g %s@%s", t.Pinned, t.npm, t.Pinned)
			}
		}
		fmt.Fprintf(e.Stdout, "%s over %s: %s\n", t.Agent, t.Protocol, verdict)
	}
	return nil
}
