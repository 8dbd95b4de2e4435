package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/logger"
)

// TestConfigArgsSecretsRedacted: the values of secret flags in an agent's
// config args ("--api-key V", "--token=V") reach the agent as given but
// show as [REDACTED] wherever the argv is shown or recorded: the
// session_start event of the stream and of the log, the meta (what serve's
// GET /api/runs/{run} and 'sessions show' read), and --dry-run's argv,
// which keeps the prompt.
func TestConfigArgsSecretsRedacted(t *testing.T) {
	const key, tok = "hunter2hunter2hunter2", "plainTokenValue0123456789"
	argv, env := fakeagent.Command("echo-env")
	cfg := config.Defaults()
	cfg.Agents = map[string]config.AgentConfig{"claude": {Args: []string{"--api-key", key, "--token=" + tok}}}
	logDir := t.TempDir()
	s := &harness.Settings{Config: &cfg, Environ: env, LogDir: logDir}
	task := harness.Task{Agent: "claude", Prompt: "say hi", Binary: argv[0], Cwd: t.TempDir()}

	c, err := s.Prepare(task)
	require.NoError(t, err)
	require.Subset(t, c.Argv, []string{"--api-key", key, "--token=" + tok}, "the agent gets the values")
	shown := c.ShownArgv()
	require.Subset(t, shown, []string{"--api-key", logger.Redacted, "--token=" + logger.Redacted, "say hi"})
	require.NotContains(t, strings.Join(shown, " "), key)
	require.NotContains(t, strings.Join(shown, " "), tok)

	var start *event.SessionStart
	run, err := s.Start(context.Background(), task, harness.Options{OnEvent: func(ev event.Event) {
		if b, ok := ev.Body.(*event.SessionStart); ok {
			start = b
		}
	}})
	require.NoError(t, err)
	_, err = run.Wait()
	require.NoError(t, err)
	require.NotNil(t, start)
	want := []string{"--api-key", logger.Redacted, "--token=" + logger.Redacted, "<prompt>"}
	require.Subset(t, start.Argv, want, "the stream's session_start")

	path, err := run.SessionLog()
	require.NoError(t, err)
	id := strings.TrimSuffix(filepath.Base(path), logger.ExtEvents)
	m, err := logger.Load(logDir, id)
	require.NoError(t, err)
	require.Subset(t, m.Argv, want, "the meta")
	log, err := os.ReadFile(path)
	require.NoError(t, err)
	first, _, _ := strings.Cut(string(log), "\n")
	var ss struct {
		Type string   `json:"type"`
		Argv []string `json:"argv"`
	}
	require.NoError(t, json.Unmarshal([]byte(first), &ss))
	require.Equal(t, "session_start", ss.Type)
	require.Subset(t, ss.Argv, want, "the log's session_start")
	for _, f := range []string{logger.ExtEvents, logger.ExtMeta} {
		b, err := logger.ReadFile(logDir, id, f)
		require.NoError(t, err)
		require.NotContains(t, string(b), key, f)
		require.NotContains(t, string(b), tok, f)
	}
}
