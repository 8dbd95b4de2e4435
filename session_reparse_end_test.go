package harness_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/logger"
)

// The reparse of a live session's log gives its recorded stream again
// also where harness ended the session (a watchdog, here the idle one):
// the error it ended with comes again, after the agent's last line and
// before the synthetic turn_end and the result (the reparse had none:
// invariant 4 broken); and a prompt the stream cut keeps its
// prompt_truncated (the reparse lost it).
func TestReparseSessionAsRecorded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, mode, prompt string
		want               event.Type
	}{
		{name: "idle-timeout", mode: "hang-prompt", prompt: "one", want: event.TypeError},
		{name: "prompt-truncated", mode: "no-cost", prompt: strings.Repeat("p", event.MaxTextBytes+100), want: event.TypeTurnEnd},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			argv, env := fakeagent.Command("acp-agent", tc.mode)
			logs, b := t.TempDir(), small()
			if tc.mode == "hang-prompt" {
				b.Idle, b.IdleWarning = 300*time.Millisecond, 0
			}
			st := harness.Settings{LogDir: logs}
			task := harness.Task{Agent: "fake-acp", Protocol: harness.ProtocolACP, Command: argv, BaseEnv: env,
				Cwd: t.TempDir(), Model: "m-1", Budgets: &b}
			rec := &liveRec{}
			s, err := st.StartSession(context.Background(), task, harness.SessionOptions{Options: rec.options()})
			require.NoError(t, err)
			require.NoError(t, s.Send(tc.prompt))
			if tc.mode == "hang-prompt" {
				_, err = s.Wait()
				require.ErrorIs(t, err, harness.ErrIdleTimeout)
			} else {
				_, err = s.Close()
				require.NoError(t, err)
			}
			checkLive(t, rec)
			recorded := rec.stream()
			require.NotEmpty(t, rec.find(tc.want), "%s", recorded)
			if tc.mode == "no-cost" {
				require.True(t, rec.find(event.TypeTurnStart)[0].(*event.TurnStart).PromptTruncated)
			}
			m, err := logger.Load(logs, s.RunID())
			require.NoError(t, err)
			reparsed := reparse(t, logs, m, nil)
			want, got := harnesstest.ReparseParts(t, recorded), harnesstest.ReparseParts(t, reparsed)
			require.Equal(t, len(want), len(got))
			for i := range want {
				if want[i] != got[i] {
					t.Errorf("event %d:\nrecorded %.300s\nreparsed %.300s", i+1, want[i], got[i])
				}
			}
		})
	}
}

// A live session that was sent no prompt reparses as a session when its
// record says it was one (SessionRecord.Live), though it has no turns:
// session_start with the session id, then result success, as recorded
// (as a one-prompt run's, no session id, no_terminal_event, error).
func TestReparseSessionWithoutPrompts(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command("acp-agent", "no-cost")
	logs, b := t.TempDir(), small()
	st := harness.Settings{LogDir: logs}
	task := harness.Task{Agent: "fake-acp", Protocol: harness.ProtocolACP, Command: argv, BaseEnv: env,
		Cwd: t.TempDir(), Model: "m-1", Budgets: &b}
	rec := &liveRec{}
	s, err := st.StartSession(context.Background(), task, harness.SessionOptions{Options: rec.options()})
	require.NoError(t, err)
	res, err := s.Close()
	require.NoError(t, err)
	require.Equal(t, event.ResultSuccess, res.Status)
	m, err := logger.Load(logs, s.RunID())
	require.NoError(t, err)
	native, err := logger.ReadFile(logs, m.Run, logger.ExtNative)
	require.NoError(t, err)
	f, err := logger.OpenFile(logs, m.Run, logger.ExtEvents)
	require.NoError(t, err)
	defer f.Close()
	record, err := harness.ReadSessionRecord(f)
	require.NoError(t, err)
	record.Live = true // the caller's word: the log is a session's
	var out strings.Builder
	enc := event.NewEncoder(&out)
	_, err = harness.Parse(context.Background(), strings.NewReader(string(native)), m.Agent, func(ev event.Event) { enc.Encode(ev) },
		harness.ParseOptions{Protocol: harness.LoggedProtocol(m.Protocol, native), Session: record, Model: m.Model, Cwd: m.Cwd})
	require.NoError(t, err)
	require.Equal(t, harnesstest.ReparseParts(t, rec.stream()), harnesstest.ReparseParts(t, []byte(out.String())))
}
