package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The runs' permission mode (--permissions, else the configuration's)
// and --max-turns are the plan's: the report records them, and a bench
// resumed with others is refused, exit 2, one line (before, read-only
// and full-access runs resumed and merged as one plan).
func TestBenchPermissionsArePlans(t *testing.T) {
	home := isolate(t)
	user := filepath.Join(home, ".config", "harness", "config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(user), 0o755))
	require.NoError(t, os.WriteFile(user, []byte("permissions = \"read-only\"\n"), 0o644))
	results := filepath.Join(home, "results")
	args := benchArgs(t, "bench-cli-writer", "--agents", "claude", "-p", "write", "--workdir", benchSource(t),
		"--results", results, "--report", "json", "--no-store")
	r := invoke(t, "", append(args, "--max-turns", "5")...)
	require.Equal(t, 0, r.code, r.stderr)
	rep := decodeReport(t, r.stdout)
	require.Equal(t, "read-only", rep.Permissions, "the configuration's, without --permissions")
	require.Equal(t, 5, rep.MaxTurns)

	r = invoke(t, "", append(args, "--max-turns", "5", "--permissions", "full-access")...)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Equal(t, "harness: bench: --results "+results+" holds the runs of this plan with --permissions read-only --max-turns 5, "+
		"not with --permissions full-access --max-turns 5: runs that may do different things do not mix; use another directory\n", r.stderr)

	r = invoke(t, "", append(args, "--max-turns", "5", "--permissions", "read-only")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, decodeReport(t, r.stdout).Runs[0].Resumed, "the same permissions resume")

	r = invoke(t, "", append(args, "--max-turns=-1")...)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Equal(t, "harness: bench: --max-turns -1: want 0 (no limit) or more\n", r.stderr)
}
