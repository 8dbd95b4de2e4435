package harness_test

import (
	"bytes"
	"cmp"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/logger"
)

// TestReparseAsRecorded: the session log of a run of the fake ACP agent,
// re-normalized as 'sessions reparse' does it (the meta's model, cwd and
// permissions; the recorded stream's turns; usage priced as the run
// priced it), gives the recorded stream again: the same events, with the
// same session_start cwd and model, apart from times, the run id and what
// only a process has. Read-only and ask make no session/set_mode with
// the fake (its mode is "default"), so the prompt is request 3, which a
// replay as full-access took for the answer to its own set_mode; the
// edit read-only refused ends denied; a permission request has the
// session's deadline; a turn the agent gave up ends error. A log written
// before harness recorded the permissions reads as full-access. A
// full-access run names the file of its diff from its directory, as the
// live run did (the reparse named it by its absolute path), and a run
// harness ended itself (an agent that gave its turn up unasked, an idle
// timeout) ends with harness's error again (the reparse had none). A run
// that continued the agent's session (session/resume, session/load: the
// answer names no session, and load replays the conversation first)
// names it again, without the replay.
func TestReparseAsRecorded(t *testing.T) {
	t.Parallel()
	// Priced for the run's model only: a reparse that lost it prices
	// nothing.
	estimate := func(model string, u event.Usage) (float64, bool) {
		return float64(u.InputTokens) / 1000, model == "m-1"
	}
	for _, tc := range []struct {
		name, mode, permissions string
		live                    bool // a live session of two turns, else a one-prompt run
		answer                  bool // its permission requests answered: deny, then allow
		oldLog                  bool // its meta without the permissions, as harness wrote before them
		resume                  bool // it continued the agent's session (Task.Resume)
		want                    event.Type
	}{
		{name: "session-read-only", mode: "no-cost", permissions: harness.ReadOnly, live: true, want: event.TypeToolEnd},
		{name: "session-ask", mode: "no-cost", permissions: harness.Ask, live: true, answer: true, want: event.TypePermissionRequest},
		{name: "session-ask-unasked", mode: "give-up", permissions: harness.Ask, live: true, want: event.TypeTurnEnd},
		{name: "session-full-access", mode: "no-cost", live: true, want: event.TypeUsage},
		{name: "session-full-access-old-log", mode: "no-cost", live: true, oldLog: true, want: event.TypeUsage},
		{name: "run-read-only", mode: "no-cost", permissions: harness.ReadOnly, want: event.TypeToolEnd},
		{name: "run-full-access", mode: "no-cost", want: event.TypeToolEnd},
		{name: "run-give-up", mode: "give-up", want: event.TypeError},
		{name: "run-idle-timeout", mode: "hang-prompt", want: event.TypeError},
		{name: "run-resume", mode: "resumable", resume: true, want: event.TypeToolEnd},
		{name: "run-load", mode: "loadable", resume: true, want: event.TypeToolEnd},
		{name: "run-load-read-only", mode: "loadable", permissions: harness.ReadOnly, resume: true, want: event.TypeToolEnd},
		{name: "session-load", mode: "loadable", live: true, resume: true, want: event.TypeUsage},
		{name: "session-resume-ask", mode: "resumable", permissions: harness.Ask, live: true, answer: true, resume: true, want: event.TypePermissionRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			argv, env := fakeagent.Command("acp-agent", tc.mode)
			logs, b := t.TempDir(), replayBudgets()
			if tc.mode == "hang-prompt" {
				// No idle warning: a warning of the watchdog's is the
				// process's, not in the log's lines.
				b.Idle, b.IdleWarning = 300*time.Millisecond, 0
			}
			st := harness.Settings{LogDir: logs}
			task := harness.Task{Agent: "fake-acp", Protocol: harness.ProtocolACP, Command: argv, BaseEnv: env,
				Cwd: t.TempDir(), Model: "m-1", Permissions: tc.permissions, Budgets: &b}
			if tc.resume {
				task.Resume = fakeagent.ACPResumable
			}
			rec := &liveRec{}
			o := rec.options()
			o.EstimateCost = estimate
			var run string
			if tc.live {
				s, err := st.StartSession(context.Background(), task, harness.SessionOptions{Options: o})
				require.NoError(t, err)
				if tc.answer {
					require.NoError(t, s.Send("one"))
					denyThenAllow(t, s, rec)
				} else {
					sendTwo(t, s)
				}
				_, err = s.Close()
				require.NoError(t, err)
				run = s.RunID()
			} else {
				task.Prompt = "write it"
				r, err := st.Start(context.Background(), task, o)
				require.NoError(t, err)
				_, err = r.Wait()
				switch tc.mode {
				case "give-up":
					require.ErrorIs(t, err, harness.ErrAgentFailed, "the agent gave its turn up unasked")
				case "hang-prompt":
					require.ErrorIs(t, err, harness.ErrIdleTimeout)
				default:
					require.NoError(t, err)
				}
				run = r.RunID()
			}
			checkLive(t, rec)
			recorded := rec.stream()
			require.NotEmpty(t, rec.find(tc.want), "%s", recorded)
			if tc.permissions == harness.ReadOnly {
				end := rec.find(event.TypeToolEnd)[0].(*event.ToolEnd)
				require.Equal(t, event.StatusDenied, end.Status, "%s", recorded)
			}
			if tc.mode == "no-cost" {
				res := rec.find(event.TypeResult)[0].(*event.Result)
				require.True(t, res.CostEstimated, "the run priced its usage\n%s", recorded)
			}

			m, err := logger.Load(logs, run)
			require.NoError(t, err)
			require.Equal(t, cmp.Or(tc.permissions, harness.FullAccess), m.Permissions)
			require.Equal(t, task.Resume, m.Resume)
			if tc.resume {
				require.NotContains(t, string(recorded), fakeagent.ACPHistory, "session/load's replay is not the run's")
				require.Equal(t, fakeagent.ACPResumable, rec.find(event.TypeSessionStart)[0].(*event.SessionStart).SessionID)
			}
			if tc.oldLog {
				m.Permissions = ""
			}
			reparsed := reparse(t, logs, m, estimate)
			require.Equal(t, harnesstest.ReparseParts(t, recorded), harnesstest.ReparseParts(t, reparsed))
			require.Equal(t, sessionStart(t, recorded), sessionStart(t, reparsed), "cwd and model as recorded")
		})
	}
}

// reparse re-normalizes the logged run m of dir as 'sessions reparse'
// does.
// replayBudgets are small() with a linger of seconds: a fake (a -race
// test binary) slow to exit on a loaded machine gets a
// lingered_after_result warning, the process's, which no reparse of its
// lines can give (seen at small()'s 100 ms).
func replayBudgets() harness.Budgets {
	b := small()
	b.Linger = 10 * time.Second
	return b
}

func reparse(t *testing.T, dir string, m logger.Meta, estimate func(string, event.Usage) (float64, bool)) []byte {
	t.Helper()
	native, err := logger.ReadFile(dir, m.Run, logger.ExtNative)
	require.NoError(t, err)
	f, err := logger.OpenFile(dir, m.Run, logger.ExtEvents)
	require.NoError(t, err)
	defer f.Close()
	rec, err := harness.ReadSessionRecord(f)
	require.NoError(t, err)
	var out bytes.Buffer
	enc := event.NewEncoder(&out)
	_, err = harness.Parse(context.Background(), bytes.NewReader(native), m.Agent, func(ev event.Event) { enc.Encode(ev) },
		harness.ParseOptions{Protocol: harness.LoggedProtocol(m.Protocol, native), Session: rec,
			Model: m.Model, Cwd: m.Cwd, Permissions: m.Permissions, Resume: m.Resume, EstimateCost: estimate})
	require.NoError(t, err)
	require.NoError(t, event.CheckNDJSON(out.Bytes()), "%s", out.Bytes())
	return out.Bytes()
}

// sessionStart is the cwd and model of a stream's session_start.
func sessionStart(t *testing.T, stream []byte) [2]string {
	t.Helper()
	evs, err := event.ReadAll(bytes.NewReader(stream))
	require.NoError(t, err)
	ss := evs[0].Body.(*event.SessionStart)
	return [2]string{ss.Cwd, ss.Model}
}
