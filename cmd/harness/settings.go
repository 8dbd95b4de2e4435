package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/logger"
	"github.com/agentharness/harness/registry"
)

// settings are the loaded configuration and model registry of one command.
type settings struct {
	cfg    config.Config
	files  []string
	models *registry.Models
}

// loadSettings loads harness.toml (walking up from cwd), the user's config
// and HARNESS_* variables, and the model registry. Config errors exit 2;
// warnings (unknown keys) go to stderr.
func loadSettings(e *env, cwd string) (*settings, error) {
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	cfg, warnings, err := config.Load(config.LoadOptions{Cwd: cwd, UserFile: config.DefaultUserFile(e.Getenv), Getenv: e.Getenv})
	if err != nil {
		return nil, withStatus(exitUsage, err)
	}
	for _, w := range warnings {
		fmt.Fprintf(e.Stderr, "harness: warning: %s\n", w)
	}
	models, err := registry.Load(registry.DefaultCachePath(e.Getenv), &cfg.Models)
	var ce *registry.CacheError
	if errors.As(err, &ce) {
		// A damaged download must not stop every run: the built-in table
		// (and the project's) still resolve aliases.
		fmt.Fprintf(e.Stderr, "harness: warning: %v; using the built-in model registry (refresh it with 'harness models update' or delete it)\n", oneLine(err.Error()))
		models, err = registry.Load("", &cfg.Models)
	}
	if err != nil {
		return nil, withStatus(exitUsage, err)
	}
	return &settings{cfg: cfg, files: cfg.Files, models: models}, nil
}

// budgets resolves the run's time budgets: flags over settings.
func (s *settings) budgets(c *runCmd) harness.Budgets {
	b := harness.Budgets{
		Idle:        pick(c.IdleTimeout, s.cfg.IdleTimeout.D()),
		IdleWarning: s.cfg.IdleWarning.D(),
		Hard:        pick(c.Timeout, s.cfg.Timeout.D()),
		Linger:      pick(c.Linger, s.cfg.Linger.D()),
		KillGrace:   pick(c.KillGrace, s.cfg.KillGrace.D()),
	}
	cfg := s.cfg
	if c.ToolTimeout != nil {
		all := *c.ToolTimeout
		b.Tool = func(event.Kind) time.Duration { return all }
	} else {
		b.Tool = func(k event.Kind) time.Duration { return cfg.ToolBudget(string(k)).D() }
	}
	return b
}

// checkDurations rejects negative budgets given as flags, as the config
// does for its own values.
func (c *runCmd) checkDurations() error {
	for name, d := range map[string]*time.Duration{"--idle-timeout": c.IdleTimeout, "--timeout": c.Timeout,
		"--tool-timeout": c.ToolTimeout, "--linger": c.Linger, "--kill-grace": c.KillGrace} {
		if d != nil && *d < 0 {
			return usageErrorf("run: %s %s: a budget cannot be negative (0 turns it off)", name, *d)
		}
	}
	return nil
}

func pick(flag *time.Duration, fallback time.Duration) time.Duration {
	if flag != nil {
		return *flag
	}
	return fallback
}

// estimate prices usage from the model registry for agents that report no
// cost.
func (s *settings) estimate(model string, u event.Usage) (float64, bool) {
	if s.models == nil || model == "" {
		return 0, false
	}
	return s.models.Estimate(model, u)
}

// agentDirs are the directories searched for agent binaries before PATH:
// the pinned installs of 'make agents' (HARNESS_AGENTS_DIR, else .agents
// beside the harness binary or in the current directory).
func agentDirs(e *env) []string {
	var dirs []string
	if d := e.Getenv("HARNESS_AGENTS_DIR"); d != "" {
		dirs = append(dirs, filepath.Join(d, "node_modules", ".bin"))
	}
	if exe, err := os.Executable(); err == nil {
		root := filepath.Dir(filepath.Dir(exe)) // bin/harness -> repo root
		dirs = append(dirs, filepath.Join(root, ".agents", "node_modules", ".bin"))
	}
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, filepath.Join(wd, ".agents", "node_modules", ".bin"))
	}
	return dirs
}

// agentEnviron is the environment agents start from: harness's own,
// without its secrets (the MCP bearer token, …).
func agentEnviron() []string { return config.AgentEnviron(os.Environ()) }

// logDir is where session logs go.
func (s *settings) logDir(e *env) string {
	if s.cfg.LogDir != "" {
		return s.cfg.LogDir
	}
	return logger.DefaultDir(e.Getenv)
}

func openLog(e *env, s *settings, t harness.Task) (*logger.Session, error) {
	_, cmd, _, err := harness.Prepare(t)
	var te *harness.TaskError
	if errors.As(err, &te) {
		return nil, err
	}
	cwd := t.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	// What the user handed the agent through --env and config env tables
	// is redacted by value, whatever its name, wherever it shows.
	return logger.Open(s.logDir(e), t.Run, logger.Meta{
		Run: t.Run, Agent: t.Agent, Model: t.Model, PromptPreview: t.Prompt, Cwd: cwd,
		Argv: cmd.RedactedArgv(), Start: time.Now(), Status: logger.StatusRunning, HarnessVersion: version,
	}, logger.WithRedactor(logger.DefaultRedactor().WithEnv(t.Env)))
}

// closeMeta is the final meta of a run from its result.
func closeMeta(r *event.Result) logger.Meta {
	if r == nil {
		return logger.Meta{Status: "unknown"}
	}
	u := r.Usage
	return logger.Meta{Status: r.Status, ExitCode: r.ExitCode, Signal: r.Signal, Usage: &u,
		CostUSD: r.CostUSD, CostEstimated: r.CostEstimated, SessionID: r.SessionID}
}
