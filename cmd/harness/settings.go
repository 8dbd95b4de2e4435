package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/alecthomas/kong"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/logger"
	"github.com/agentharness/harness/otlp"
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
	cfg, warnings, err := config.Load(config.LoadOptions{Cwd: cwd, UserFile: config.DefaultUserFile(e.Getenv),
		Getenv: e.Getenv, Home: e.Getenv("HOME")})
	if err != nil {
		return nil, withStatus(exitUsage, err)
	}
	for _, w := range warnings {
		// An unknown key is the file's text: it may hold escape sequences.
		fmt.Fprintf(e.Stderr, "harness: warning: %s\n", oneLine(w.String()))
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

// budgetFlags are the time budgets a command takes as flags (run,
// bench), each overriding its setting when given.
type budgetFlags struct {
	IdleTimeout *time.Duration `help:"End the run after this long without output and no tool in flight (0 = off; default 5m)."`
	Timeout     *time.Duration `help:"Wall-clock limit of the run (0 = off; default 60m)."`
	ToolTimeout *time.Duration `help:"Budget of one tool call, for every kind (default by kind: mcp 2m, read/search/todo 1m, others 5m)."`
	Linger      *time.Duration `help:"How long the agent may stay after its final event before it is ended (default 3s)."`
	KillGrace   *time.Duration `help:"Time between SIGTERM and SIGKILL (default 5s)."`
}

// override is the flags as the library's budget override.
func (f *budgetFlags) override() harness.BudgetOverride {
	return harness.BudgetOverride{Idle: f.IdleTimeout, Hard: f.Timeout, Tool: f.ToolTimeout, Linger: f.Linger, KillGrace: f.KillGrace}
}

// budgetFlagNames name each budget of harness.BudgetError as its flag.
var budgetFlagNames = map[string]string{"idle": "--idle-timeout", "hard": "--timeout", "tool": "--tool-timeout",
	"linger": "--linger", "kill_grace": "--kill-grace"}

// Validate rejects negative budgets (harness.BudgetOverride.Validate),
// naming the flag (kong prefixes the command's name).
func (f *budgetFlags) Validate() error {
	var be *harness.BudgetError
	if errors.As(f.override().Validate(), &be) {
		return errors.New(be.Named(budgetFlagNames[be.Budget]))
	}
	return nil
}

// over returns b with the flags given set over it.
func (f *budgetFlags) over(b harness.Budgets) *harness.Budgets {
	b = f.override().Apply(b)
	return &b
}

// library is the library's view of the settings, for starting runs; log
// turns session logs on (when the configuration does not turn them off).
func (s *settings) library(e *env, log bool) *harness.Settings {
	cfg := s.cfg
	ls := &harness.Settings{Config: &cfg, Models: s.models, SearchDirs: agentDirs(e), Version: version}
	if log && s.cfg.Log {
		ls.LogDir = s.logDir(e)
	}
	return ls
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

// logDir is where session logs go.
func (s *settings) logDir(e *env) string {
	if s.cfg.LogDir != "" {
		return s.cfg.LogDir
	}
	return logger.DefaultDir(e.Getenv)
}

// boolFlagOver sets *setting to a boolean flag's value when the flag was
// given (flag non-nil): flags win over the configuration, off as well as
// on (--raw=false over raw = true), which a plain bool, false whether
// given or not, cannot tell.
func boolFlagOver(setting *bool, flag *bool) {
	if flag != nil {
		*setting = *flag
	}
}

// negated is a --no-X flag as its setting's value (nil: not given).
func negated(flag *bool) *bool {
	if flag == nil {
		return nil
	}
	v := !*flag
	return &v
}

// otlpFlags turn on the OpenTelemetry export of a command's runs
// (docs/otlp.md).
type otlpFlags struct {
	OTLP        string `name:"otlp" help:"Export every run as OpenTelemetry GenAI traces and metrics to this OTLP/HTTP endpoint, e.g. http://127.0.0.1:4318 (default: the otlp setting, else OTEL_EXPORTER_OTLP_ENDPOINT)." placeholder:"URL"`
	OTLPContent bool   `name:"otlp-content" help:"Also export tool arguments, output, diffs and the final answer (redacted as session logs are)."`

	// contentGiven: --otlp-content was on the command line (AfterApply).
	// OTLPContent stays a bool (bench k8s-job forwards it as one), so
	// whether it was given is learnt from kong.
	contentGiven bool
	x            *otlp.Exporter // started by start; nil when off
	outer        string         // TRACEPARENT of harness's own environment
}

// AfterApply notes whether --otlp-content was given, so that a given
// --otlp-content=false wins over the otlp_content setting. Kong calls it
// on each command that embeds otlpFlags, as the command's own (promoted)
// method: a command that gets an AfterApply of its own, or embeds another
// struct with one, must call this one (TestOTLPContentFlagOverSetting
// checks every command).
func (f *otlpFlags) AfterApply(ctx *kong.Context) error {
	for _, p := range ctx.Path {
		if p.Flag != nil && p.Flag.Name == "otlp-content" {
			f.contentGiven = true
		}
	}
	return nil
}

// content is whether the export carries content: the flag when given,
// else the otlp_content setting.
func (f *otlpFlags) content(s *settings) bool {
	if f.contentGiven {
		return f.OTLPContent
	}
	return s.cfg.OTLPContent
}

// start turns the export on for the runs lib starts, when an endpoint
// is set (flag, setting, OTEL_* variables); stop flushes what is left,
// within the export's timeout. Off, nothing is created.
func (f *otlpFlags) start(e *env, s *settings, lib *harness.Settings) (stop func(), err error) {
	cfg, ok, err := f.agentArgs(e, s, lib)
	if err != nil || !ok {
		return func() {}, err
	}
	cfg.Content = f.content(s)
	cfg.Version = version
	cfg.Warn = func(msg string) { fmt.Fprintf(e.Stderr, "harness: warning: %s\n", oneLine(msg)) }
	x := otlp.New(cfg)
	// A harness started inside a trace (TRACEPARENT, as harness hands it
	// to agents) puts its runs in it, unless a request brings its own.
	outer := e.Getenv("TRACEPARENT")
	f.x, f.outer = x, outer
	lib.Telemetry = func(ctx context.Context, info harness.RunInfo) (harness.Observer, []string) {
		ri := otlp.RunInfo{Run: info.Run, Agent: info.Agent, Model: info.Model, Protocol: info.Protocol, Env: info.Env}
		ri.Parent, _ = otlp.ParseTraceparent(cmp.Or(harness.Traceparent(ctx), outer))
		run := x.Run(ri)
		env := []string{"TRACEPARENT=" + run.Context().Traceparent()}
		if otlp.AgentExports(info.Agent, info.Protocol, cfg) {
			env = append(env, otlp.AgentEnv(info.Agent, cfg)...)
		}
		return harness.Observer{OnEvent: run.Add, Close: run.Finish}, env
	}
	return func() { x.Shutdown(context.Background()) }, nil
}

// agentArgs reads the export's configuration and, when it is on, gives
// the agents the arguments that keep their own exporter's content off
// (otlp.AgentArgs): all a dry run needs of it, which starts no exporter.
func (f *otlpFlags) agentArgs(e *env, s *settings, lib *harness.Settings) (cfg otlp.Config, ok bool, err error) {
	from := f.source(e, s)
	cfg, ok, err = otlp.FromEnv(cmp.Or(f.OTLP, s.cfg.OTLP), e.Getenv)
	if err != nil {
		return cfg, false, usageErrorf("%s: %v", from, err)
	}
	if ok {
		lib.TelemetryArgs = func(info harness.RunInfo, args []string) ([]string, error) {
			args, err := otlp.AgentArgs(info.Agent, info.Protocol, cfg, args)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", from, err)
			}
			return args, nil
		}
	}
	return cfg, ok, nil
}

// source names where the export's endpoint comes from, for its errors:
// the flag, the otlp setting's file (or variable) and key, else the
// OTEL_* variables.
func (f *otlpFlags) source(e *env, s *settings) string {
	switch {
	case f.OTLP != "":
		return "--otlp"
	case s.cfg.OTLP != "":
		return s.cfg.Origins["otlp"] + ": otlp"
	case e.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		return "OTEL_EXPORTER_OTLP_ENDPOINT"
	}
	return "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or _METRICS_ENDPOINT"
}
