package harness_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
)

// TestTelemetryArgs: Settings.TelemetryArgs is given the agent's own
// arguments (the configuration's, then the task's) and what it returns is
// what the agent runs with, in their place (before the "--" of the
// prompt, in a live session's command line too): for Prepare, which a dry
// run shows, as for Start. Its error is the task's, and nothing starts.
func TestTelemetryArgs(t *testing.T) {
	t.Parallel()
	cfg := config.Defaults()
	cfg.Agents = map[string]config.AgentConfig{"claude": {Args: []string{"--from-config"}}}
	var mu sync.Mutex
	var infos []harness.RunInfo
	s := &harness.Settings{Config: &cfg, TelemetryArgs: func(ri harness.RunInfo, args []string) ([]string, error) {
		mu.Lock()
		infos = append(infos, ri)
		mu.Unlock()
		if slices.Contains(args, "--refuse") {
			return nil, errors.New("refused")
		}
		return append([]string{"--settings={}"}, args...), nil
	}}
	argv, env := fakeagent.Command("echo-env")
	dir := t.TempDir()
	task := harness.Task{Agent: "claude", Binary: argv[0], BaseEnv: env, Prompt: "go", Cwd: dir, ExtraArgs: []string{"--mine"},
		Env: []string{"MYKEY=v"}}
	want := []string{"--settings={}", "--from-config", "--mine"}

	c, err := s.Prepare(task)
	require.NoError(t, err)
	require.Equal(t, append(want, "--", "go"), c.Argv[len(c.Argv)-5:])
	require.Equal(t, harness.RunInfo{Agent: "claude", Env: task.Env, Cwd: dir}, infos[0])

	live := task
	live.Protocol = harness.ProtocolStreamJSON
	c, err = s.Prepare(live)
	require.NoError(t, err)
	require.Equal(t, append(want, "--permission-prompt-tool=stdio"), c.Argv[len(c.Argv)-4:])
	require.Equal(t, harness.ProtocolStreamJSON, infos[1].Protocol)

	var started []string
	b := small()
	task.Budgets = &b
	r, err := s.Start(context.Background(), task, harness.Options{Observers: []harness.Observer{{OnEvent: func(ev event.Event) {
		if ss, ok := ev.Body.(*event.SessionStart); ok {
			started = ss.Argv
		}
	}}}})
	require.NoError(t, err)
	_, _ = r.Wait()
	require.Equal(t, append(want, "--", "<prompt>"), started[len(started)-5:])

	refused := task
	refused.ExtraArgs = []string{"--refuse"}
	closed := 0
	_, err = s.Start(context.Background(), refused, harness.Options{Observers: []harness.Observer{{Close: func(*event.Result) { closed++ }}}})
	var te *harness.TaskError
	require.ErrorAs(t, err, &te)
	require.EqualError(t, err, "refused")
	require.Equal(t, 1, closed, "a task that cannot run closes its observers")
	_, err = s.Prepare(refused)
	require.ErrorAs(t, err, &te)
}
