package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/toyagent"
)

// TestRegisteredAgent follows docs/adding-an-agent.md through the CLI: an
// agent added by one registration (internal/toyagent, a session agent) is
// in the help, runs under 'harness run', and is pointed at the scripted
// model by its own wiring with --mock.
func TestRegisteredAgent(t *testing.T) {
	require.NoError(t, toyagent.Register())
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home+"/.config")
	t.Chdir(home)
	call := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(args, strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	_, help, _ := call("run", "--help")
	require.Contains(t, help, "gemini, toy (or an alias)")

	argv, _ := fakeagent.Command(fakeagent.ToySession)
	code, out, stderr := call("run", "-a", "toy-agent", "-p", "hello", "--binary", argv[0], "--no-log",
		"--env", fakeagent.EnvVar+"="+fakeagent.ToySession, "-f", "json")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "finished", gjson.Get(out, "result.text").String())
	require.Contains(t, out, `prompt \"hello\", allowed=true`)

	code, out, stderr = call("run", "-a", "toy", "-p", "x", "--binary", argv[0], "--mock", "text", "--dry-run")
	require.Equal(t, 0, code, stderr)
	var dry struct {
		Argv    []string `json:"argv"`
		EnvKeys []string `json:"env_keys"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &dry))
	require.Contains(t, dry.EnvKeys, "TOY_BASE_URL", "the registration's mock wiring points it at the server")
	require.Contains(t, dry.EnvKeys, "HOME")
}
