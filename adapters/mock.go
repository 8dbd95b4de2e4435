package adapters

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// What every built-in agent's Mock sets where the CLI has a knob for it.
const (
	// MockKey is the API key an agent on the scripted model is given; the
	// server ignores keys.
	MockKey = "mock-dummy-key"
	// MockStall is how long the CLI itself waits on a silent stream before
	// it gives up: 60 s, down from about 300 s, yet longer than the
	// harness's own idle timeout where a test stalls the stream on purpose.
	MockStall = 60 * time.Second
	// MockRetries is how many times the CLI retries a failed request: none,
	// so that a scripted error is the run's at once. (OpenCode's count is
	// fixed at 5; the server's retry-after-ms keeps those fast.)
	MockRetries = 0
)

// MockConfig gathers what an Agent's Mock writes: environment pairs, and
// directories and files (private to the user) under its throwaway home.
// The first error sticks and Result returns it.
type MockConfig struct {
	env []string
	err error
}

// Env adds KEY=VALUE to the environment.
func (c *MockConfig) Env(key, value string) { c.env = append(c.env, key+"="+value) }

// Mkdir creates dir and its parents.
func (c *MockConfig) Mkdir(dir string) {
	if c.err == nil {
		c.err = os.MkdirAll(dir, 0o700)
	}
}

// Write writes data to path, creating its directory.
func (c *MockConfig) Write(path string, data []byte) {
	c.Mkdir(filepath.Dir(path))
	if c.err == nil {
		c.err = os.WriteFile(path, data, 0o600)
	}
}

// WriteJSON writes v to path as indented JSON, the way the CLIs write
// their own settings.
func (c *MockConfig) WriteJSON(path string, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if c.err == nil && err != nil {
		c.err = err
	}
	c.Write(path, append(b, '\n'))
}

// Result is what Mock returns: the model id to run, the environment, and
// the first error.
func (c *MockConfig) Result(model string) (string, []string, error) {
	if c.err != nil {
		return "", nil, c.err
	}
	return model, c.env, nil
}
