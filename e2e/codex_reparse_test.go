package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/internal/harnesstest"
)

// TestCodexAppServerReparsesAsRecorded: a live session and a one-prompt
// run of codex app-server that create a file, then 'sessions reparse' of
// each log: the recorded stream again, event for event apart from times,
// the run id and what only a process has (docs/events.md, Live
// sessions). The reparse named the file of the diff by its absolute path
// (+++ b/tmp/…/out.txt) where the run's diff, the disk's, named it from
// its cwd (+++ b/out.txt).
func TestCodexAppServerReparsesAsRecorded(t *testing.T) {
	for name, args := range map[string][]string{
		"session": {"session", "--agent", "codex"},
		"run":     {"run", "--agent", "codex", "--protocol", "app-server", "-p", "Follow the script."},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			workdir, tmp := t.TempDir(), t.TempDir()
			env := harnessEnv(t, "NO_COLOR=1", "TMPDIR="+tmp)
			harnessIn := func(stdin string, args ...string) []byte {
				ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, harnessBin, args...)
				cmd.Dir, cmd.Env, cmd.Stdin = workdir, env, strings.NewReader(stdin)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				require.NoError(t, err, "%q: %s", args, stderr.String())
				return out
			}
			live := harnessIn(`{"type":"prompt","text":"Follow the script."}`+"\n", append(args, "--mock", "edit", "--cwd", workdir,
				"--idle-timeout", "90s", "--timeout", "2m", "--kill-grace", "2s", "--linger", "1s")...)
			adaptertest.CheckStream(t, live)
			require.Contains(t, string(live), `"diff":"--- /dev/null\n+++ b/out.txt\n`, "the run's diff: %s", live)
			var metas []struct{ Run string }
			require.NoError(t, json.Unmarshal(harnessIn("", "sessions", "list", "--json"), &metas))
			require.Len(t, metas, 1)
			again := harnessIn("", "sessions", "reparse", metas[0].Run)
			adaptertest.CheckStream(t, again)
			require.Equal(t, harnesstest.ReparseParts(t, live), harnesstest.ReparseParts(t, again))
		})
	}
}
