package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/adrg/xdg"

	"github.com/agentharness/harness/mockmodel"
)

// Mock is a scripted model server on 127.0.0.1 that runs can be pointed at,
// so a real agent CLI works offline with no API key. It owns the throwaway
// homes it gives each run and removes them on Close.
type Mock struct {
	srv  *mockmodel.Server
	root string

	mu    sync.Mutex
	homes int
}

// LoadScenario returns a built-in scenario by name, or one from a TOML file.
func LoadScenario(nameOrFile string) (*mockmodel.Scenario, error) {
	if sc, err := mockmodel.Builtin(nameOrFile); err == nil {
		return sc, nil
	}
	if st, err := os.Stat(nameOrFile); err == nil && !st.IsDir() {
		return mockmodel.LoadScenario(nameOrFile)
	}
	return nil, fmt.Errorf("mock: %q is neither a built-in scenario (%s) nor a scenario file",
		nameOrFile, strings.Join(mockmodel.BuiltinNames(), ", "))
}

// StartMock starts a scripted model server playing scenario (a built-in
// name or a TOML file) on addr ("" = 127.0.0.1 and a free port).
func StartMock(scenario, addr string) (*Mock, error) {
	sc, err := LoadScenario(scenario)
	if err != nil {
		return nil, err
	}
	srv, err := mockmodel.Start(mockmodel.Config{Scenario: sc, Addr: addr})
	if err != nil {
		return nil, err
	}
	// Codex refuses to keep its home under /tmp, so the homes go in the
	// user's cache directory.
	base := filepath.Join(xdg.CacheHome, "harness", "mock")
	if err := os.MkdirAll(base, 0o700); err != nil {
		srv.Close()
		return nil, fmt.Errorf("mock: %w", err)
	}
	root, err := os.MkdirTemp(base, "run-")
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("mock: %w", err)
	}
	return &Mock{srv: srv, root: root}, nil
}

// URL is the server's base URL.
func (m *Mock) URL() string { return m.srv.URL() }

// Server is the scripted model server, for tests that read its requests.
func (m *Mock) Server() *mockmodel.Server { return m.srv }

// Point sets t up to talk to the mock: a throwaway HOME and config for the
// agent, dummy keys, the base URL, the mock's model id, and the agent's own
// retries and stall timeouts turned down. The user's real configuration is
// neither read nor written. Env given in t wins over the mock's.
func (m *Mock) Point(t *Task) error {
	a, err := Adapter(t.Agent)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.homes++
	home := filepath.Join(m.root, fmt.Sprintf("%s-%d", a.Name(), m.homes))
	m.mu.Unlock()
	workdir := t.Cwd
	if workdir == "" {
		if workdir, err = os.Getwd(); err != nil {
			return err
		}
	}
	setup, err := mockmodel.Prepare(a.Name(), m.srv.URL(), home, workdir)
	if errors.Is(err, mockmodel.ErrUnknownAgent) {
		return fmt.Errorf("mock: %s cannot run on the scripted model (it talks to its own service only)", a.Name())
	}
	if err != nil {
		return err
	}
	t.Model = setup.Model
	t.Env = append(append([]string(nil), setup.Env...), t.Env...)
	return nil
}

// Close stops the server and removes the homes it handed out.
func (m *Mock) Close() error {
	err := m.srv.Close()
	return errors.Join(err, os.RemoveAll(m.root))
}
