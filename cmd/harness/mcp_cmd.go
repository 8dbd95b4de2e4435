package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/mcpserver"
)

// mcpCmd serves harness over MCP: stdio by default, streamable HTTP on a
// loopback address with --listen. Every run takes its settings from the
// configuration, as 'harness run' does, then the client's arguments.
type mcpCmd struct {
	Listen           string        `help:"Serve streamable HTTP on this loopback address instead of stdio; clients must send the bearer token." placeholder:"127.0.0.1:PORT"`
	TokenFile        string        `help:"File holding the bearer token of the HTTP transport (default: $HARNESS_MCP_TOKEN)." type:"existingfile"`
	NoLog            *bool         `help:"Do not write session logs of the runs."`
	ProgressInterval time.Duration `help:"Interval of progress notifications while run_agent waits." default:"5s"`
	Mock             string        `help:"Point every delegated run at the built-in scripted model playing this scenario (offline, no API key)." notempty:"name a scenario, or leave --mock out to run the agent's own model"`
	Root             []string      `help:"Directory a client's run_agent cwd must lie in (repeatable; a relative cwd is taken from the first). Default: the current directory." type:"existingdir" placeholder:"DIR" sep:"none"`
	otlpFlags        `embed:""`
}

func (c *mcpCmd) Run(e *env) error {
	if c.ProgressInterval <= 0 {
		return usageErrorf("mcp: --progress-interval %s: want a positive duration", c.ProgressInterval)
	}
	var token string
	if c.Listen != "" {
		if err := mcpserver.CheckLoopback(c.Listen); err != nil {
			return usageErrorf("mcp: --listen: %v", err)
		}
		var err error
		if token, err = c.token(e); err != nil {
			return err
		}
	}
	s, err := loadSettings(e, "")
	if err != nil {
		return err
	}
	// Over the log setting when given, off as on (as run's --no-log).
	boolFlagOver(&s.cfg.Log, negated(c.NoLog))
	opts := c.options(e, s)
	stopOTLP, err := c.otlpFlags.start(e, s, opts.Settings)
	if err != nil {
		return err
	}
	defer stopOTLP()
	if c.Mock != "" {
		point, stop, err := serverMock(c.Mock)
		if err != nil {
			return err
		}
		defer stop()
		// One home per agent and cwd, so a run_agent resume finds the
		// conversation its earlier run kept there (Claude Code's
		// transcripts, in its config directory).
		point = pointOnce(point)
		opts.Setup = func(t *harness.Task) (harness.Observer, error) {
			// The configuration's protocol, set here: --mock wires the model by it (pointAt).
			t.Protocol = cmp.Or(t.Protocol, opts.Settings.RunProtocol(t.Agent))
			// A run that cannot be pointed (an agent the mock cannot
			// drive, Cursor) is refused with why, as run --mock refuses
			// it, and never runs against the agent's own service.
			return harness.Observer{}, point(t)
		}
	}
	srv := mcpserver.New(opts)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if c.Listen == "" {
		err = srv.ServeStdio(ctx, e.Stdin, e.Stdout)
		srv.Close()
		if err != nil && ctx.Err() == nil {
			return withStatus(exitAgentFailed, fmt.Errorf("mcp: %w", err))
		}
		return nil
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return usageErrorf("mcp: %v", err)
	}
	fmt.Fprintf(e.Stderr, "harness mcp: serving streamable HTTP on http://%s/\n", ln.Addr())
	if err := srv.ServeHTTP(ctx, ln, token); err != nil {
		return withStatus(exitAgentFailed, fmt.Errorf("mcp: %w", err))
	}
	return nil
}

// token is the HTTP transport's bearer token: --token-file, else
// $HARNESS_MCP_TOKEN; it is required.
func (c *mcpCmd) token(e *env) (string, error) {
	tok := e.Getenv("HARNESS_MCP_TOKEN")
	if c.TokenFile != "" {
		b, err := readTokenFile("mcp", c.TokenFile, e.Stderr)
		var se *exitError
		if errors.As(err, &se) {
			return "", err
		}
		if err != nil {
			return "", usageErrorf("mcp: --token-file: %v", err)
		}
		tok = b
	}
	tok = strings.TrimSpace(tok)
	if tok == "" {
		return "", usageErrorf("mcp: --listen needs a bearer token: give --token-file or set HARNESS_MCP_TOKEN")
	}
	if err := mcpserver.CheckToken(tok); err != nil {
		return "", usageErrorf("mcp: %v", err)
	}
	return tok, nil
}

// options wires the configuration into the server: the settings every
// run starts with (defaults, session logs, prices) and the budget limits.
func (c *mcpCmd) options(e *env, s *settings) mcpserver.Options {
	m := s.cfg.MCP
	return mcpserver.Options{
		Limits:           mcpserver.Limits{IdleMin: m.IdleMin.D(), IdleMax: m.IdleMax.D(), HardMin: m.HardMin.D(), HardMax: m.HardMax.D()},
		ProgressInterval: c.ProgressInterval,
		Version:          version,
		Roots:            c.Root,
		Settings:         s.library(e, true), // --no-log is in s (Run)
	}
}

// pointOnce returns point (serverMock's), which gives each task it
// points a home of its own, made to point every task of one agent,
// protocol and cwd as it pointed the first: the same model and
// environment, so the same home. An agent keeps its sessions in its home
// (Claude Code's transcripts in its config directory, by cwd), and a run
// that resumes an earlier one's session must find it there: with a home
// per run, a resume over --mock failed ("No conversation found") unless
// the configuration set the agent's config directory. The model is set
// only where point sets one (it leaves an ACP agent that takes none
// without). point's error is returned, t left as it was, and not kept:
// the next task of that key is pointed anew. Safe for concurrent use; a
// home lives as long as the mock.
func pointOnce(point func(*harness.Task) error) func(*harness.Task) error {
	type key struct{ agent, protocol, cwd string }
	var mu sync.Mutex
	pointed := map[key]harness.Task{}
	return func(t *harness.Task) error {
		k := key{t.Agent, t.Protocol, t.Cwd}
		mu.Lock()
		p, ok := pointed[k]
		if !ok {
			p = harness.Task{Agent: t.Agent, Protocol: t.Protocol, Cwd: t.Cwd}
			if err := point(&p); err != nil {
				mu.Unlock()
				return err
			}
			pointed[k] = p
		}
		mu.Unlock()
		if p.Model != "" {
			t.Model = p.Model
		}
		t.SetupEnv = append(slices.Clip(p.SetupEnv), t.SetupEnv...)
		return nil
	}
}
