package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEmptyFlagValueIsRefused: a flag given an empty value where "" is
// its "not given" is refused (one line, exit 2, nothing run), not taken
// as absent. Before, --mock "" (a scenario variable left unset) ran the
// real agent against its real service, and --permissions "" gave a run
// meant to be read-only the default, full access.
func TestEmptyFlagValueIsRefused(t *testing.T) {
	mock := `harness: --mock: an empty value: name a scenario, or leave --mock out to run the agent's own model` + "\n"
	permissions := `harness: --permissions must be one of "full-access","read-only" but got ""` + "\n"
	for _, tc := range []struct {
		args   string
		stderr string
	}{
		{"run --agent nop --mock= -p x --dry-run", mock},
		{"run --agent nop --mock text --mock= -p x --dry-run", mock},
		{"session --agent nop --mock=", mock},
		{"bench --agents nop --mock= -p x --no-store", mock},
		{"mcp --mock=", mock},
		{"acp --agent nop --mock=", mock},
		{"run --agent nop --permissions= -p x --dry-run", permissions},
		{"bench --agents nop --permissions= -p x --no-store", permissions},
		{"acp --agent nop --permissions=", permissions},
	} {
		t.Run(tc.args, func(t *testing.T) {
			isolate(t)
			r := invoke(t, "", strings.Fields(tc.args)...)
			require.Equal(t, exitUsage, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			require.Equal(t, tc.stderr, r.stderr)
			require.Empty(t, r.stdout)
		})
	}
	// Given a value, or not given, the flags are as before.
	isolate(t)
	r := invoke(t, "", "run", "--agent", "nop", "--mock", "", "--mock", "text", "-p", "x", "--dry-run")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = invoke(t, "", "run", "--agent", "nop", "-p", "x", "--dry-run")
	require.Equal(t, exitOK, r.code, r.stderr)
}
