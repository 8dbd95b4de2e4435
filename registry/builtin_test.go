package registry_test

// The registry's tests name the built-in agents ("claude", …) and load a
// models.toml that maps aliases to them: like any program that uses
// harness, the test binary gets them from the harness package, which
// registers them at its initialisation.
import _ "github.com/agentharness/harness"
