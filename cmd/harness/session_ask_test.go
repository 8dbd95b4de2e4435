package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
)

// TestSessionCommandDeniesAsksAfterEndOfInput: once stdin has ended (an
// end command, or EOF), no answer command can come: a permission request
// waiting, or made later, is denied at once — the call ends denied, and
// stderr says why — not after --ask-timeout. It used to wait the whole
// --ask-timeout (5 min by default) for each.
func TestSessionCommandDeniesAsksAfterEndOfInput(t *testing.T) {
	for name, stdin := range map[string]string{
		"eof": `{"type":"prompt","text":"one"}` + "\n",
		"end": `{"type":"prompt","text":"one"}` + "\n" + `{"type":"end"}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			isolate(t)
			argv, _ := fakeagent.Command(fakeagent.ClaudeStream)
			cwd := t.TempDir()
			start := time.Now()
			r := invoke(t, stdin, "session", "--agent", "claude", "--binary", argv[0], "--cwd", cwd, "--no-log",
				"--env", fakeagent.EnvVar+"="+fakeagent.ClaudeStream, "--env", fakeagent.ClaudeStreamMode+"=ask",
				"--permissions", "ask", "--ask-timeout", "60s", "--idle-timeout", "0", "--timeout", "120s")
			require.Less(t, time.Since(start), 30*time.Second, "denied at once, not at --ask-timeout: %s", r.stderr)
			require.Equal(t, 0, r.code, r.stderr)
			require.Contains(t, r.stderr, `permission request "call-1" denied: the input has ended`)
			evs := sessionStream(t, r)
			require.Len(t, harnesstest.Bodies(evs, event.TypePermissionRequest), 1)
			ends := harnesstest.Bodies(evs, event.TypeToolEnd)
			require.Len(t, ends, 1, r.stdout)
			require.Equal(t, event.StatusDenied, ends[0].(*event.ToolEnd).Status, r.stdout)
			_, err := os.Stat(filepath.Join(cwd, "ask-1.txt"))
			require.True(t, os.IsNotExist(err), "the denied call did not run")
			require.False(t, strings.Contains(r.stderr, "no permission request"), r.stderr)
		})
	}
}
