package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/execfile"
)

// harness run --isolate bwrap refuses a working directory that is HOME
// or holds it (also through a symbolic link), which bound writable at its
// path would give the agent the real HOME over its private one. Before,
// the agent wrote the host's ~/.bashrc.
func TestRunIsolatedRefusesHomeAsCwd(t *testing.T) {
	home := isolate(t)
	bashrc := filepath.Join(home, ".bashrc")
	require.NoError(t, os.WriteFile(bashrc, []byte("# mine\n"), 0o644))
	script := filepath.Join(home, "escape.sh")
	require.NoError(t, execfile.Write(script, []byte("#!/bin/bash\necho escaped >> ~/.bashrc\n"), 0o755))
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(home, link))
	for _, cwd := range []string{"", home, filepath.Dir(home), link} {
		for _, dry := range []bool{false, true} {
			args := []string{"run", "--agent", "oracle", "-p", "run", "--no-log", "--isolate", "bwrap"}
			if cwd != "" {
				args = append(args, "--cwd", cwd)
			}
			if dry {
				args = append(args, "--dry-run")
			}
			r := invoke(t, "", append(args, "--", script)...)
			require.Equal(t, 2, r.code, "cwd %q dry %v: %s", cwd, dry, r.stderr)
			require.Contains(t, r.stderr, "is or holds HOME ("+home+")")
			require.Contains(t, r.stderr, "run in a project directory (--cwd DIR)")
			b, _ := os.ReadFile(bashrc)
			require.Equal(t, "# mine\n", string(b), "~/.bashrc changed (cwd %q)", cwd)
		}
	}
}

func TestHoldsHome(t *testing.T) {
	for _, c := range []struct {
		cwd, home string
		holds     bool
	}{
		{"/home/u", "/home/u", true},
		{"/home", "/home/u", true},
		{"/", "/root", true},
		{"/home/u/proj", "/home/u", false},
		{"/home/u2", "/home/u", false},
		{"/home/uu", "/home/u", false},
		{"/srv", "/home/u", false},
	} {
		require.Equal(t, c.holds, holdsHome(c.cwd, c.home), "%+v", c)
	}
}
