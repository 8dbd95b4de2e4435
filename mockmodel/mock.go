package mockmodel

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentharness/harness/internal/privtmp"
	"github.com/agentharness/harness/internal/xdgdir"
	"github.com/agentharness/harness/registry"
)

// Mock is a scripted model server on 127.0.0.1 that runs can be pointed at,
// so a real agent CLI works offline with no API key. It owns the throwaway
// homes it gives each run, in one directory of the user's cache
// ($XDG_CACHE_HOME/harness/mock/run-*), locked while the Mock lives and
// removed on Close: the next StartMock removes one that a harness killed
// with SIGKILL left (internal/privtmp).
type Mock struct {
	srv  *Server
	dir  *privtmp.Dir
	root string // dir.Path

	mu    sync.Mutex
	homes int
}

// FindScenario returns a built-in scenario by name, or one from a TOML file.
func FindScenario(nameOrFile string) (*Scenario, error) {
	if sc, err := Builtin(nameOrFile); err == nil {
		return sc, nil
	}
	if st, err := os.Stat(nameOrFile); err == nil && !st.IsDir() {
		return LoadScenario(nameOrFile)
	}
	return nil, fmt.Errorf("mock: %q is neither a built-in scenario (%s) nor a scenario file",
		nameOrFile, strings.Join(BuiltinNames(), ", "))
}

// StartMock starts a scripted model server playing scenario (a built-in
// name or a TOML file) on addr ("" = 127.0.0.1 and a free port).
func StartMock(scenario, addr string) (*Mock, error) {
	sc, err := FindScenario(scenario)
	if err != nil {
		return nil, err
	}
	srv, err := Start(Config{Scenario: sc, Addr: addr})
	if err != nil {
		return nil, err
	}
	// Codex refuses to keep its home under /tmp, so the homes go in the
	// user's cache directory.
	base := xdgdir.Cache(nil, "mock")
	if err := os.MkdirAll(base, 0o700); err != nil {
		srv.Close()
		return nil, fmt.Errorf("mock: %w", err)
	}
	dir, err := privtmp.Make(base, homesPrefix)
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("mock: %w", err)
	}
	return &Mock{srv: srv, dir: dir, root: dir.Path}, nil
}

// homesPrefix names a Mock's directory of homes in the user's cache:
// nothing else is kept there.
const homesPrefix = "run-"

// Wiring points an agent at a server: it writes the agent's config under
// home and returns the model id and the environment to run it with
// (harness.Agent.Mock, which the agent's package declares).
type Wiring func(baseURL, home, workdir string) (model string, env []string, err error)

// Point returns what a run of agent (a canonical id) in workdir needs to
// talk to the mock ("" = the current directory): the mock's model id, and
// the environment (a throwaway
// HOME and XDG base directories inside it, PWD, and what the agent's own
// wiring adds: its config, dummy keys, the base URL, its retries and
// stall timeouts turned down). The user's real configuration is neither
// read nor written. The caller adds its own env after this. wire nil: an
// agent that calls no model (CallsNoModel: oracle, nop) runs as it is,
// with no model and no env, since there is nothing to point; any other
// talks to its own service only and cannot use the mock (Cursor).
func (m *Mock) Point(agent, workdir string, wire Wiring) (model string, env []string, err error) {
	if wire == nil {
		if info, ok := registry.Agent(agent); ok && CallsNoModel(info) {
			return "", nil, nil
		}
		return "", nil, fmt.Errorf("mock: %s cannot run on the scripted model (it talks to its own service only)", agent)
	}
	m.mu.Lock()
	m.homes++
	home := filepath.Join(m.root, fmt.Sprintf("%s-%d", agent, m.homes))
	m.mu.Unlock()
	if workdir, err = filepath.Abs(workdir); err != nil {
		return "", nil, fmt.Errorf("mock: %w", err)
	}
	if fi, err := os.Stat(workdir); err != nil || !fi.IsDir() {
		return "", nil, fmt.Errorf("mock: workdir %q is not a directory", workdir)
	}
	// OpenCode takes its project directory from $PWD, not from the
	// process's cwd: an inherited PWD would make it run tools in the
	// caller's directory.
	env = []string{"HOME=" + home, "PWD=" + workdir}
	for _, d := range []struct{ key, dir string }{
		{"XDG_CACHE_HOME", ".cache"},
		{"XDG_CONFIG_HOME", ".config"},
		{"XDG_DATA_HOME", ".local/share"},
		{"XDG_STATE_HOME", ".local/state"},
	} {
		dir := filepath.Join(home, d.dir)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", nil, fmt.Errorf("mock: %w", err)
		}
		env = append(env, d.key+"="+dir)
	}
	model, own, err := wire(m.srv.URL(), home, workdir)
	if err != nil {
		return "", nil, fmt.Errorf("mock: %s: %w", agent, err)
	}
	return model, append(env, own...), nil
}

// CallsNoModel reports whether an agent calls no model, derived from what
// it declares (as 'harness list' does): no npm package, no credential
// variables and no flags to check, as the built-ins nop and oracle, which
// run sh and bash. Cursor declares its key and flags: it calls a model,
// only not one the mock can stand in for.
func CallsNoModel(info registry.AgentInfo) bool {
	return info.NPMPackage == "" && len(info.CredentialEnv) == 0 && len(info.Flags) == 0
}

// Close stops the server and removes the homes it handed out (what an
// agent left read-only there too, such as Go's module cache).
func (m *Mock) Close() error {
	err := m.srv.Close()
	return errors.Join(err, m.dir.Remove())
}
