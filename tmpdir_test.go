package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters/claude"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/registry"
)

// registerLitterer registers "litterer": claude's driver (the fake agent
// speaks claude's stream) on an agent that litters its temporary
// directory at every start, as OpenCode does.
var registerLitterer = sync.OnceValue(func() error {
	return harness.Register(harness.Agent{
		Info:   registry.AgentInfo{ID: "litterer", Display: "Litterer", Binaries: []string{"litterer"}},
		Driver: claude.Agent.Driver, PrivateTmp: true,
	})
})

// litterRun runs the litter-tmp fake as agent with TMPDIR=parent in its
// base environment and env in the task's, and returns its text and
// result.
func litterRun(t *testing.T, agent, binary, parent string, env ...string) (string, *event.Result) {
	t.Helper()
	_, base := fakeagent.Command("litter-tmp")
	var text strings.Builder
	run, err := harness.Start(context.Background(), harness.Task{Agent: agent, Prompt: "x", Binary: binary,
		Cwd: t.TempDir(), BaseEnv: append(base, "TMPDIR="+parent), Env: env}, harness.Options{
		OnEvent: func(ev event.Event) {
			if m, ok := ev.Body.(*event.Message); ok {
				text.WriteString(m.Text)
			}
		},
	})
	require.NoError(t, err)
	res, _ := run.Wait()
	return text.String(), res
}

// TestPrivateTmp: an agent that leaves files in its temporary directory
// at every start (Agent.PrivateTmp) gets a directory of its own under the
// user's TMPDIR, as TMPDIR, TMP and TEMP, locked while the run lasts,
// and it is gone when Wait returns, whatever the agent left in it; where
// the run fails to spawn, too; one a killed harness left is removed by
// the next run. A TMPDIR the task sets is the agent's, and kept. An agent
// without PrivateTmp keeps the user's.
func TestPrivateTmp(t *testing.T) {
	require.NoError(t, registerLitterer())
	exe, _ := fakeagent.Command("litter-tmp")
	parent := t.TempDir()

	text, res := litterRun(t, "litterer", exe[0], parent)
	require.Equal(t, event.ResultSuccess, res.Status, text)
	m := tmpVars.FindStringSubmatch(text)
	require.NotNil(t, m, text)
	require.Equal(t, parent, filepath.Dir(m[1]), "under the user's TMPDIR")
	require.True(t, strings.HasPrefix(filepath.Base(m[1]), "harness-tmp-"), m[1])
	require.Equal(t, []string{m[1], m[1]}, []string{m[2], m[3]}, "TMP and TEMP too")
	require.Contains(t, text, "TMPDIR_LOCKED=yes", "harness holds its lock while the run lasts")
	requireEmptyDir(t, parent)

	t.Run("spawn failure", func(t *testing.T) {
		notExec := filepath.Join(t.TempDir(), "litterer") // found, but exec fails
		require.NoError(t, execfile.Write(notExec, []byte("\x00\x01 not a program"), 0o700))
		_, res := litterRun(t, "litterer", notExec, parent)
		require.Equal(t, event.ResultError, res.Status)
		requireEmptyDir(t, parent)
	})
	t.Run("the task's TMPDIR", func(t *testing.T) {
		own := t.TempDir()
		text, res := litterRun(t, "litterer", exe[0], parent, "TMPDIR="+own)
		require.Equal(t, event.ResultSuccess, res.Status, text)
		require.Contains(t, text, "TMPDIR="+own+" ")
		require.FileExists(t, filepath.Join(own, fakeagent.LitterName))
		requireEmptyDir(t, parent)
	})
	t.Run("a relative TMPDIR", func(t *testing.T) {
		base := t.TempDir()
		require.NoError(t, os.Mkdir(filepath.Join(base, "rel"), 0o700))
		t.Chdir(base) // harness's; the agent runs in its own work directory
		text, res := litterRun(t, "litterer", exe[0], "rel")
		require.Equal(t, event.ResultSuccess, res.Status, text)
		m := tmpVars.FindStringSubmatch(text)
		require.NotNil(t, m, text)
		require.Equal(t, filepath.Join(base, "rel"), filepath.Dir(m[1]), "made absolute")
		requireEmptyDir(t, filepath.Join(base, "rel"))
	})
	t.Run("left by a killed harness", func(t *testing.T) {
		// The cases are internal/privtmp's; here, that a run sweeps.
		parent := t.TempDir()
		stale := filepath.Join(parent, "harness-tmp-stale")
		require.NoError(t, os.Mkdir(stale, 0o700))
		old := time.Now().Add(-2 * time.Minute)
		require.NoError(t, os.Chtimes(stale, old, old))
		text, res := litterRun(t, "litterer", exe[0], parent)
		require.Equal(t, event.ResultSuccess, res.Status, text)
		requireEmptyDir(t, parent)
	})
	t.Run("an agent without it", func(t *testing.T) {
		text, res := litterRun(t, "claude", exe[0], parent)
		require.Equal(t, event.ResultSuccess, res.Status, text)
		require.Contains(t, text, "TMPDIR="+parent+" ")
		require.Contains(t, text, "TMPDIR_LOCKED=no")
		require.FileExists(t, filepath.Join(parent, fakeagent.LitterName))
	})
}

// tmpVars finds what litter-tmp prints of its temporary directory.
var tmpVars = regexp.MustCompile(`TMPDIR=(\S+) TMP=(\S+) TEMP=(\S+)`)

func requireEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.Empty(t, names, "left in %s", dir)
}
