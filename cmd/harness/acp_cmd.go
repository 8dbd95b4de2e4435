package main

import (
	"cmp"
	"context"
	"log/slog"
	"os/signal"
	"strings"
	"syscall"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/acpserver"
	"github.com/agentharness/harness/registry"
)

// acpCmd speaks ACP on stdio as an agent (docs/acp.md, package
// acpserver): each session/prompt runs the chosen agent under harness
// supervision in the session's cwd and streams it back as session/updates.
type acpCmd struct {
	Agent       string   `short:"a" help:"Agent to run for each prompt: ${agents} (or an alias; default: the configured agent)."`
	Protocol    string   `help:"How harness drives the agent: cli (its headless mode) or acp." enum:"${anyprotocols}," default:""`
	Command     []string `help:"The command of an ACP agent harness has no adapter for (with --protocol acp); repeat it for each argument." sep:"none"`
	binaryFlag  `embed:""`
	Permissions *string  `help:"full-access (default) or read-only." enum:"full-access,read-only," default:"" notempty:""`
	Env         []string `help:"Extra environment for the agent, KEY=VALUE (repeatable)." placeholder:"K=V" sep:"none"`
	budgetFlags `embed:""`
	otlpFlags   `embed:""`
	NoLog       *bool  `help:"Do not write session logs."`
	Mock        string `help:"Point every run at the built-in scripted model playing this scenario (offline, no API key)." notempty:"name a scenario, or leave --mock out to run the agent's own model"`
}

func (c *acpCmd) Run(e *env) error {
	if len(c.Command) > 0 && !harness.TakesCommand(c.Protocol) {
		// Else the agent would run by its adapter, the command unused.
		var takes []string
		for _, p := range registry.CommandProtocols() {
			takes = append(takes, "--protocol "+p)
		}
		return usageErrorf("acp: --command is only for %s (an agent harness has no adapter for)", strings.Join(takes, " or "))
	}
	if len(c.Command) > 0 && strings.TrimSpace(c.Command[0]) == "" {
		// It starts nothing: refused here, as the configuration's
		// command = [""] is when read, not at each prompt.
		return usageErrorf("acp: --command: has an empty binary (its first element)")
	}
	s, err := loadSettings(e, "")
	if err != nil {
		return err
	}
	// Over the log setting when given, off as on (as run's --no-log).
	boolFlagOver(&s.cfg.Log, negated(c.NoLog))
	lib := s.library(e, true)
	stopOTLP, err := c.otlpFlags.start(e, s, lib)
	if err != nil {
		return err
	}
	defer stopOTLP()
	agent := cmp.Or(c.Agent, s.cfg.Agent)
	if agent == "" {
		return usageErrorf("acp: no agent: give --agent or set agent in harness.toml")
	}
	if len(c.Command) == 0 {
		if agent, err = agentName(s, agent); err != nil {
			return err
		}
	}
	protocol, command := c.Protocol, c.Command
	if ac := s.cfg.Agents[agent]; protocol == "" && len(command) == 0 {
		protocol = ac.Protocol
		if harness.TakesCommand(protocol) {
			command = ac.Command
		}
	}
	if err := checkEnv("acp", c.Env); err != nil {
		return err
	}
	// Each prompt is one run through the library, as 'harness run' starts
	// it (configuration, session log, budgets).
	task := func(cwd, prompt string) harness.Task {
		return harness.Task{Agent: agent, Cwd: cwd, Prompt: prompt, Permissions: deref(c.Permissions),
			Budgets: c.over(lib.Budgets()), Protocol: protocol, Command: command, Binary: c.Binary, Env: c.Env}
	}
	start := lib.Start
	if c.Mock != "" {
		point, stop, err := serverMock(c.Mock)
		if err != nil {
			return err
		}
		defer stop()
		// One pointing per cwd: it makes the agent a home of its own, and
		// the prompts of a session continue the agent's session, which
		// the agent keeps there (Claude Code's transcripts).
		point = pointOnce(point)
		// At the start, not in task, which cannot fail: a prompt whose
		// run cannot be pointed (an agent the mock cannot drive) is
		// refused with why, as run --mock refuses it, and never runs
		// against the agent's own service.
		base := start
		start = func(ctx context.Context, t harness.Task, o harness.Options) (*harness.Run, error) {
			if err := point(&t); err != nil {
				return nil, err
			}
			return base(ctx, t, o)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	acpserver.Serve(ctx, e.Stdin, e.Stdout, acpserver.Options{Start: start, Task: task, Version: version,
		// The SDK logs at info level by default; stderr gets its warnings only.
		Logger: slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	return nil
}
