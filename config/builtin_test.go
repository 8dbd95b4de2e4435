package config_test

// The configuration's tests name the built-in agents ("claude", …), and
// the agent setting's Doc lists them: like any program that uses harness,
// the test binary gets them from the harness package, which registers them
// at its initialisation.
import _ "github.com/agentharness/harness"
