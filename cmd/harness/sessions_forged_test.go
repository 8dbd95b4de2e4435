package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/logger"
)

// TestSessionsForgedMeta: a meta whose "run" names files outside the
// store ("../victim/data") is no meta of its run: prune removed the
// outside files, reparse and export --format atif read them, and list
// showed "../victim/data" as a run. Now each acts on the run its files
// name, and the outside files are neither read nor removed.
func TestSessionsForgedMeta(t *testing.T) {
	home := isolate(t)
	dir := filepath.Join(home, "store", "sessions")
	victim := filepath.Join(home, "store", "victim", "data")
	require.NoError(t, os.MkdirAll(filepath.Dir(victim), 0o700))
	secret := `{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"victim secret"}]}}` + "\n"
	for _, ext := range []string{logger.ExtEvents, logger.ExtNative, logger.ExtMeta} {
		require.NoError(t, os.WriteFile(victim+ext, []byte(secret), 0o600))
	}
	s, err := logger.Open(dir, "run_real", logger.Meta{Agent: "claude"})
	require.NoError(t, err)
	require.NoError(t, s.Close(logger.Meta{Status: "success"}))
	old := time.Now().Add(-1000 * time.Hour)
	meta := `{"run":"../victim/data","agent":"claude","status":"success","start":"` + old.Format(time.RFC3339) + `","end":"` + old.Format(time.RFC3339) + `"}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run_forged"+logger.ExtMeta), []byte(meta), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run_forged"+logger.ExtNative), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run_forged"+logger.ExtEvents), nil, 0o600))

	r := invoke(t, "", "sessions", "--dir", dir, "list", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var list []logger.Meta
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list), r.stdout)
	var ids []string
	for _, m := range list {
		ids = append(ids, m.Run)
	}
	require.ElementsMatch(t, []string{"run_real", "run_forged"}, ids)

	for _, args := range [][]string{{"reparse", "run_forged"}, {"export", "--format", "atif", "run_forged"}} {
		r := invoke(t, "", append([]string{"sessions", "--dir", dir}, args...)...)
		require.NotContains(t, r.stdout+r.stderr, "victim", "%v", args)
	}

	r = invoke(t, "", "sessions", "--dir", dir, "prune", "--older-than", "720h")
	require.Equal(t, exitOK, r.code, r.stderr)
	for _, ext := range []string{logger.ExtEvents, logger.ExtNative, logger.ExtMeta} {
		_, err := os.Stat(victim + ext)
		require.NoError(t, err, "outside the store: %s", ext)
		_, err = os.Stat(filepath.Join(dir, "run_real"+ext))
		require.NoError(t, err, "a fresh run: %s", ext)
	}
	require.False(t, strings.Contains(r.stdout, "victim"), r.stdout)
}
