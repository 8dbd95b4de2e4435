package harness_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/logger"
)

// TestACPClientResumes: a task with Resume over ACP continues the agent's
// session by session/resume where the agent offers it, else by
// session/load, whose replay of the conversation so far is not the
// run's; session_start names the session continued, and the prompt runs
// in it. An id the agent does not know fails with the agent's error (a
// caller may start a new conversation then: the agent said why), and an
// agent that offers neither ends the run before any prompt, bad_config.
func TestACPClientResumes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mode, resume, fatal, message string }{
		{mode: "resumable", resume: fakeagent.ACPResumable},
		{mode: "loadable", resume: fakeagent.ACPResumable},
		{mode: "resumable", resume: "gone", fatal: event.ErrAgentError,
			message: "session/resume failed: Resource not found: session gone"},
		{mode: "loadable", resume: "gone", fatal: event.ErrAgentError,
			message: "session/load failed: Resource not found: session gone"},
		{mode: "normal", resume: fakeagent.ACPResumable, fatal: event.ErrBadConfig,
			message: "acp: --resume: the agent offers neither session/resume nor session/load (its agentCapabilities)"},
	} {
		t.Run(tc.mode+"-"+tc.resume, func(t *testing.T) {
			t.Parallel()
			argv, env := fakeagent.Command("acp-agent", tc.mode)
			dir := t.TempDir()
			b := small()
			fr := runTask(t, harness.Task{Agent: "fake-acp", Protocol: harness.ProtocolACP, Command: argv, BaseEnv: env,
				Prompt: "write the file", Cwd: dir, Resume: tc.resume, Budgets: &b}, nil)
			require.NoError(t, event.Check(fr.events))
			require.False(t, strings.Contains(string(fr.ndjson), fakeagent.ACPHistory), "the conversation replayed: %s", fr.ndjson)
			_, statErr := os.Stat(filepath.Join(dir, fakeagent.ACPFile))
			if tc.fatal != "" {
				require.Equal(t, event.ResultError, fr.result.Status, "%s", fr.ndjson)
				var fatal *event.Error
				for _, b := range fr.find(event.TypeError) {
					if e := b.(*event.Error); e.Fatal {
						fatal = e
					}
				}
				require.NotNil(t, fatal, "%s", fr.ndjson)
				require.Equal(t, tc.fatal, fatal.Code)
				require.Equal(t, tc.message, fatal.Message)
				require.True(t, os.IsNotExist(statErr), "nothing was prompted")
				return
			}
			require.NoError(t, fr.err)
			require.Equal(t, event.ResultSuccess, fr.result.Status, "%s", fr.ndjson)
			require.Equal(t, tc.resume, fr.events[0].Body.(*event.SessionStart).SessionID)
			require.Equal(t, tc.resume, fr.result.SessionID)
			require.NoError(t, statErr, "the prompt ran in the session continued")
			require.Len(t, fr.find(event.TypeToolStart), 2, "the edit and the plan, none of the history: %s", fr.ndjson)
		})
	}
}

// TestACPResumedCaptureAlone: the capture of a run that continued a
// session by session/load, parsed alone (harness parse --protocol acp:
// the session continued is not known), maps none of the replayed
// conversation, and counts the opening's answer, which names no session,
// unparsed; with the log's meta (sessions reparse) it names the session.
func TestACPResumedCaptureAlone(t *testing.T) {
	t.Parallel()
	argv, env := fakeagent.Command("acp-agent", "loadable")
	logs, b := t.TempDir(), small()
	st := harness.Settings{LogDir: logs}
	r, err := st.Start(context.Background(), harness.Task{Agent: "fake-acp", Protocol: harness.ProtocolACP, Command: argv,
		BaseEnv: env, Prompt: "write it", Cwd: t.TempDir(), Resume: fakeagent.ACPResumable, Budgets: &b}, harness.Options{})
	require.NoError(t, err)
	_, err = r.Wait()
	require.NoError(t, err)
	native, err := logger.ReadFile(logs, r.RunID(), logger.ExtNative)
	require.NoError(t, err)
	require.Contains(t, string(native), fakeagent.ACPHistory, "the agent replayed the conversation")

	parse := func(o harness.ParseOptions) ([]byte, *event.Result) {
		var out bytes.Buffer
		enc := event.NewEncoder(&out)
		o.Protocol = harness.ProtocolACP
		res, err := harness.Parse(context.Background(), bytes.NewReader(native), "fake-acp", func(ev event.Event) { enc.Encode(ev) }, o)
		require.NoError(t, err)
		require.NoError(t, event.CheckNDJSON(out.Bytes()), "%s", out.Bytes())
		return out.Bytes(), res
	}
	alone, res := parse(harness.ParseOptions{})
	require.NotContains(t, string(alone), fakeagent.ACPHistory)
	require.Equal(t, int64(1), res.Stats.UnparsedLines, "the opening's answer: %s", alone)
	require.Equal(t, event.ResultSuccess, res.Status)

	known, res := parse(harness.ParseOptions{Resume: fakeagent.ACPResumable})
	require.NotContains(t, string(known), fakeagent.ACPHistory)
	require.Zero(t, res.Stats.UnparsedLines)
	evs, err := event.ReadAll(bytes.NewReader(known))
	require.NoError(t, err)
	require.Equal(t, fakeagent.ACPResumable, evs[0].Body.(*event.SessionStart).SessionID)
}
