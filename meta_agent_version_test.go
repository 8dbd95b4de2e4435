package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/logger"
)

// TestMetaRecordsAgentVersion: the version the agent tells (claude's
// init: claude_code_version) is in the run's final meta, as its
// session_start has it: sessions show and list --json read the meta, and
// so does an export whose log cannot be read.
func TestMetaRecordsAgentVersion(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "claude")
	script := `#!/bin/sh
echo '{"type":"system","subtype":"init","session_id":"s-1","model":"m-1","cwd":"/tmp","claude_code_version":"9.8.7"}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s-1","usage":{"input_tokens":1,"output_tokens":1}}'
`
	require.NoError(t, execfile.Write(bin, []byte(script), 0o700))
	logs := t.TempDir()
	st := harness.Settings{LogDir: logs}
	b := small()
	run, err := st.Start(context.Background(), harness.Task{Agent: "claude", Prompt: "x", Binary: bin,
		Cwd: t.TempDir(), Budgets: &b}, harness.Options{})
	require.NoError(t, err)
	_, err = run.Wait()
	require.NoError(t, err)

	data, err := logger.ReadFile(logs, run.RunID(), logger.ExtEvents)
	require.NoError(t, err)
	require.Contains(t, string(data), `"agent_version":"9.8.7"`, "the session_start says it")
	require.NoError(t, os.Remove(logger.Path(logs, run.RunID(), logger.ExtEvents))) // the meta alone says it
	m, err := logger.Load(logs, run.RunID())
	require.NoError(t, err)
	require.Equal(t, "9.8.7", m.AgentVersion)
	require.Equal(t, "success", m.Status)
}
