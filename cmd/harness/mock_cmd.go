package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/acp"
	"github.com/agentharness/harness/mockmodel"
)

// mockCmd serves the scripted model until interrupted, for pointing agents
// at by hand; 'harness run --mock' starts one in-process instead.
type mockCmd struct {
	Scenario string `arg:"" optional:"" default:"tool" help:"Built-in scenario (${mockscenarios}) or a scenario TOML file."`
	Addr     string `help:"Address to listen on (loopback only); port 0 picks a free one." default:"127.0.0.1:0"`
	List     bool   `help:"List the built-in scenarios and exit."`
}

func (c *mockCmd) Run(e *env) error {
	if c.List {
		_, err := fmt.Fprintln(e.Stdout, strings.Join(mockmodel.BuiltinNames(), "\n"))
		return err
	}
	sc, err := mockmodel.FindScenario(c.Scenario)
	if err != nil {
		return withStatus(exitUsage, err)
	}
	srv, err := mockmodel.Start(mockmodel.Config{Scenario: sc, Addr: c.Addr})
	if err != nil {
		return withStatus(exitUsage, err)
	}
	defer srv.Close()
	// Its URL is how it is found: not written, it serves nobody.
	if _, err := fmt.Fprintln(e.Stdout, srv.URL()); err != nil {
		return err
	}
	if f, ok := e.Stdout.(*os.File); ok {
		f.Sync()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	<-ctx.Done()
	fmt.Fprintf(e.Stderr, "harness: mock served %d request(s)\n", len(srv.Requests()))
	return nil
}

// attachMock starts a scripted model for one run and points the task (its
// agent a canonical id) at it; the returned func stops it. With keep, the
// agent's home is the one kept for its cwd (mockmodel.PointKept), so that
// a later run --mock --resume finds the session this one leaves; when
// another harness holds that home, stderr is told the run's session
// cannot be resumed so. Without (a dry run, bench, serve), a throwaway one.
func attachMock(t *harness.Task, scenario string, keep bool, stderr io.Writer) (func(), error) {
	m, err := mockmodel.StartMock(scenario, "")
	if err != nil {
		return nil, withStatus(exitUsage, err)
	}
	throwaway, err := pointAt(m, t, keep)
	if err != nil {
		m.Close()
		return nil, withStatus(exitUsage, err)
	}
	switch {
	case throwaway && t.Resume != "":
		fmt.Fprintf(stderr, "harness: --mock: another harness is using the home kept for %s in %s, which holds the sessions to resume: this run gets a throwaway one, where session %s is not\n", t.Agent, t.Cwd, t.Resume)
	case throwaway:
		fmt.Fprintf(stderr, "harness: --mock: another harness is using the home kept for %s in %s: this run gets a throwaway one, and its session cannot be resumed with --mock --resume\n", t.Agent, t.Cwd)
	}
	return func() { m.Close() }, nil
}

// serverMock starts a scripted model for a server's runs (mcp, acp):
// point points each run's task at it, or says why it cannot (pointAt's
// error, as run --mock gives it: an agent the mock cannot drive, Cursor),
// and the caller refuses that run: started unpointed, it would talk to
// its own service. stop stops the model.
func serverMock(scenario string) (point func(*harness.Task) error, stop func(), err error) {
	m, err := mockmodel.StartMock(scenario, "")
	if err != nil {
		return nil, nil, withStatus(exitUsage, err)
	}
	return func(t *harness.Task) error {
		_, err := pointAt(m, t, false)
		return err
	}, func() { m.Close() }, nil
}

// pointAt points t at the mock: its model, and its environment (as the
// task's setup, under the user's own env). Over ACP, an agent whose ACP
// side takes no model (OpenCode, which reads the mock's from the config
// file its Mock writes) is not given the mock's: it would refuse it; a
// model the user gave is left for it to refuse. The protocol is
// t's as given: one the configuration sets ([agents.NAME] protocol) is
// known only once the library completes the task, so a caller that
// leaves it to the configuration sets it first. keep gives the agent the
// home kept for t's cwd (mockmodel.PointKept) rather than a throwaway one;
// throwaway reports that it got a throwaway one all the same.
func pointAt(m *mockmodel.Mock, t *harness.Task, keep bool) (throwaway bool, err error) {
	a, err := harness.Lookup(t.Agent)
	if err != nil {
		return false, err
	}
	var model string
	var env []string
	if keep {
		model, env, throwaway, err = m.PointKept(a.Info.ID, t.Cwd, a.Mock)
	} else {
		model, env, err = m.Point(a.Info.ID, t.Cwd, a.Mock)
	}
	if err != nil {
		return false, err
	}
	if t.Protocol != harness.ProtocolACP || acp.TakesModel(&a) {
		t.Model = model
	}
	t.SetupEnv = append(env, t.SetupEnv...)
	return throwaway, nil
}
