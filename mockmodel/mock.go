package mockmodel

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentharness/harness/internal/privtmp"
	"github.com/agentharness/harness/internal/xdgdir"
	"github.com/agentharness/harness/registry"
)

// Mock is a scripted model server on 127.0.0.1 that runs can be pointed at,
// so a real agent CLI works offline with no API key. It owns the throwaway
// homes it gives each run, in one directory of the user's cache
// ($XDG_CACHE_HOME/harness/mock/run-*), locked while the Mock lives and
// removed on Close: the next StartMock removes one that a harness killed
// with SIGKILL left (internal/privtmp). The homes of PointKept are kept
// instead, from one harness to the next.
type Mock struct {
	srv  *Server
	dir  *privtmp.Dir
	root string // dir.Path
	base string // the directory of dir and of the kept homes

	mu    sync.Mutex
	homes int
	kept  []*privtmp.Dir // the kept homes this Mock holds, released on Close
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
	return &Mock{srv: srv, dir: dir, root: dir.Path, base: base}, nil
}

// homesPrefix names a Mock's directory of homes in the user's cache:
// nothing else is kept there.
const homesPrefix = "run-"

// keptPrefix names the kept homes (PointKept), next to the Mocks'
// directories of homes; keptUnused is how long one stays unused before
// a later PointKept removes it (and the sessions in it).
const (
	keptPrefix = "kept-"
	keptUnused = 7 * 24 * time.Hour
)

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
	model, env, _, err = m.point(agent, workdir, wire, false)
	return model, env, err
}

// PointKept is Point with a home kept from one harness to the next: one
// for each agent and workdir, in the user's cache
// ($XDG_CACHE_HOME/harness/mock/kept-AGENT-HASH), so that a later run of
// the agent in workdir resumes a session an earlier one left there
// (harness run --mock, then --mock --resume). The Mock holds the home
// until Close. While another harness holds it (or it cannot be made),
// the run gets a throwaway home, as Point gives, and throwaway says so:
// its sessions cannot be resumed by a later run. A kept home unused for
// keptUnused is removed, sessions and all.
func (m *Mock) PointKept(agent, workdir string, wire Wiring) (model string, env []string, throwaway bool, err error) {
	return m.point(agent, workdir, wire, true)
}

func (m *Mock) point(agent, workdir string, wire Wiring, keep bool) (model string, env []string, throwaway bool, err error) {
	if wire == nil {
		if info, ok := registry.Agent(agent); ok && CallsNoModel(info) {
			return "", nil, false, nil // no home: nothing to keep
		}
		return "", nil, false, fmt.Errorf("mock: %s cannot run on the scripted model (it talks to its own service only)", agent)
	}
	if workdir, err = filepath.Abs(workdir); err != nil {
		return "", nil, false, fmt.Errorf("mock: %w", err)
	}
	if fi, err := os.Stat(workdir); err != nil || !fi.IsDir() {
		return "", nil, false, fmt.Errorf("mock: workdir %q is not a directory", workdir)
	}
	home := ""
	if keep {
		home = m.keptHome(agent, workdir)
		throwaway = home == ""
	}
	if home == "" {
		m.mu.Lock()
		m.homes++
		home = filepath.Join(m.root, fmt.Sprintf("%s-%d", agent, m.homes))
		m.mu.Unlock()
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
			return "", nil, false, fmt.Errorf("mock: %w", err)
		}
		env = append(env, d.key+"="+dir)
	}
	model, own, err := wire(m.srv.URL(), home, workdir)
	if err != nil {
		return "", nil, false, fmt.Errorf("mock: %s: %w", agent, err)
	}
	return model, append(env, own...), throwaway, nil
}

// keptHome takes the kept home of agent in workdir (absolute) and
// returns its path, or "" when another harness holds it or it cannot be
// made (a throwaway home serves then). The directory is named by its
// real path: reached through a link, it is the same directory, and its
// sessions are the same.
func (m *Mock) keptHome(agent, workdir string) string {
	if real, err := filepath.EvalSymlinks(workdir); err == nil {
		workdir = real
	}
	sum := sha256.Sum256([]byte(workdir))
	d, err := privtmp.Reuse(m.base, keptPrefix, keptPrefix+agent+"-"+hex.EncodeToString(sum[:8]), keptUnused)
	if err != nil {
		return ""
	}
	m.mu.Lock()
	m.kept = append(m.kept, d)
	m.mu.Unlock()
	return d.Path
}

// CallsNoModel reports whether an agent calls no model, derived from what
// it declares (as 'harness list' does): no npm package, no credential
// variables and no flags to check, as the built-ins nop and oracle, which
// run sh and bash. Cursor declares its key and flags: it calls a model,
// only not one the mock can stand in for.
func CallsNoModel(info registry.AgentInfo) bool {
	return info.NPMPackage == "" && len(info.CredentialEnv) == 0 && len(info.Flags) == 0
}

// Close stops the server, removes the throwaway homes it handed out
// (what an agent left read-only there too, such as Go's module cache)
// and lets go of the kept ones.
func (m *Mock) Close() error {
	err := m.srv.Close()
	m.mu.Lock()
	for _, d := range m.kept {
		d.Release()
	}
	m.kept = nil
	m.mu.Unlock()
	return errors.Join(err, m.dir.Remove())
}
