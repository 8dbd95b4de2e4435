package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/logger"
)

// TestSessionsListDamagedMeta: list showed a run whose meta does not
// decode, rebuilt from its event log, like any other. It now says so in
// one warning line on stderr per such run, as show does, and its stdout
// (table or JSON) stays the list; a run with no meta file at all, or an
// intact one, gets no warning.
func TestSessionsListDamagedMeta(t *testing.T) {
	home := isolate(t)
	dir := filepath.Join(home, "store", "sessions")
	for _, id := range []string{"run_ok", "run_garbled", "run_nometa"} {
		s, err := logger.Open(dir, id, logger.Meta{Agent: "claude"})
		require.NoError(t, err)
		require.NoError(t, s.Close(logger.Meta{Status: "success"}))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run_garbled"+logger.ExtMeta), []byte("{garbage"), 0o600))
	require.NoError(t, os.Remove(filepath.Join(dir, "run_nometa"+logger.ExtMeta)))

	for _, args := range [][]string{{"list"}, {"list", "--json"}} {
		r := invoke(t, "", append([]string{"sessions", "--dir", dir}, args...)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		require.Len(t, lines, 1, "%v: %q", args, r.stderr)
		require.Regexp(t, `^harness: warning: sessions list: run run_garbled: its meta .*run_garbled\.meta\.json does not decode \(.*\): listed is a meta rebuilt from its event log$`, lines[0])
		require.NotContains(t, r.stdout, "warning", "%v", args)
		for _, id := range []string{"run_ok", "run_garbled", "run_nometa"} {
			require.Contains(t, r.stdout, id, "%v", args)
		}
		if len(args) == 2 {
			var list []logger.Meta
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &list), r.stdout)
			require.Len(t, list, 3)
		}
	}
}
