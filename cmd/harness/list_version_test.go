package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/execfile"
)

// TestListShowsOnlyAVersion: 'harness list' shows what a CLI's --version
// printed only when it can be a version, cut as check and conform cut
// it: a CLI that failed (its error text), printed no digit (a usage
// text) or printed a file was shown whole as its version.
func TestListShowsOnlyAVersion(t *testing.T) {
	for name, c := range map[string]struct{ script, want string }{
		"a-version": {"echo '9.9.9 (Claude Code)'", "9.9.9 (Claude Code)"},
		"failed":    {"echo 'Error: Cannot find module cli.js 1.2' >&2; exit 1", ""},
		"no-digit":  {"echo 'usage: claude [options]'", ""},
		"binary":    {"head -c 3000 /dev/urandom", ""},
		"long":      {"echo '1.0 " + strings.Repeat("x", 200) + "'", "1.0 " + strings.Repeat("x", versionMax-5) + "…"},
	} {
		t.Run(name, func(t *testing.T) {
			home := isolate(t)
			t.Setenv("PATH", "/usr/bin:/bin") // head, no agent
			t.Setenv("HARNESS_AGENTS_DIR", t.TempDir())
			bin := filepath.Join(home, "tools", "my-claude")
			require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
			require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\n"+c.script+"\n"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(home, "harness.toml"), []byte("[agents.claude]\nbinary = \"tools/my-claude\"\n"), 0o644))
			r := invoke(t, "", "list", "--json")
			require.Equal(t, 0, r.code, r.stderr)
			var rows []agentStatus
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
			for _, row := range rows {
				if row.ID == "claude" {
					require.True(t, row.Installed)
					require.Equal(t, c.want, row.Version)
					return
				}
			}
			t.Fatal("no claude row")
		})
	}
}
