package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/execfile"
)

// TestStderrDrainedBehindStalledSink: with the session log on (the
// default) and no native callback of the caller's, the agent's stderr is
// drained while the caller's sink is stalled (docs/supervision.md: both
// pipes are drained for the whole life of the process). The session log
// writes its native lines under its own lock, not the stream's, which the
// stalled sink holds: the agent writes 1 MiB to stderr (16 pipe buffers)
// and then marks that it got through, while the sink still waits.
func TestStderrDrainedBehindStalledSink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mark := filepath.Join(dir, "through")
	agent := filepath.Join(dir, "agent.sh")
	require.NoError(t, execfile.Write(agent, []byte(`#!/bin/sh
echo '{"type":"system","subtype":"init","session_id":"s1","model":"m","cwd":"/tmp","tools":[]}'
head -c 1048576 /dev/zero | tr '\0' 'e' | fold -w 1000 >&2
touch `+mark+`
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s1","num_turns":1,"duration_ms":12,"usage":{"input_tokens":5,"output_tokens":3}}'
`), 0o755))
	release := make(chan struct{})
	stalled := make(chan struct{}, 1)
	b := small()
	run, err := (&harness.Settings{LogDir: filepath.Join(dir, "logs")}).Start(context.Background(),
		harness.Task{Agent: "claude", Binary: agent, Prompt: "x", Cwd: dir, Budgets: &b},
		harness.Options{OnEvent: func(ev event.Event) {
			if ev.Type == event.TypeSessionStart {
				select {
				case stalled <- struct{}{}:
				default:
				}
				<-release
			}
		}})
	require.NoError(t, err)
	<-stalled
	require.Eventually(t, func() bool { _, err := os.Stat(mark); return err == nil }, 10*time.Second, 5*time.Millisecond,
		"the agent's stderr waited for the stalled sink")
	close(release)
	res, err := run.Wait()
	require.NoError(t, err)
	require.Equal(t, event.ResultSuccess, res.Status)
}
